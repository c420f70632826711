package rawsys

import "syscall"

const sysFstatat = syscall.SYS_NEWFSTATAT
