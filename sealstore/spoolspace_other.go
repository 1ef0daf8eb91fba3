//go:build !(linux || darwin)

package sealstore

import "math"

// freeSpace cannot ask this system's filesystems for their free space:
// every body is admitted, and a full disk is still answered SlowDown.
func freeSpace(string) (int64, error) { return math.MaxInt64 / 2, nil }
