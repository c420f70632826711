package rawsys

// What package syscall does not name of openat(2) and fstatat(2).
const (
	AtFDCWD           = -0x64 // the working directory, as dirfd
	AtSymlinkNoFollow = 0x100 // fstatat: a symlink itself, not its target
)
