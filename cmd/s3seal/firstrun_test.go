package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
)

func runCmd(args []string, e map[string]string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = run(args, env(e), &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		code, out, _ := runCmd(args, nil)
		if code != 0 || out != "s3seal "+buildVersion()+"\n" {
			t.Errorf("%v: exit %d, %q", args, code, out)
		}
	}
	// The first line serve logs names the version.
	c, err := parseConfig([]string{"--listen", "127.0.0.1:0", "--shutdown-delay", "0s", "--data-dir", t.TempDir()}, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var log bytes.Buffer
	if err := serve(ctx, c, &log); err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(log.String(), "\n")
	if !strings.Contains(first, `msg="s3seal starting" version=`+buildVersion()+" ") {
		t.Errorf("first log line %q", first)
	}
	bi := &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.modified", Value: "true"}}}
	if got := versionOf(bi); got != "v1.2.3+0123456789ab-dirty" {
		t.Errorf("versionOf = %q", got)
	}
	bi.Settings[1].Value = "false"
	if got := versionOf(bi); got != "v1.2.3+0123456789ab" {
		t.Errorf("versionOf = %q", got)
	}
}

func TestKeygenHelp(t *testing.T) {
	for _, a := range []string{"-h", "--help"} {
		code, out, _ := runCmd([]string{"keygen", a}, nil)
		if code != 0 || !strings.HasPrefix(out, "usage: s3seal keygen") {
			t.Errorf("keygen %s: exit %d, %q", a, code, out)
		}
	}
	if code, out, _ := runCmd([]string{"keygen", "extra"}, nil); code != 2 || out != "" {
		t.Errorf("keygen extra: exit %d, %q", code, out)
	}
}

func TestServeHelpNamesVariables(t *testing.T) {
	code, out, errOut := runCmd([]string{"serve", "--help"}, nil)
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	for _, want := range []string{"usage: s3seal serve", "-max-requests", "[S3SEAL_MAX_REQUESTS]", "[S3SEAL_BACKEND_ENDPOINT]", "[S3SEAL_KEY_FILE]"} {
		if !strings.Contains(out, want) {
			t.Errorf("serve --help lacks %q:\n%s", want, out)
		}
	}
}

func TestServeBadFlagOnce(t *testing.T) {
	code, out, errOut := runCmd([]string{"serve", "--bogus"}, nil)
	if code != 2 || out != "" || errOut != "s3seal: unknown flag --bogus (s3seal serve -h lists the flags)\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

func TestErrorMessagesNameValueAndSource(t *testing.T) {
	for _, c := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{nil, map[string]string{"S3SEAL_MAX_REQUESTS": "abc"}, `s3seal: S3SEAL_MAX_REQUESTS: "abc" is not a number` + "\n"},
		{[]string{"--max-requests", "abc"}, nil, `s3seal: --max-requests: "abc" is not a number` + "\n"},
		{nil, map[string]string{"S3SEAL_MAX_REQUESTS": "0"}, "s3seal: S3SEAL_MAX_REQUESTS: 0 is below 1; give at least 1\n"},
		{nil, map[string]string{"S3SEAL_TRANSFER_TIMEOUT": "soon"}, `s3seal: S3SEAL_TRANSFER_TIMEOUT: "soon" is not a duration (such as 30s, 2m, 1h)` + "\n"},
		{[]string{"--backend-path-style=maybe"}, nil, `s3seal: --backend-path-style: "maybe" is not true or false` + "\n"},
		{nil, map[string]string{"S3SEAL_LOG_FORMAT": "xml"}, `s3seal: S3SEAL_LOG_FORMAT: "xml" is not text or json` + "\n"},
		{nil, map[string]string{"S3SEAL_KEY_FILE": "/nonexistent/master.key"}, "s3seal: S3SEAL_KEY_FILE: open /nonexistent/master.key: no such file or directory\n"},
		{[]string{"--key", ""}, nil, `s3seal: --key "": empty; give a master key (s3seal keygen makes one), or leave --key out` + "\n"},
	} {
		args := append([]string{"serve", "--data-dir", t.TempDir()}, c.args...)
		code, _, errOut := runCmd(args, c.env)
		if code != 2 || errOut != c.want {
			t.Errorf("%v %v: exit %d, stderr %q, want %q", c.args, c.env, code, errOut, c.want)
		}
	}
}

// No message repeats a prefix ("s3seal: --key: s3seal: ...", "backend:
// backend: ..."), and a value from the environment is named by its variable.
func TestErrorPrefixesNotRepeated(t *testing.T) {
	key := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32))
	for _, c := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"--key", "abc"}, nil, "s3seal: --key: invalid keyring: key is not valid standard base64\n"},
		{nil, map[string]string{"S3SEAL_KEY": "abc"}, "s3seal: S3SEAL_KEY: invalid keyring: key is not valid standard base64\n"},
		{[]string{"--backend-endpoint", "ftp://h", "--backend-access-key", "a", "--backend-secret-key", "b", "--key", key, "--access-key", "x", "--secret-key", "y"}, nil,
			"s3seal: --backend-endpoint \"ftp://h\": not an http(s) URL; give the scheme and host, as http://127.0.0.1:9000\n"},
	} {
		args := append([]string{"serve", "--log-level", "error", "--listen", "127.0.0.1:0", "--data-dir", t.TempDir()}, c.args...)
		code, _, errOut := runCmd(args, c.env)
		if code != 2 || errOut != c.want {
			t.Errorf("%v %v: exit %d, stderr %q, want %q", c.args, c.env, code, errOut, c.want)
		}
	}
}

