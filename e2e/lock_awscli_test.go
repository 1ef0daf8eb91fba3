package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// TestLockWorkflowAWSCLI is an Object Lock workflow as an operator
// runs it with the aws CLI on moto: an admin credential creates a bucket
// with Object Lock and gives it a default retention (a non-admin may read
// it, not change it); a non-admin writes, copies (the copy is locked by
// the default retention too), sets a retention and a legal hold; a locked
// version is deleted only by an admin with the governance bypass once the
// hold is off; s3cmd writes, copies and reads in the same bucket; rewrap
// rotates the master key there.
func TestLockWorkflowAWSCLI(t *testing.T) {
	t.Parallel()
	m, p, _, _ := lockSetup(t)
	user := newAWSCLIAs(t, p, "user", "user-secret-key")
	admin := newAWSCLIAs(t, p, "admin", "admin-secret-key")
	be := motoClient(t, m)
	ctx := context.Background()
	dir := t.TempDir()

	admin.run("s3api", "create-bucket", "--bucket", "vault", "--object-lock-enabled-for-bucket")
	conf := `{"ObjectLockEnabled":"Enabled","Rule":{"DefaultRetention":{"Mode":"GOVERNANCE","Days":1}}}`
	if msg := user.fails("AccessDenied", "s3api", "put-object-lock-configuration", "--bucket", "vault", "--object-lock-configuration", conf); !strings.Contains(msg, `"admin": true`) {
		t.Errorf("a non-admin's PutObjectLockConfiguration: %s", msg)
	}
	admin.run("s3api", "put-object-lock-configuration", "--bucket", "vault", "--object-lock-configuration", conf)
	var lc struct {
		ObjectLockConfiguration struct {
			Rule struct{ DefaultRetention struct{ Mode string } }
		}
	}
	mustJSON(t, user.run("s3api", "get-object-lock-configuration", "--bucket", "vault"), &lc)
	if lc.ObjectLockConfiguration.Rule.DefaultRetention.Mode != "GOVERNANCE" {
		t.Fatalf("lock configuration read back: %+v", lc)
	}

	body := writeFile(t, dir, "dump.sql", []byte("precious backup\n"))
	var put struct {
		VersionID string `json:"VersionId"`
	}
	mustJSON(t, user.run("s3api", "put-object", "--bucket", "vault", "--key", "db/dump.sql", "--body", body), &put)
	// A client's copy into the bucket: the default retention locks it.
	user.run("s3api", "copy-object", "--bucket", "vault", "--key", "db/copy.sql", "--copy-source", "vault/db/dump.sql")
	got := filepath.Join(dir, "got")
	user.run("s3api", "get-object", "--bucket", "vault", "--key", "db/copy.sql", got)
	if b, err := os.ReadFile(got); err != nil || string(b) != "precious backup\n" {
		t.Fatalf("the copy reads %q, %v", b, err)
	}

	// Longer than the default retention (1 day) the PUT got: a writer may
	// extend a GOVERNANCE retention, not shorten it (S3's rule, s3seal's
	// too, whatever the store).
	until := time.Now().Add(48 * time.Hour).UTC().Truncate(time.Second)
	user.run("s3api", "put-object-retention", "--bucket", "vault", "--key", "db/dump.sql",
		"--retention", `{"Mode":"GOVERNANCE","RetainUntilDate":"`+until.Format(time.RFC3339)+`"}`)
	user.fails("AccessDenied", "s3api", "put-object-retention", "--bucket", "vault", "--key", "db/dump.sql", "--bypass-governance-retention",
		"--retention", `{"Mode":"GOVERNANCE","RetainUntilDate":"`+until.Add(-time.Hour).Format(time.RFC3339)+`"}`)
	user.run("s3api", "put-object-legal-hold", "--bucket", "vault", "--key", "db/dump.sql", "--legal-hold", "Status=ON")
	var hold struct{ LegalHold struct{ Status string } }
	mustJSON(t, user.run("s3api", "get-object-legal-hold", "--bucket", "vault", "--key", "db/dump.sql"), &hold)
	if hold.LegalHold.Status != "ON" {
		t.Fatalf("legal hold read back: %+v", hold)
	}
	// moto 5.2 has no GetObjectRetention (it answers ?retention with the
	// object, which s3seal does not pass on): the backend's HEAD shows it.
	head, err := be.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("vault"), Key: aws.String("db/dump.sql")})
	if err != nil || head.ObjectLockMode != "GOVERNANCE" || !aws.ToTime(head.ObjectLockRetainUntilDate).Equal(until) {
		t.Fatalf("backend lock of the object: %v %v, %v; want GOVERNANCE until %v", head.ObjectLockMode, head.ObjectLockRetainUntilDate, err, until)
	}
	chead, err := be.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("vault"), Key: aws.String("db/copy.sql")})
	if err != nil || chead.ObjectLockMode != "GOVERNANCE" {
		t.Fatalf("backend lock of the copy: %v, %v; want the default retention", chead.ObjectLockMode, err)
	}

	var lv struct {
		Versions []struct {
			Key       string
			VersionID string `json:"VersionId"`
		}
	}
	mustJSON(t, user.run("s3api", "list-object-versions", "--bucket", "vault", "--prefix", "db/"), &lv)
	if len(lv.Versions) != 2 || lv.Versions[1].Key != "db/dump.sql" || lv.Versions[1].VersionID != put.VersionID {
		t.Fatalf("versions: %+v, want db/copy.sql and db/dump.sql %s", lv.Versions, put.VersionID)
	}
	del := []string{"s3api", "delete-object", "--bucket", "vault", "--key", "db/dump.sql", "--version-id", put.VersionID}
	bypass := append(append([]string{}, del...), "--bypass-governance-retention")
	user.fails("AccessDenied", del...)
	if msg := user.fails("AccessDenied", bypass...); !strings.Contains(msg, `"admin": true`) {
		t.Errorf("a non-admin's bypass: %s", msg)
	}
	admin.fails("AccessDenied", bypass...) // the legal hold holds
	user.run("s3api", "put-object-legal-hold", "--bucket", "vault", "--key", "db/dump.sql", "--legal-hold", "Status=OFF")
	admin.fails("AccessDenied", del...) // the retention holds
	admin.run(bypass...)
	mustJSON(t, user.run("s3api", "list-object-versions", "--bucket", "vault", "--prefix", "db/"), &lv)
	if len(lv.Versions) != 1 || lv.Versions[0].Key != "db/copy.sql" {
		t.Fatalf("versions after the delete: %+v", lv.Versions)
	}

	requireTool(t, "s3cmd")
	s3cmd := s3cmdFor(t, &sealProc{Addr: p.Addr, AccessKey: "user", SecretKey: "user-secret-key"}, t.TempDir())
	s3cmd("put", body, "s3://vault/cmd/dump.sql")
	s3cmd("get", "--force", "s3://vault/cmd/dump.sql", got)
	if b, err := os.ReadFile(got); err != nil || string(b) != "precious backup\n" {
		t.Fatalf("s3cmd get reads %q, %v", b, err)
	}
	// s3cmd cp puts the source's ACL (the owner's only) on the copy.
	s3cmd("cp", "s3://vault/cmd/dump.sql", "s3://vault/cmd/dump2.sql")
	s3cmd("get", "--force", "s3://vault/cmd/dump2.sql", got)
	if b, err := os.ReadFile(got); err != nil || string(b) != "precious backup\n" {
		t.Fatalf("s3cmd get of the copy reads %q, %v", b, err)
	}
	big := patternBytes(11, 7<<20)
	s3cmd("put", "--multipart-chunk-size-mb=5", writeFile(t, dir, "big", big), "s3://vault/cmd/big")

	// Rotating the master key in the bucket: the default retention makes
	// moto want Content-MD5 on every copy, those that set no lock (the
	// copy-condition probe, a multipart object's manifest) included.
	keys := writeFile(t, dir, "keys.json", []byte(fmt.Sprintf(`{"primary": "new", "keys": {"default": %q, "new": %q}}`, p.Key, randomKey(t))))
	rewrap := func(extra ...string) (int, string) {
		args := []string{"rewrap", "--data-dir", filepath.Join(t.TempDir(), "d"), "--keys-file", keys,
			"--backend-endpoint", m.Endpoint, "--backend-region", "us-east-1", "--backend-path-style",
			"--backend-access-key", "x", "--backend-secret-key", "y", "--bucket", "vault", "--to", "new"}
		return runS3sealExit(t, nil, append(args, extra...)...)
	}
	if code, out := rewrap(); code != 1 || !strings.Contains(out, "ignores x-amz-copy-source-if-match") {
		t.Fatalf("rewrap on a store ignoring the copy condition: exit %d\n%s", code, out)
	}
	if code, out := rewrap("--no-concurrent-writers"); code != 0 || !strings.Contains(out, "vault/ under new: 5 rewrapped") {
		// the four objects and the bucket's owner document
		t.Fatalf("rewrap --no-concurrent-writers: exit %d\n%s", code, out)
	}
	p2 := startS3seal(t, sealOpts{Backend: m, KeysFile: keys})
	c2 := sdkFor(t, p2)
	out, err := c2.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("vault"), Key: aws.String("cmd/big")})
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(out.Body)
	out.Body.Close()
	if err != nil || !bytes.Equal(b, big) {
		t.Fatalf("the rewrapped multipart object reads %d bytes (%v), want its %d", len(b), err, len(big))
	}
	if b := getObj(t, c2, "vault", "db/copy.sql"); string(b) != "precious backup\n" {
		t.Fatalf("the rewrapped copy reads %q", b)
	}
}

func mustJSON(t *testing.T, out string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(out), v); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
}
