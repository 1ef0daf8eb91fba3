//go:build pkcs11 && cgo

package pkcs11

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	p11 "github.com/miekg/pkcs11"

	"github.com/s3seal/s3seal/kms"
)

// The tests run against SoftHSM2 tokens made in a temporary directory
// before the module is loaded (it reads SOFTHSM2_CONF once, when
// initialised): "s3seal" (user PIN 1234), with the keys docs/KMS.md's
// commands make, and "other" (user PIN 4321), which only the test of a
// wrong PIN logs in to.
const (
	testToken  = "s3seal"
	testPIN    = "1234"
	otherToken = "other"
	otherPIN   = "4321"
)

// testHSM is the SoftHSM2 set-up, nil when it could not be made.
var testHSM *softHSM

// hsmMissing says which package is missing when testHSM is nil; hsmErr
// says why setting it up failed.
var hsmMissing, hsmErr string

type softHSM struct {
	dir, module, pinFile string
}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "s3seal-softhsm-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	testHSM, hsmMissing, err = setUpSoftHSM(dir)
	if err != nil {
		hsmErr = err.Error()
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// setUpSoftHSM makes the test tokens in dir. It returns the missing
// package's name, and no error, when a tool or the module is absent.
func setUpSoftHSM(dir string) (*softHSM, string, error) {
	if _, err := exec.LookPath("softhsm2-util"); err != nil {
		return nil, "softhsm2 (softhsm2-util not found)", nil
	}
	if _, err := exec.LookPath("pkcs11-tool"); err != nil {
		return nil, "opensc (pkcs11-tool not found)", nil
	}
	module := os.Getenv("SOFTHSM2_MODULE")
	for _, m := range []string{"/usr/lib/softhsm/libsofthsm2.so", "/usr/lib/x86_64-linux-gnu/softhsm/libsofthsm2.so",
		"/usr/lib/aarch64-linux-gnu/softhsm/libsofthsm2.so", "/usr/local/lib/softhsm/libsofthsm2.so"} {
		if module != "" {
			break
		}
		if _, err := os.Stat(m); err == nil {
			module = m
		}
	}
	if module == "" {
		return nil, "softhsm2 (libsofthsm2.so not found; or set SOFTHSM2_MODULE)", nil
	}
	h := &softHSM{dir: dir, module: module, pinFile: filepath.Join(dir, "pin")}
	tokens := filepath.Join(dir, "tokens")
	conf := filepath.Join(dir, "softhsm2.conf")
	if err := os.Mkdir(tokens, 0o700); err != nil {
		return nil, "", err
	}
	if err := os.WriteFile(conf, []byte("directories.tokendir = "+tokens+"\nobjectstore.backend = file\nlog.level = ERROR\n"), 0o600); err != nil {
		return nil, "", err
	}
	os.Setenv("SOFTHSM2_CONF", conf)
	if err := os.WriteFile(h.pinFile, []byte(testPIN+"\n"), 0o600); err != nil {
		return nil, "", err
	}
	for _, tok := range [][2]string{{testToken, testPIN}, {otherToken, otherPIN}} {
		if out, err := exec.Command("softhsm2-util", "--init-token", "--free", "--label", tok[0], "--pin", tok[1], "--so-pin", "5678").CombinedOutput(); err != nil {
			return nil, "", fmt.Errorf("softhsm2-util --init-token: %v\n%s", err, out)
		}
	}
	for _, label := range []string{"tenant-a", "tenant-b"} {
		if err := h.keygen(label, "01", "AES:32", "--sensitive", "--private"); err != nil {
			return nil, "", err
		}
	}
	return h, "", nil
}

// keygen makes an AES key on the s3seal token with pkcs11-tool; id ""
// gives it no CKA_ID.
func (h *softHSM) keygen(label, id, keyType string, flags ...string) error {
	args := []string{"--module", h.module, "--token-label", testToken, "--login", "--pin", testPIN,
		"--keygen", "--key-type", keyType, "--label", label}
	if id != "" {
		args = append(args, "--id", id)
	}
	args = append(args, flags...)
	if out, err := exec.Command("pkcs11-tool", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("pkcs11-tool %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

// needHSM returns the SoftHSM2 set-up, or skips the test when a package
// is missing (fails it when S3SEAL_REQUIRE_PKCS11 is set).
func needHSM(t *testing.T) *softHSM {
	t.Helper()
	switch {
	case hsmErr != "":
		t.Fatalf("setting up SoftHSM2: %s", hsmErr)
	case testHSM == nil && os.Getenv("S3SEAL_REQUIRE_PKCS11") != "":
		t.Fatalf("S3SEAL_REQUIRE_PKCS11 is set, but %s is missing", hsmMissing)
	case testHSM == nil:
		t.Skipf("%s is missing: install it (Debian: apt-get install softhsm2 opensc) to run the PKCS#11 tests", hsmMissing)
	}
	return testHSM
}

var labels atomic.Int64

// newLabel returns a label that no other test, nor another run of the
// test (-count), has used: the token outlives them.
func newLabel(base string) string { return fmt.Sprintf("%s-%d", base, labels.Add(1)) }

// keygen makes a key on the s3seal token (see softHSM.keygen).
func keygen(t *testing.T, label, id, keyType string, flags ...string) {
	t.Helper()
	if err := needHSM(t).keygen(label, id, keyType, flags...); err != nil {
		t.Fatal(err)
	}
}

// testURI is the URI of the key labelled object on the s3seal token.
func testURI(h *softHSM, object string) string {
	uri := "pkcs11:token=" + testToken
	if object != "" {
		uri += ";object=" + object
	}
	return uri + "?module-path=" + h.module + "&pin-source=file:" + h.pinFile
}

// newProvider opens the provider of the s3seal token, closed when the
// test ends.
func newProvider(t *testing.T, object string) *Provider {
	t.Helper()
	p, name, err := Open(testURI(needHSM(t), object))
	if err != nil {
		t.Fatal(err)
	}
	if name != object {
		t.Fatalf("Open returned the name %q, want %q", name, object)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// admin is a read-write session on the s3seal token, for what s3seal
// never does: changing a key's attributes, reading its value.
type admin struct {
	mod *p11.Ctx
	h   p11.SessionHandle
}

func newAdmin(t *testing.T) admin {
	t.Helper()
	h := needHSM(t)
	mod, err := loadModule(h.module)
	if err != nil {
		t.Fatal(err)
	}
	slot, err := newSessions(mod, tokenSpec{label: testToken}, testPIN).findSlot()
	if err != nil {
		t.Fatal(err)
	}
	sh, err := mod.OpenSession(slot, p11.CKF_SERIAL_SESSION|p11.CKF_RW_SESSION)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mod.CloseSession(sh) })
	if err := mod.Login(sh, p11.CKU_USER, testPIN); err != nil && !isRV(err, p11.CKR_USER_ALREADY_LOGGED_IN) {
		t.Fatal(err)
	}
	return admin{mod: mod, h: sh}
}

// key returns the handle of the key labelled label with CKA_ID id.
func (a admin) key(t *testing.T, label string, id []byte) p11.ObjectHandle {
	t.Helper()
	err := a.mod.FindObjectsInit(a.h, []*p11.Attribute{
		p11.NewAttribute(p11.CKA_LABEL, label), p11.NewAttribute(p11.CKA_ID, id),
	})
	if err != nil {
		t.Fatal(err)
	}
	objs, _, err := a.mod.FindObjects(a.h, 2)
	a.mod.FindObjectsFinal(a.h)
	if err != nil || len(objs) != 1 {
		t.Fatalf("finding key %q version %x: %d objects, %v", label, id, len(objs), err)
	}
	return objs[0]
}

// set sets one boolean attribute of the key labelled label with CKA_ID id.
func (a admin) set(t *testing.T, label string, id []byte, attr uint, v bool) {
	t.Helper()
	if err := a.mod.SetAttributeValue(a.h, a.key(t, label, id), []*p11.Attribute{p11.NewAttribute(attr, v)}); err != nil {
		t.Fatal(err)
	}
}

// wantKind fails the test unless err is a provider error of kind k.
func wantKind(t *testing.T, what string, err error, k kms.Kind) {
	t.Helper()
	var pe *kms.ProviderError
	switch {
	case err == nil:
		t.Errorf("%s: no error, want %s", what, k)
	case !errors.As(err, &pe):
		t.Errorf("%s: %v (not a provider error), want %s", what, err, k)
	case pe.Kind != k:
		t.Errorf("%s: %s: %v, want %s", what, pe.Kind, err, k)
	}
}
