package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// toolCheck records what requireTool and requireBoto3 would say, in place
// of skipping or failing the test.
type toolCheck struct {
	testing.TB
	skipped, failed string
}

func (c *toolCheck) Helper()                   {}
func (c *toolCheck) Skipf(f string, a ...any)  { c.skipped = fmt.Sprintf(f, a...) }
func (c *toolCheck) Fatalf(f string, a ...any) { c.failed = fmt.Sprintf(f, a...) }
func (c *toolCheck) said(ci bool) (what string) {
	return map[bool]string{false: c.skipped, true: c.failed}[ci]
}

// TestMissingToolsNamed: a test needing a program that is not installed,
// a python3 without boto3, Debian's python3 without confluent-kafka, or
// SoftHSM2, OpenSC and gcc for the PKCS#11 tests, says which (failing under CI, skipping elsewhere) instead of
// dying with a traceback.
func TestMissingToolsNamed(t *testing.T) {
	dir := t.TempDir()
	// A python3 without boto3, as on a fresh Debian machine.
	stub := "#!/bin/sh\necho \"ModuleNotFoundError: No module named 'boto3'\" >&2\nexit 1\n"
	if err := os.WriteFile(filepath.Join(dir, "python3"), []byte(stub), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	// Debian's python3 without python3-confluent-kafka.
	debian := filepath.Join(dir, "debian-python3")
	stub = "#!/bin/sh\necho \"ModuleNotFoundError: No module named 'confluent_kafka'\" >&2\nexit 1\n"
	if err := os.WriteFile(debian, []byte(stub), 0o755); err != nil {
		t.Fatal(err)
	}
	defer func(p string) { debianPython = p }(debianPython)
	debianPython = debian
	for _, ci := range []bool{false, true} {
		t.Setenv("CI", fmt.Sprint(ci))
		for _, tool := range []string{"aws", "moto_server", "rclone", "s3cmd", "restic", "kcat", "haproxy", "jq"} {
			c := &toolCheck{TB: t}
			if p := requireTool(c, tool); p != "" || !strings.Contains(c.said(ci), tool+" not found on PATH") {
				t.Errorf("CI=%v: requireTool(%s) = %q, said %q", ci, tool, p, c.said(ci))
			}
		}
		c := &toolCheck{TB: t}
		if ok := requirePKCS11(c); ok || !strings.Contains(c.said(ci), "softhsm2-util not found on PATH") ||
			!strings.Contains(c.said(ci), "pkcs11-tool not found on PATH") || !strings.Contains(c.said(ci), "gcc not found on PATH") ||
			!strings.Contains(c.said(ci), "Debian's softhsm2 opensc gcc") {
			t.Errorf("CI=%v: requirePKCS11 = %v, said %q", ci, ok, c.said(ci))
		}
		c = &toolCheck{TB: t}
		if p := requireBoto3(c); p != "" || !strings.Contains(c.said(ci), "cannot import boto3") ||
			!strings.Contains(c.said(ci), "No module named 'boto3'") || !strings.Contains(c.said(ci), "python3-boto3") {
			t.Errorf("CI=%v: requireBoto3 = %q, said %q", ci, p, c.said(ci))
		}
		c = &toolCheck{TB: t}
		if p := requireConfluentKafka(c); p != "" || !strings.Contains(c.said(ci), "cannot import confluent_kafka") ||
			!strings.Contains(c.said(ci), "No module named 'confluent_kafka'") || !strings.Contains(c.said(ci), "python3-confluent-kafka") {
			t.Errorf("CI=%v: requireConfluentKafka = %q, said %q", ci, p, c.said(ci))
		}
	}
}
