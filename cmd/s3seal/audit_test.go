package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/s3seal/s3seal/audit"
)

// TestAuditFlags: --audit-log and S3SEAL_AUDIT_LOG, and the mistakes
// refused before s3seal starts.
func TestAuditFlags(t *testing.T) {
	c, err := parseConfig(nil, env(map[string]string{"S3SEAL_AUDIT_LOG": "/var/log/s3seal/audit.log",
		"S3SEAL_AUDIT_KEY_FILE": "/etc/s3seal/audit.key", "S3SEAL_AUDIT_LOG_MAX_SIZE": "1048576", "S3SEAL_AUDIT_LOG_SYNC": "true"}))
	if err != nil || c.AuditLog != "/var/log/s3seal/audit.log" || c.AuditKeyFile != "/etc/s3seal/audit.key" ||
		c.AuditLogMaxSize != 1<<20 || !c.AuditLogSync {
		t.Fatalf("from the environment: %+v, %v", c, err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--audit-log", "a.log"}, "needs --audit-key-file"},
		{[]string{"--audit-key-file", "k"}, "go with --audit-log"},
		{[]string{"--audit-log", "a.log", "--audit-key-file", "k", "--audit-log-max-size", "100"}, "at least 4096"},
		{[]string{"--audit-log", "-", "--audit-key-file", "k", "--audit-log-max-size", "100000"}, "cannot be rotated"},
	} {
		if _, err := parseConfig(c.args, env(nil)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error saying %q", c.args, err, c.want)
		}
	}
}

// TestAuditVerifyCommand: exit 0 for a trail that verifies, 1 naming
// the line for one edited, 2 for a usage mistake.
func TestAuditVerifyCommand(t *testing.T) {
	keyFile, trail, w := openTrail(t)
	w.Access(audit.Access{AccessKey: "ak", Op: "s3:GetObject", Bucket: "b", Key: "k", Allow: false, Rule: "default-deny"})
	w.Close()
	run := func(args ...string) (int, string) {
		var out, errOut bytes.Buffer
		code := run(append([]string{"audit", "verify"}, args...), env(map[string]string{"S3SEAL_AUDIT_KEY_FILE": keyFile}), &out, &errOut)
		return code, out.String() + errOut.String()
	}
	if code, out := run(trail); code != 0 || !strings.Contains(out, "ok: 3 lines") {
		t.Fatalf("a good trail: %d %s", code, out)
	}
	b, _ := os.ReadFile(trail)
	if err := os.WriteFile(trail, bytes.Replace(b, []byte(`"deny"`), []byte(`"allow"`), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out := run(trail); code != 1 || !strings.Contains(out, trail+":2:") {
		t.Fatalf("an edited trail: %d %s", code, out)
	}
	if code, out := run(); code != 2 {
		t.Fatalf("no file: %d %s", code, out)
	}
}

// TestAuditVerifySaysNewestFileMissing: the rotated files without the
// newest one end on a rotation's checkpoint; audit verify must not call
// that trail closed (the newest file removed, or forgotten, is news).
func TestAuditVerifySaysNewestFileMissing(t *testing.T) {
	keyFile, trail, w := openTrail(t)
	if err := os.Rename(trail, trail+".1"); err != nil {
		t.Fatal(err)
	}
	if err := w.Rotate(); err != nil {
		t.Fatal(err)
	}
	w.Access(audit.Access{AccessKey: "ak", Op: "s3:DeleteObject", Bucket: "b", Key: "k", Allow: true, Rule: "owner"})
	w.Close()
	var out, errOut bytes.Buffer
	code := run([]string{"audit", "verify", trail + ".1"}, env(map[string]string{"S3SEAL_AUDIT_KEY_FILE": keyFile}), &out, &errOut)
	if code != 0 || strings.Contains(out.String(), "closed by a checkpoint") || !strings.Contains(out.String(), "NOT closed") {
		t.Fatalf("the rotated file alone: %d %s%s", code, out.String(), errOut.String())
	}
}

// openTrail opens a new audit trail in a temporary directory, its key in
// a file beside it.
func openTrail(t *testing.T) (keyFile, trail string, w *audit.Writer) {
	t.Helper()
	dir := t.TempDir()
	keyText := "BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=\n"
	keyFile = filepath.Join(dir, "audit.key")
	if err := os.WriteFile(keyFile, []byte(keyText), 0o600); err != nil {
		t.Fatal(err)
	}
	key, err := audit.ParseKey([]byte(keyText))
	if err != nil {
		t.Fatal(err)
	}
	trail = filepath.Join(dir, "audit.log")
	if w, err = audit.Open(trail, key, audit.Options{}); err != nil {
		t.Fatal(err)
	}
	return keyFile, trail, w
}
