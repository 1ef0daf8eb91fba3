package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// auditLine is the part of an audit line the test reads.
type auditLine struct {
	Seq       uint64 `json:"seq"`
	Type      string `json:"type"`
	RequestID string `json:"request_id"`
	AccessKey string `json:"access_key"`
	Account   string `json:"account"`
	Op        string `json:"op"`
	Bucket    string `json:"bucket"`
	Key       string `json:"key"`
	Decision  string `json:"decision"`
	Rule      string `json:"rule"`
	KeyID     string `json:"key_id"`
	Outcome   string `json:"outcome"`
	MAC       string `json:"mac"`
}

// TestAuditTrail runs s3seal with --audit-log under real requests of two
// accounts, one of which the bucket's owner does not let in; rotates the
// trail with SIGHUP mid-run; then checks the lines (who, what, the
// answer, the rule, the master key used, the request id answered, and no
// secret or content anywhere), and that `s3seal audit verify` passes on
// the two files and fails once a line is edited, removed or reordered.
func TestAuditTrail(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	master, chainKey := randomKey(t), randomKey(t)
	keyFile := writeFile(t, dir, "audit.key", []byte(chainKey+"\n"))
	const aliceSK, bobSK = "alice-secret-9f8e7d6c5b4a", "bob-secret-1a2b3c4d5e6f"
	creds := writeJSON(t, dir, "creds.json", map[string]any{"credentials": []map[string]any{
		{"access_key": "alice", "secret_key": aliceSK, "read": []string{"*"}, "write": []string{"*"},
			"canonical_id": "a11ce", "display_name": "Alice", "account": "111111111111"},
		{"access_key": "bob", "secret_key": bobSK, "read": []string{"*"}, "write": []string{"*"},
			"canonical_id": "b0b", "display_name": "Bob", "account": "222222222222"},
	}})
	trail := filepath.Join(dir, "audit.log")
	p := startS3seal(t, sealOpts{CredentialsFile: creds, Env: []string{"S3SEAL_KEY=" + master},
		Args: []string{"--audit-log", trail, "--audit-key-file", keyFile}})
	alice := newSDKClient(t, p.Endpoint, "alice", aliceSK, true)
	bob := newSDKClient(t, p.Endpoint, "bob", bobSK, true)
	ctx := ctxT(t)
	content := []byte("AUDITED-CONTENT-" + strings.Repeat("x", 100))

	mustCreateBucket(t, alice, "audited")
	put, err := alice.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("audited"), Key: aws.String("doc"), Body: bytes.NewReader(content)})
	if err != nil {
		t.Fatal(err)
	}
	putID, _ := awsmiddleware.GetRequestIDMetadata(put.ResultMetadata)
	denyID := deniedRequestID(t, func() error {
		_, err := bob.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("audited"), Key: aws.String("doc")})
		return err
	})

	// Rotation: the operator moves the file aside and sends SIGHUP.
	rotated := trail + ".1"
	if err := os.Rename(trail, rotated); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(p.PID(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the trail reopened after SIGHUP", func() bool { _, err := os.Stat(trail); return err == nil })
	if got := getObj(t, alice, "audited", "doc"); !bytes.Equal(got, content) {
		t.Fatal("alice reads back other content")
	}
	deniedRequestID(t, func() error {
		_, err := bob.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("audited"), Key: aws.String("bobs"), Body: bytes.NewReader(content)})
		return err
	})
	p.Stop()

	lines := append(readAuditLines(t, rotated), readAuditLines(t, trail)...)
	find := func(what string, ok func(l auditLine) bool) auditLine {
		t.Helper()
		for _, l := range lines {
			if ok(l) {
				return l
			}
		}
		t.Fatalf("no line of %s in the trail", what)
		return auditLine{}
	}
	find("alice's PUT allowed, as the bucket's owner", func(l auditLine) bool {
		return l.Type == "access" && l.RequestID == putID && l.AccessKey == "alice" && l.Account == "111111111111" &&
			l.Op == "s3:PutObject" && l.Bucket == "audited" && l.Key == "doc" && l.Decision == "allow" && l.Rule == "owner"
	})
	find("the PUT's data key wrapped under the master key", func(l auditLine) bool {
		return l.Type == "key" && l.RequestID == putID && l.Op == "wrap" && l.KeyID == "default" && l.Bucket == "audited" && l.Key == "doc" && l.Outcome == "ok"
	})
	find("bob's GET denied", func(l auditLine) bool {
		return l.Type == "access" && l.RequestID == denyID && l.AccessKey == "bob" && l.Account == "222222222222" &&
			l.Op == "s3:GetObject" && l.Decision == "deny" && l.Rule == "default-deny"
	})
	find("alice's GET unwrapping the data key", func(l auditLine) bool {
		return l.Type == "key" && l.Op == "unwrap" && l.KeyID == "default" && l.Key == "doc" && l.Outcome == "ok"
	})
	find("bob's PUT denied", func(l auditLine) bool {
		return l.Type == "access" && l.AccessKey == "bob" && l.Op == "s3:PutObject" && l.Decision == "deny"
	})
	for _, f := range []string{rotated, trail} {
		b, _ := os.ReadFile(f)
		for _, secret := range []string{aliceSK, bobSK, master, chainKey, string(content[:16]), "Signature=", "Credential="} {
			if bytes.Contains(b, []byte(secret)) {
				t.Errorf("%s holds %q", f, secret)
			}
		}
	}

	verify := func(args ...string) (int, string) {
		return runS3sealExit(t, nil, append([]string{"audit", "verify", "--audit-key-file", keyFile}, args...)...)
	}
	if code, out := verify(rotated, trail); code != 0 || !strings.Contains(out, "closed by a checkpoint") {
		t.Fatalf("verify of both files: %d\n%s", code, out)
	}
	if code, out := verify(trail); code != 0 || strings.Contains(out, "a new trail") {
		t.Fatalf("verify of the new file alone, from its anchor: %d\n%s", code, out)
	}
	closed := regexp.MustCompile(`audit trail closed.* mac=([0-9a-f]{64})`).FindStringSubmatch(p.Log())
	if closed == nil {
		t.Fatalf("s3seal logged no anchor at shutdown:\n%s", p.Log())
	}
	if code, out := verify("--last-mac", closed[1], rotated, trail); code != 0 {
		t.Fatalf("verify against the anchor logged at shutdown: %d\n%s", code, out)
	}
	if code, out := verify(trail, rotated); code != 1 {
		t.Fatalf("verify of the files out of order: %d\n%s", code, out)
	}

	// Edits of the first file, each caught at its line.
	orig, err := os.ReadFile(rotated)
	if err != nil {
		t.Fatal(err)
	}
	ls := bytes.SplitAfter(orig, []byte("\n"))
	ls = ls[:len(ls)-1] // the empty piece after the last newline
	denied := -1
	for i, l := range ls {
		if bytes.Contains(l, []byte(`"decision":"deny"`)) {
			denied = i
			break
		}
	}
	if denied < 2 {
		t.Fatalf("no denial after the first lines in %s", rotated)
	}
	edited := filepath.Join(dir, "edited.log")
	for _, c := range []struct {
		name string
		ls   [][]byte
		line int
	}{
		{"a deny made an allow", replaceLine(ls, denied, bytes.Replace(ls[denied], []byte(`"deny"`), []byte(`"allow"`), 1)), denied + 1},
		{"a line removed", append(append([][]byte{}, ls[:denied]...), ls[denied+1:]...), denied + 1},
		{"two lines swapped", swapLines(ls, denied-1, denied), denied},
	} {
		if err := os.WriteFile(edited, bytes.Join(c.ls, nil), 0o600); err != nil {
			t.Fatal(err)
		}
		code, out := verify(edited, trail)
		if code != 1 || !strings.Contains(out, edited+":"+itoa(c.line)+":") {
			t.Errorf("%s: verify exits %d, want 1 naming line %d:\n%s", c.name, code, c.line, out)
		}
	}
}

// deniedRequestID runs call, which must be refused with 403, and returns
// the request id s3seal answered.
func deniedRequestID(t *testing.T, call func() error) string {
	t.Helper()
	err := call()
	if code, status := apiCode(err); status != 403 {
		t.Fatalf("got %v (%s), want 403", err, code)
	}
	var re interface{ ServiceRequestID() string }
	if !errors.As(err, &re) || re.ServiceRequestID() == "" {
		t.Fatalf("no request id in %v", err)
	}
	return re.ServiceRequestID()
}

func readAuditLines(t *testing.T, path string) []auditLine {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []auditLine
	for _, l := range bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n")) {
		var a auditLine
		if err := json.Unmarshal(l, &a); err != nil {
			t.Fatalf("%s: %v: %s", path, err, l)
		}
		out = append(out, a)
	}
	return out
}

func replaceLine(ls [][]byte, i int, l []byte) [][]byte {
	out := append([][]byte{}, ls...)
	out[i] = l
	return out
}

func swapLines(ls [][]byte, i, j int) [][]byte {
	out := append([][]byte{}, ls...)
	out[i], out[j] = out[j], out[i]
	return out
}
