package project

import "syscall"

// syscallNotDir is what stat says of a/dalo.toml when a is a file.
const syscallNotDir = syscall.ENOTDIR