func TestMisspeltVariableWarned(t *testing.T) {
	t.Setenv("S3SEAL_MAX_REQEUSTS", "4")
	t.Setenv("S3SEAL_LISTEN", "127.0.0.1:0")
	c, err := parseConfig([]string{"--data-dir", t.TempDir(), "--shutdown-delay", "0s"}, os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var log bytes.Buffer
	if err := serve(ctx, c, &log); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "S3SEAL_MAX_REQEUSTS names no flag") || strings.Contains(log.String(), "S3SEAL_LISTEN names no flag") {
		t.Fatalf("log:\n%s", log.String())
	}
}

// While one holder has the --data-dir's lock (flock locks belong to an
// open file, so a second open in this process conflicts as another process
// would), serve, gc and verify on it are refused with one clear line; once
// it is released, serve starts.
func TestDataDirLock(t *testing.T) {
	dir := t.TempDir()
	unlock, err := lockDataDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"serve", "--listen", "127.0.0.1:0", "--data-dir", dir},
		{"gc", "--data-dir", dir},
		{"verify", "--bucket", "b", "--data-dir", dir},
		{"rewrap", "--bucket", "b", "--to", "x", "--data-dir", dir},
	} {
		code, _, errOut := runCmd(args, nil)
		want := "s3seal: --data-dir " + dir + " is in use by another s3seal process (pid " + strconv.Itoa(os.Getpid()) + "): stop it first"
		if code != 2 || !strings.Contains(errOut, "\n"+want) && !strings.HasPrefix(errOut, want) || strings.Count(errOut, "is in use") != 1 {
			t.Errorf("%v while the lock is held: exit %d, %q", args[0], code, errOut)
		}
	}
	unlock()
	c, err := parseConfig([]string{"--listen", "127.0.0.1:0", "--shutdown-delay", "0s", "--data-dir", dir}, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := serve(ctx, c, &bytes.Buffer{}); err != nil {
		t.Fatalf("serve after the lock was released: %v", err)
	}
	// serve released it in turn.
	unlock, err = lockDataDir(dir)
	if err != nil {
		t.Fatalf("lock after serve ended: %v", err)
	}
	unlock()
}

// The Docker image has no .git: its version and commit come in with
// -ldflags -X main.version / main.commit, and s3seal version prints them.
func TestVersionFromLdflags(t *testing.T) {
	if testing.Short() {
		t.Skip("builds s3seal")
	}
	bin := filepath.Join(t.TempDir(), "s3seal")
	build := exec.Command("go", "build", "-trimpath", "-buildvcs=false",
		"-ldflags", "-X main.version=v9.8.7 -X main.commit=0123456789abcdef0123", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if got := string(out); got != "s3seal v9.8.7+0123456789ab\n" {
		t.Errorf("s3seal version = %q", got)
	}
	if got := stampedVersion("", "0123456789abcdef"); got != "(devel)+0123456789ab" {
		t.Errorf("stampedVersion(commit only) = %q", got)
	}
}
