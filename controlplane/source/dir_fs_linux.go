package source

import "golang.org/x/sys/unix"

// shortReadIsEnd says whether a read of a regular file on the filesystem holding dir
// returns fewer bytes than it asked for only at the end of the file. That is so on the
// filesystems that serve reads from the page cache (ext4, XFS, Btrfs, F2FS, tmpfs,
// ramfs, overlayfs): the kernel copies until the buffer is full or the file ends.
// Files on any other filesystem (FUSE, network filesystems, anything unknown) are read
// until a read returns nothing, which costs one more system call per file.
func shortReadIsEnd(dir string) bool {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return false
	}
	switch uint32(st.Type) {
	case unix.EXT4_SUPER_MAGIC, unix.XFS_SUPER_MAGIC, unix.BTRFS_SUPER_MAGIC, unix.F2FS_SUPER_MAGIC,
		unix.TMPFS_MAGIC, unix.RAMFS_MAGIC, unix.OVERLAYFS_SUPER_MAGIC:
		return true
	}
	return false
}
