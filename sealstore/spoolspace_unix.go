//go:build linux || darwin

package sealstore

import "syscall"

// freeSpace is the space of dir's filesystem left to an unprivileged
// writer (statfs f_bavail): the root-only reserve of ext4 is not counted.
func freeSpace(dir string) (int64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return int64(st.Bavail) * int64(st.Bsize), nil
}
