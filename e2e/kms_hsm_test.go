package e2e

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// SoftHSM2 stands in for an HSM: a token of each test's own, made with
// the commands kms/pkcs11/doc.go gives, and an s3seal built with
// -tags pkcs11 (cgo) whose master key is on it.

// softHSMModule is where Debian's softhsm2 (its libsofthsm2) puts the
// module, the path docs/KMS.md and kms/pkcs11/doc.go name.
const softHSMModule = "/usr/lib/softhsm/libsofthsm2.so"

// The token's label and PINs.
const (
	hsmToken = "s3seal"
	hsmPIN   = "1234"
	hsmSOPIN = "5678"
)

var (
	pkcs11Once     sync.Once
	pkcs11Bin      string // s3seal built with -tags pkcs11
	pkcs11BuildErr error
)

// requirePKCS11 checks for what these tests need besides the aws CLI:
// softhsm2-util and its module (Debian's softhsm2), pkcs11-tool
// (opensc) and gcc, for cgo. Without one the test fails under CI and is
// skipped elsewhere, naming each missing thing and its Debian package.
func requirePKCS11(t testing.TB) bool {
	t.Helper()
	var missing, pkgs []string
	for _, c := range []struct{ what, pkg string }{{"softhsm2-util", "softhsm2"}, {"pkcs11-tool", "opensc"}, {"gcc", "gcc"}} {
		if _, err := exec.LookPath(c.what); err != nil {
			missing, pkgs = append(missing, c.what+" not found on PATH"), append(pkgs, c.pkg)
		}
	}
	if _, err := os.Stat(softHSMModule); err != nil {
		missing = append(missing, "no SoftHSM2 module: "+err.Error())
		if !slices.Contains(pkgs, "softhsm2") {
			pkgs = append(pkgs, "softhsm2")
		}
	}
	if len(missing) == 0 {
		return true
	}
	what, install := strings.Join(missing, "; "), strings.Join(pkgs, " ")
	if inCI() {
		t.Fatalf("%s (required under CI=true; scripts/test.sh installs Debian's %s)", what, install)
	} else {
		t.Skipf("%s; install Debian's %s (apt-get install -y %s) to run this test", what, install, install)
	}
	return false
}

// pkcs11Binary builds s3seal with -tags pkcs11 (and cgo), once per test
// process, next to the default build.
func pkcs11Binary(t testing.TB) string {
	t.Helper()
	requireBinary(t)
	pkcs11Once.Do(func() {
		bin := filepath.Join(filepath.Dir(s3sealBin), "s3seal-pkcs11")
		cmd := exec.Command("go", "build", "-tags", "pkcs11", "-o", bin, "github.com/s3seal/s3seal/cmd/s3seal")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=1") // without cgo the tag links nothing
		if out, err := cmd.CombinedOutput(); err != nil {
			pkcs11BuildErr = fmt.Errorf("go build -tags pkcs11 ./cmd/s3seal: %v\n%s", err, out)
			return
		}
		pkcs11Bin = bin
	})
	if pkcs11BuildErr != nil {
		t.Fatal(pkcs11BuildErr)
	}
	return pkcs11Bin
}

// softHSM is a SoftHSM2 token in a temporary directory.
type softHSM struct {
	env     []string // SOFTHSM2_CONF, for the tools and for s3seal
	pinFile string   // the user PIN, mode 0600
}

// newSoftHSM makes the token "s3seal" in a token directory of the
// test's own.
func newSoftHSM(t *testing.T) *softHSM {
	t.Helper()
	if !requirePKCS11(t) {
		return nil
	}
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens")
	if err := os.Mkdir(tokens, 0o700); err != nil {
		t.Fatal(err)
	}
	conf := writeFile(t, dir, "softhsm2.conf", []byte("directories.tokendir = "+tokens+"\nobjectstore.backend = file\nlog.level = ERROR\n"))
	h := &softHSM{env: []string{"SOFTHSM2_CONF=" + conf}, pinFile: writeFile(t, dir, "pin", []byte(hsmPIN+"\n"))}
	runTool(t, cleanEnv(nil, h.env...), "softhsm2-util", "--init-token", "--free", "--label", hsmToken, "--pin", hsmPIN, "--so-pin", hsmSOPIN)
	return h
}

// keygen makes a version of the master key label, as kms/pkcs11/doc.go
// says: an AES-256 key, sensitive, private, not extractable.
func (h *softHSM) keygen(t *testing.T, label, id string) {
	t.Helper()
	runTool(t, cleanEnv(nil, h.env...), "pkcs11-tool", "--module", softHSMModule, "--token-label", hsmToken,
		"--login", "--pin", hsmPIN, "--keygen", "--key-type", "AES:32",
		"--label", label, "--id", id, "--sensitive", "--private")
}

// uri names the key object on the token.
func (h *softHSM) uri(object string) string {
	return "pkcs11:token=" + hsmToken + ";object=" + object + "?module-path=" + softHSMModule + "&pin-source=file:" + h.pinFile
}

