package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// lockFile is the file in --data-dir that one s3seal process at a time
// holds an exclusive flock on: the embedded store and the development key
// live in the data dir, and two processes writing them at once would
// corrupt them.
const lockFile = "lock"

// lockDataDir takes the lock of the data dir dir, or says which process
// to stop when another holds it. The lock goes with the process (the
// kernel releases it at exit, even after a crash); unlock releases it
// earlier.
func lockDataDir(dir string) (unlock func(), err error) {
	path := filepath.Join(dir, lockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("data dir lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder := ""
		if b, rerr := os.ReadFile(path); rerr == nil && len(b) > 0 {
			holder = " (pid " + string(trimNL(b)) + ")"
		}
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, usagef("--data-dir %s is in use by another s3seal process%s: stop it first, or give this one a --data-dir of its own", dir, holder)
		}
		return nil, fmt.Errorf("data dir lock %s: %w", path, err)
	}
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(fmt.Sprintf("%d\n", os.Getpid())), 0)
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

func trimNL(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}
