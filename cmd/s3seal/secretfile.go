package main

import (
	"fmt"
	"io"
	"os"
)

// maxSecretFile bounds what is read of a key, keyring or credentials file.
const maxSecretFile = 1 << 20

// readPrivateFile reads a file that holds secrets. Like ssh with a private
// key, it refuses a file that its group or others may access in any way:
// they could read the secrets, or replace them. The message names the file
// and the fix.
func readPrivateFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	if perm := st.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("%s holds secrets but its group or others may access it (mode %04o); run: chmod 600 %s", path, perm, path)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxSecretFile+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxSecretFile {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, maxSecretFile)
	}
	return data, nil
}