// sealedKeyVersion reads, in the embedded store's files under dataDir,
// the CKA_ID (hex) of the master key version an object's data key is
// sealed under: its s3seal-kms metadata, 0x01 || u8(n) || CKA_ID || ...
func sealedKeyVersion(t *testing.T, dataDir, bucket, key string) string {
	t.Helper()
	dir := filepath.Join(dataDir, "objects", "metadata", bucket)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		var doc struct {
			File string
			Meta map[string]string
		}
		if err := json.Unmarshal(readFile(t, filepath.Join(dir, e.Name())), &doc); err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
		if doc.File != bucket+"/"+key {
			continue
		}
		raw, err := base64.RawURLEncoding.DecodeString(doc.Meta["X-Amz-Meta-S3seal-Kms"])
		if err != nil || len(raw) < 2 || raw[0] != 1 || len(raw) < 2+int(raw[1]) {
			t.Fatalf("%s/%s: s3seal-kms %q is not a PKCS#11 sealed key (%v)", bucket, key, doc.Meta["X-Amz-Meta-S3seal-Kms"], err)
		}
		return hex.EncodeToString(raw[2 : 2+int(raw[1])])
	}
	t.Fatalf("no metadata of %s/%s in %s", bucket, key, dir)
	return ""
}

// boto3PKCS11Script writes with an encryption context under tenant-b,
// copies that object to tenant-a, and checks the answers and the bytes;
// one line per check, "name ok" or "name FAIL detail".
const boto3PKCS11Script = `
import sys, base64, json, boto3
from botocore.config import Config
endpoint, ak, sk, path = sys.argv[1:5]
data = open(path, "rb").read()
cfg = Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1})
c = boto3.client("s3", endpoint_url=endpoint, aws_access_key_id=ak, aws_secret_access_key=sk, region_name="us-east-1", config=cfg)
def check(name, cond, detail=""):
    print(name, "ok" if cond else "FAIL " + str(detail))
def kms(r, key):
    return r.get("ServerSideEncryption") == "aws:kms" and r.get("SSEKMSKeyId") == key
ctx = base64.b64encode(json.dumps({"tenant": "b", "purpose": "e2e"}).encode()).decode()
r = c.put_object(Bucket="hsm", Key="ctx", Body=data, ServerSideEncryption="aws:kms", SSEKMSKeyId="tenant-b", SSEKMSEncryptionContext=ctx)
check("put", kms(r, "tenant-b"), r)
check("head", kms(c.head_object(Bucket="hsm", Key="ctx"), "tenant-b"))
check("get", c.get_object(Bucket="hsm", Key="ctx")["Body"].read() == data)
r = c.copy_object(Bucket="hsm", Key="ctx-copy", CopySource="hsm/ctx", ServerSideEncryption="aws:kms", SSEKMSKeyId="tenant-a")
check("copy", kms(r, "tenant-a"), r)
check("copy head", kms(c.head_object(Bucket="hsm", Key="ctx-copy"), "tenant-a"))
check("copy get", c.get_object(Bucket="hsm", Key="ctx-copy")["Body"].read() == data)
`

// hsmObject is what a test wrote and the key HEAD must name.
type hsmObject struct {
	body []byte
	key  string
}

// checkHSMObjects reads every object back through s3seal, byte for
// byte, and checks that HEAD reports it as SSE-KMS under its key.
func checkHSMObjects(t *testing.T, a *awsCLI, objects map[string]hsmObject) {
	t.Helper()
	dir := t.TempDir()
	a.run("s3", "cp", "--only-show-errors", "--recursive", "s3://hsm/", dir)
	for name, o := range objects {
		h := headJSON(t, a, "hsm", name)
		if h["ServerSideEncryption"] != "aws:kms" || h["SSEKMSKeyId"] != o.key {
			t.Errorf("%s: HEAD %v, want aws:kms, %s", name, h, o.key)
		}
		if b, err := os.ReadFile(filepath.Join(dir, name)); err != nil || !bytes.Equal(b, o.body) {
			t.Errorf("%s: read back %d bytes (%v), want the %d written", name, len(b), err, len(o.body))
		}
	}
}

