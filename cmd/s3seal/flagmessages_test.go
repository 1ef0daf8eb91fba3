package main

import (
	"bytes"
	"encoding/base64"
	"os"
	"path/filepath"
	"testing"
)

// A refused setting names the flag (or variable) it came from, the value
// and what would be accepted.
func TestRefusalsNameFlagAndValue(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o400); err != nil {
			t.Fatal(err)
		}
		return p
	}
	key := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32))
	garbage := write("garbage.key", "garbage\n")
	good := write("master.key", key+"\n")
	keys := write("keys.json", `{"primary":"k1","keys":{"k1":"`+key+`"}}`)
	creds := []string{"--key", key, "--access-key", "x", "--secret-key", "y", "--backend-access-key", "a", "--backend-secret-key", "b"}
	for _, c := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"--key-file", garbage}, nil,
			"s3seal: --key-file " + garbage + ": invalid keyring: key is not valid standard base64\n"},
		{nil, map[string]string{"S3SEAL_KEY_FILE": garbage},
			"s3seal: S3SEAL_KEY_FILE " + garbage + ": invalid keyring: key is not valid standard base64\n"},
		{[]string{"--key-file", good, "--keys-file", keys}, nil,
			"s3seal: give --key-file " + good + " or --keys-file, not both\n"},
		{[]string{"--key", key, "--keys-file", keys}, nil,
			"s3seal: give --key or --keys-file, not both\n"},
		{append([]string{"--backend-endpoint", "127.0.0.1:5055"}, creds...), nil,
			`s3seal: --backend-endpoint "127.0.0.1:5055": not an http(s) URL; give the scheme and host, as http://127.0.0.1:5055` + "\n"},
		{append([]string{"--backend-endpoint", "user:secret@127.0.0.1:5055"}, creds...), nil,
			`s3seal: --backend-endpoint "xxxxx@127.0.0.1:5055": not an http(s) URL; give the scheme and host, as http://xxxxx@127.0.0.1:5055` + "\n"},
		{append([]string{"--backend-endpoint", "ftp://user:secret@h"}, creds...), nil,
			`s3seal: --backend-endpoint "ftp://xxxxx@h": not an http(s) URL; give the scheme and host, as http://127.0.0.1:9000` + "\n"},
		{creds, map[string]string{"S3SEAL_BACKEND_ENDPOINT": "ftp://h"},
			`s3seal: S3SEAL_BACKEND_ENDPOINT "ftp://h": not an http(s) URL; give the scheme and host, as http://127.0.0.1:9000` + "\n"},
		{[]string{"--log-level", "verbose"}, nil, // after --log-level error
			`s3seal: --log-level: "verbose" is not a level; give debug, info, warn or error` + "\n"},
	} {
		args := append([]string{"serve", "--log-level", "error", "--listen", "127.0.0.1:0", "--data-dir", t.TempDir()}, c.args...)
		code, _, errOut := runCmd(args, c.env)
		if code != 2 || errOut != c.want {
			t.Errorf("%v %v: exit %d, stderr %q, want %q", c.args, c.env, code, errOut, c.want)
		}
	}
}
