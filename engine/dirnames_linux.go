package engine

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// dirNames reads the names in the directory open as fd, which stays open,
// with the system call alone: no *os.File, whose making asks for the
// descriptor's flags, once per directory of every package a cached run
// walks.
func dirNames(fd int) ([]string, error) {
	var names []string
	buf := make([]byte, 8<<10)
	for {
		n, err := unix.Getdents(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n <= 0 {
			return names, nil
		}
		_, _, names = syscall.ParseDirent(buf[:n], -1, names)
	}
}

// localFS reports whether dir is on a file system whose stat alone tells
// a changed file or directory from an unchanged one: a local one, whose
// times the kernel sets as it writes. A network or FUSE file system may
// answer from attributes it cached, or with the times of another host's
// clock, so there the cache reads what it could otherwise trust a stat
// for (listing, manifestDigest).
func localFS(dir string) bool {
	var st unix.Statfs_t
	if unix.Statfs(dir, &st) != nil {
		return false
	}
	switch uint32(st.Type) {
	case unix.EXT4_SUPER_MAGIC, unix.XFS_SUPER_MAGIC, unix.BTRFS_SUPER_MAGIC,
		unix.F2FS_SUPER_MAGIC, unix.BCACHEFS_SUPER_MAGIC, unix.TMPFS_MAGIC,
		unix.RAMFS_MAGIC, unix.OVERLAYFS_SUPER_MAGIC,
		0x2fc12fc1: // ZFS
		return true
	}
	return false
}