// TestKMSPKCS11SoftHSM runs s3seal on the embedded store with its master
// key in SoftHSM2 (two keys, tenant-a the default): no key file, no key
// in the data dir. The aws CLI writes with the default key, with
// SSE-KMS naming tenant-b (a PUT and a multipart upload), boto3 with an
// encryption context and a copy to tenant-a, rclone naming tenant-b; HEAD
// answers aws:kms and the label. A restart reads everything back, and a
// new version of tenant-a made in the token while s3seal runs seals new
// objects while the old version keeps reading.
func TestKMSPKCS11SoftHSM(t *testing.T) {
	t.Parallel()
	hsm := newSoftHSM(t)
	requireTool(t, "aws")
	py := requireBoto3(t)
	requireRclone(t)
	bin := pkcs11Binary(t)
	hsm.keygen(t, "tenant-a", "01")
	hsm.keygen(t, "tenant-b", "01")

	// No data key cache: every read opens its key in the token.
	opts := sealOpts{Binary: bin, KMSKey: hsm.uri("tenant-a"), Env: hsm.env, Args: []string{"--kms-cache-ttl", "-1s"}}
	p := startS3seal(t, opts)
	if !strings.Contains(p.Log(), "primary_key=pkcs11:tenant-a") {
		t.Errorf("s3seal does not report pkcs11:tenant-a as its primary key:\n%s", p.Log())
	}
	if _, err := os.Stat(filepath.Join(p.DataDir, "dev-master.key")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a master key was written to the data dir (%v)", err)
	}

	// Multipart above 8 MiB, in 5 MiB parts.
	cli := func(p *sealProc) *awsCLI { return newAWSCLIMultipart(t, p) }
	a := cli(p)
	dir := t.TempDir()
	objects := map[string]hsmObject{
		"plain": {[]byte("sealed under the default key"), "tenant-a"},
		"named": {[]byte("sealed under tenant-b"), "tenant-b"},
		"big":   {patternBytes(11, 12<<20), "tenant-b"},
	}
	for name, o := range objects {
		writeFile(t, dir, name, o.body)
	}
	a.run("s3", "mb", "s3://hsm")
	a.run("s3", "cp", "--only-show-errors", filepath.Join(dir, "plain"), "s3://hsm/plain")
	a.run("s3api", "put-object", "--bucket", "hsm", "--key", "named", "--body", filepath.Join(dir, "named"),
		"--server-side-encryption", "aws:kms", "--ssekms-key-id", "tenant-b")
	a.run("s3", "cp", "--only-show-errors", filepath.Join(dir, "big"), "s3://hsm/big", "--sse", "aws:kms", "--sse-kms-key-id", "tenant-b")
	if etag, _ := headJSON(t, a, "hsm", "big")["ETag"].(string); !strings.HasSuffix(etag, `-3"`) {
		t.Errorf("big: ETag %s, want a multipart upload's of 3 parts", etag)
	}

	// boto3: an encryption context, and a copy to tenant-a.
	ctxBody := patternBytes(12, 300000)
	pyDir := t.TempDir()
	out := runTool(t, isolatedPythonEnv(pyDir), py, writeFile(t, pyDir, "hsm.py", []byte(boto3PKCS11Script)),
		p.Endpoint, p.AccessKey, p.SecretKey, writeFile(t, pyDir, "body", ctxBody))
	if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 6 {
		t.Errorf("boto3 ran %d checks, want 6:\n%s", len(lines), out)
	} else {
		for _, l := range lines {
			if !strings.HasSuffix(l, " ok") {
				t.Errorf("boto3: %s", l)
			}
		}
	}
	objects["ctx"] = hsmObject{ctxBody, "tenant-b"}
	objects["ctx-copy"] = hsmObject{ctxBody, "tenant-a"}

	// rclone, naming tenant-b.
	rcBody := patternBytes(13, 70000)
	runTool(t, rcloneEnv(t, p), rcloneBin, "--retries", "1", "--low-level-retries", "1", "copyto",
		"--s3-server-side-encryption", "aws:kms", "--s3-sse-kms-key-id", "tenant-b",
		writeFile(t, dir, "rclone", rcBody), "s3seal:hsm/rclone")
	objects["rclone"] = hsmObject{rcBody, "tenant-b"}

	checkHSMObjects(t, a, objects)
	for name := range objects {
		if v := sealedKeyVersion(t, p.DataDir, "hsm", name); v != "01" {
			t.Errorf("%s: sealed under version %s, want 01", name, v)
		}
	}

	// A restart on the same data dir with the same key reads it all.
	p.Stop()
	opts.DataDir = p.DataDir
	p = startS3seal(t, opts)
	a = cli(p)
	checkHSMObjects(t, a, objects)

	// A new version of tenant-a, made while s3seal runs: new objects are
	// sealed under it (s3seal looks versions up again within 2 s), the
	// old ones still open under version 01.
	hsm.keygen(t, "tenant-a", "02")
	rotated := time.Now()
	for i := 0; ; i++ {
		name := fmt.Sprintf("rotated-%d", i)
		body := []byte("written after the rotation, " + name)
		a.run("s3", "cp", "--only-show-errors", writeFile(t, dir, name, body), "s3://hsm/"+name)
		objects[name] = hsmObject{body, "tenant-a"}
		v := sealedKeyVersion(t, p.DataDir, "hsm", name)
		if v == "02" {
			t.Logf("%s, written %v after the rotation, is sealed under version 02", name, time.Since(rotated).Round(time.Millisecond))
			break
		}
		if since := time.Since(rotated); v != "01" || since > 10*time.Second {
			t.Fatalf("%s, written %v after the rotation: sealed under version %s, want 02", name, since.Round(time.Millisecond), v)
		}
		time.Sleep(500 * time.Millisecond)
	}
	checkHSMObjects(t, a, objects)
	for _, name := range []string{"plain", "named", "big", "ctx", "ctx-copy", "rclone"} {
		if v := sealedKeyVersion(t, p.DataDir, "hsm", name); v != "01" {
			t.Errorf("%s: sealed under version %s after the rotation, want 01 still", name, v)
		}
	}
}
