//go:build pkcs11 && cgo

package pkcs11

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	p11 "github.com/miekg/pkcs11"

	"github.com/s3seal/s3seal/kms"
)

var testContext = map[string]string{"aws:s3:arn": "arn:aws:s3:::b/k", "team": "red"}

func TestRoundTrip(t *testing.T) {
	p := newProvider(t, "tenant-a")
	ctx := context.Background()
	plain, sealed, canonical, err := p.GenerateKey(ctx, "tenant-a", testContext)
	if err != nil {
		t.Fatal(err)
	}
	if len(plain) != keySize || canonical != "tenant-a" || len(sealed) != 2+1+ivSize+keySize+tagSize {
		t.Fatalf("GenerateKey: %d-byte key, %d sealed bytes, name %q", len(plain), len(sealed), canonical)
	}
	if v := p.Version("tenant-a", sealed); v != "01" {
		t.Errorf("Version = %q, want 01", v)
	}
	got, err := p.Decrypt(ctx, "tenant-a", sealed, testContext)
	if err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("Decrypt = %x, %v; want %x", got, err, plain)
	}
	if err := p.Check(ctx, "tenant-a"); err != nil {
		t.Errorf("Check: %v", err)
	}
	// Each sealing is fresh.
	plain2, sealed2, _, err := p.GenerateKey(ctx, "tenant-a", testContext)
	if err != nil || bytes.Equal(plain2, plain) || bytes.Equal(sealed2[3:3+ivSize], sealed[3:3+ivSize]) {
		t.Errorf("a second GenerateKey repeats the key or the IV (%v)", err)
	}

	other := map[string]string{"aws:s3:arn": "arn:aws:s3:::b/k", "team": "blue"}
	_, err = p.Decrypt(ctx, "tenant-a", sealed, other)
	wantKind(t, "Decrypt with another context", err, kms.Invalid)
	_, err = p.Decrypt(ctx, "tenant-a", sealed, nil)
	wantKind(t, "Decrypt without the context", err, kms.Invalid)
	_, err = p.Decrypt(ctx, "tenant-b", sealed, testContext)
	wantKind(t, "Decrypt of tenant-a's key as tenant-b (which has a version 01)", err, kms.Invalid)
	for i := range sealed {
		damaged := bytes.Clone(sealed)
		damaged[i] ^= 0x01
		_, err := p.Decrypt(ctx, "tenant-a", damaged, testContext)
		wantKind(t, fmt.Sprintf("Decrypt with byte %d changed", i), err, kms.Invalid)
	}
	_, err = p.Decrypt(ctx, "tenant-a", sealed[:len(sealed)-1], testContext)
	wantKind(t, "Decrypt of a truncated key", err, kms.Invalid)
	if v := p.Version("tenant-a", []byte("junk")); v != "" {
		t.Errorf("Version of junk = %q", v)
	}

	_, _, _, err = p.GenerateKey(ctx, "no-such-key", nil)
	wantKind(t, "GenerateKey of an unknown label", err, kms.NotFound)
	_, err = p.Decrypt(ctx, "no-such-key", sealed, testContext)
	wantKind(t, "Decrypt under an unknown label", err, kms.NotFound)
	wantKind(t, "Check of an unknown label", p.Check(ctx, "no-such-key"), kms.NotFound)
	wantKind(t, "Check of no name", p.Check(ctx, ""), kms.NotFound)
	wantKind(t, "Check of a name with a space", p.Check(ctx, "tenant a"), kms.NotFound)
	// The sessions survived every refusal.
	if _, err := p.Decrypt(ctx, "tenant-a", sealed, testContext); err != nil {
		t.Errorf("Decrypt after the refusals: %v", err)
	}
}

func TestOpenWithoutObject(t *testing.T) {
	h := needHSM(t)
	p, name, err := kms.Open(testURI(h, ""), os.Getenv)
	if err != nil || name != "" || p.Scheme() != "pkcs11" {
		t.Fatalf("kms.Open without object=: %v, %q, %v", p, name, err)
	}
	defer p.(*Provider).Close()
	if err := p.Check(context.Background(), "tenant-b"); err != nil {
		t.Error(err)
	}
}

// TestRotation: a new object of the label with a greater CKA_ID seals
// new keys without a restart; what older versions sealed still opens,
// and Rewrap moves it to the newest.
func TestRotation(t *testing.T) {
	label := newLabel("rotating")
	keygen(t, label, "01", "AES:32", "--sensitive", "--private")
	p := newProvider(t, label)
	ctx := context.Background()
	plain1, sealed1, _, err := p.GenerateKey(ctx, label, testContext)
	if err != nil {
		t.Fatal(err)
	}
	keygen(t, label, "02", "AES:32", "--sensitive", "--private")
	var sealed2 []byte
	deadline := time.Now().Add(lookupTTL + 3*time.Second)
	for {
		_, sealed2, _, err = p.GenerateKey(ctx, label, testContext)
		if err != nil {
			t.Fatal(err)
		}
		if p.Version(label, sealed2) == "02" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("new keys are still sealed under version %s", p.Version(label, sealed2))
		}
		time.Sleep(100 * time.Millisecond)
	}
	if v := p.Version(label, sealed1); v != "01" {
		t.Errorf("Version of the first key = %q", v)
	}
	if got, err := p.Decrypt(ctx, label, sealed1, testContext); err != nil || !bytes.Equal(got, plain1) {
		t.Fatalf("Decrypt of a key of version 01 after the rotation: %v", err)
	}
	moved, err := p.Rewrap(ctx, label, sealed1, testContext)
	if err != nil {
		t.Fatal(err)
	}
	if v := p.Version(label, moved); v != "02" {
		t.Errorf("Version after Rewrap = %q, want 02", v)
	}
	if got, err := p.Decrypt(ctx, label, moved, testContext); err != nil || !bytes.Equal(got, plain1) {
		t.Errorf("Decrypt after Rewrap: %v", err)
	}
	_, err = p.Rewrap(ctx, label, sealed1, map[string]string{"team": "blue"})
	wantKind(t, "Rewrap with another context", err, kms.Invalid)

	// CKA_IDs are numbers: 0100 (256) is newer than 02.
	keygen(t, label, "0100", "AES:32", "--sensitive", "--private")
	p.ttl = 0
	if _, sealed, _, err := p.GenerateKey(ctx, label, nil); err != nil || p.Version(label, sealed) != "0100" {
		t.Errorf("after version 0100: %v, new keys under version %q", err, p.Version(label, sealed))
	}
	// Two versions equal as numbers are refused.
	keygen(t, label, "000100", "AES:32", "--sensitive", "--private")
	_, _, _, err = p.GenerateKey(ctx, label, nil)
	wantKind(t, "GenerateKey with versions 0100 and 000100", err, kms.Failed)
	if err == nil || !strings.Contains(err.Error(), "equal as numbers") {
		t.Errorf("the refusal does not say why: %v", err)
	}
}

// TestDisabled: a version whose CKA_DECRYPT is false (SoftHSM lets a
// read-write session set it) opens nothing and seals nothing; set true
// again, it works again.
func TestDisabled(t *testing.T) {
	label := newLabel("disabled")
	keygen(t, label, "01", "AES:32", "--sensitive", "--private")
	a := newAdmin(t)
	ctx := context.Background()
	for _, cached := range []bool{false, true} {
		t.Run(fmt.Sprintf("cached=%t", cached), func(t *testing.T) {
			p := newProvider(t, label)
			if !cached {
				p.ttl = 0
			} else {
				p.ttl = time.Hour // the attributes read before are stale: the token refuses
			}
			plain, sealed, _, err := p.GenerateKey(ctx, label, nil)
			if err != nil {
				t.Fatal(err)
			}
			a.set(t, label, []byte{1}, p11.CKA_DECRYPT, false)
			_, err = p.Decrypt(ctx, label, sealed, nil)
			wantKind(t, "Decrypt", err, kms.Disabled)
			if cached && !isRV(err, p11.CKR_KEY_FUNCTION_NOT_PERMITTED) {
				t.Errorf("Decrypt under the stale attributes: %v, want the token's CKR_KEY_FUNCTION_NOT_PERMITTED", err)
			}
			_, _, _, err = p.GenerateKey(ctx, label, nil)
			wantKind(t, "GenerateKey", err, kms.Disabled)
			wantKind(t, "Check", p.Check(ctx, label), kms.Disabled)
			a.set(t, label, []byte{1}, p11.CKA_DECRYPT, true)
			if got, err := p.Decrypt(ctx, label, sealed, nil); err != nil || !bytes.Equal(got, plain) {
				t.Errorf("Decrypt once enabled again: %v", err)
			}
		})
	}
}

// TestKeyRecreated: a version destroyed and made anew while its handle
// is remembered is looked up again; what the destroyed one sealed no
// longer opens.
func TestKeyRecreated(t *testing.T) {
	label := newLabel("recreated")
	keygen(t, label, "01", "AES:32", "--sensitive", "--private")
	p := newProvider(t, label)
	p.ttl = time.Hour
	ctx := context.Background()
	_, sealed, _, err := p.GenerateKey(ctx, label, nil)
	if err != nil {
		t.Fatal(err)
	}
	a := newAdmin(t)
	if err := a.mod.DestroyObject(a.h, a.key(t, label, []byte{1})); err != nil {
		t.Fatal(err)
	}
	keygen(t, label, "01", "AES:32", "--sensitive", "--private")
	plain, sealed2, _, err := p.GenerateKey(ctx, label, nil)
	if err != nil {
		t.Fatalf("GenerateKey after the key was made anew: %v", err)
	}
	if got, err := p.Decrypt(ctx, label, sealed2, nil); err != nil || !bytes.Equal(got, plain) {
		t.Errorf("Decrypt under the new key: %v", err)
	}
	_, err = p.Decrypt(ctx, label, sealed, nil)
	wantKind(t, "Decrypt of what the destroyed key sealed", err, kms.Invalid)
}

// TestNotExtractable: the value of a key docs/KMS.md's command makes
// never leaves the token, and SoftHSM refuses to make it extractable.
func TestNotExtractable(t *testing.T) {
	a := newAdmin(t)
	k := a.key(t, "tenant-a", []byte{1})
	_, err := a.mod.GetAttributeValue(a.h, k, []*p11.Attribute{p11.NewAttribute(p11.CKA_VALUE, nil)})
	if !isRV(err, p11.CKR_ATTRIBUTE_SENSITIVE) {
		t.Errorf("reading CKA_VALUE: %v, want CKR_ATTRIBUTE_SENSITIVE", err)
	}
	attrs, err := a.mod.GetAttributeValue(a.h, k, []*p11.Attribute{
		p11.NewAttribute(p11.CKA_SENSITIVE, nil), p11.NewAttribute(p11.CKA_EXTRACTABLE, nil), p11.NewAttribute(p11.CKA_PRIVATE, nil),
	})
	if err != nil || !isTrue(attrs[0].Value) || isTrue(attrs[1].Value) || !isTrue(attrs[2].Value) {
		t.Errorf("CKA_SENSITIVE, CKA_EXTRACTABLE, CKA_PRIVATE = %v, %v", attrs, err)
	}
	err = a.mod.SetAttributeValue(a.h, k, []*p11.Attribute{p11.NewAttribute(p11.CKA_EXTRACTABLE, true)})
	if err == nil {
		t.Error("SoftHSM made the key extractable")
	}
}

// TestWeakKeysRefused: s3seal seals under no key that could leave the
// token, be used without the PIN, or is not AES-256.
func TestWeakKeysRefused(t *testing.T) {
	weak := map[string]string{} // label -> what the refusal says
	for _, k := range []struct {
		base, id, keyType, says string
		flags                   []string
	}{
		{"public", "01", "AES:32", "CKA_PRIVATE false", []string{"--sensitive"}},
		{"extractable", "01", "AES:32", "CKA_EXTRACTABLE true", []string{"--sensitive", "--private", "--extractable"}},
		{"aes128", "01", "AES:16", "AES-128", []string{"--sensitive", "--private"}},
		{"no-id", "", "AES:32", "CKA_ID of 0 bytes", []string{"--sensitive", "--private"}},
	} {
		label := newLabel(k.base)
		keygen(t, label, k.id, k.keyType, k.flags...)
		weak[label] = k.says
	}
	p := newProvider(t, "")
	for label, want := range weak {
		_, _, _, err := p.GenerateKey(context.Background(), label, nil)
		wantKind(t, "GenerateKey under "+label, err, kms.Failed)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("GenerateKey under %s: %v, want it to say %q", label, err, want)
		}
		wantKind(t, "Check of "+label, p.Check(context.Background(), label), kms.Failed)
	}
}

func TestConcurrent(t *testing.T) {
	p := newProvider(t, "tenant-a")
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := range 16 {
		wg.Go(func() {
			kctx := map[string]string{"goroutine": fmt.Sprint(g)}
			for i := range 20 {
				plain, sealed, _, err := p.GenerateKey(ctx, "tenant-a", kctx)
				if err != nil {
					errs <- err
					return
				}
				got, err := p.Decrypt(ctx, "tenant-a", sealed, kctx)
				if err != nil || !bytes.Equal(got, plain) {
					errs <- fmt.Errorf("goroutine %d, round %d: Decrypt: %v", g, i, err)
					return
				}
				if i%5 == 0 {
					if _, err := p.Decrypt(ctx, "tenant-a", sealed, nil); kindOf(err) != kms.Invalid {
						errs <- fmt.Errorf("goroutine %d: Decrypt with another context: %v", g, err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	p.sess.mu.Lock()
	idle := len(p.sess.idle)
	p.sess.mu.Unlock()
	if idle < 1 || idle > maxSessions || len(p.sess.slots) != 0 {
		t.Errorf("%d idle sessions and %d in use after the calls", idle, len(p.sess.slots))
	}
}

// TestContextEnds: a call whose context ends returns at once; the
// session goes back to the pool when the PKCS#11 call finishes, and a
// key it made is cleared.
func TestContextEnds(t *testing.T) {
	p := newProvider(t, "tenant-a")
	if err := p.Check(context.Background(), "tenant-a"); err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	entered := make(chan struct{})
	key := []byte{1, 2, 3}
	discarded := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	result := make(chan error, 1)
	go func() {
		result <- p.sess.run(ctx, func(p11.SessionHandle) error {
			close(entered)
			<-release // a call the module does not answer
			return nil
		}, func() { clear(key); close(discarded) })
	}()
	<-entered
	cancel()
	select {
	case err := <-result:
		wantKind(t, "a call whose context ended", err, kms.Unavailable)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("the error does not say the context ended: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("run did not return when its context ended")
	}
	if len(p.sess.slots) != 1 {
		t.Errorf("%d sessions in use while the call runs, want 1", len(p.sess.slots))
	}
	close(release)
	select {
	case <-discarded:
	case <-time.After(5 * time.Second):
		t.Fatal("the abandoned result was not discarded")
	}
	if !bytes.Equal(key, []byte{0, 0, 0}) {
		t.Errorf("the abandoned key is %x", key)
	}
	for deadline := time.Now().Add(5 * time.Second); len(p.sess.slots) != 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the session was not given back")
		}
	}
	// A context that has ended makes no call.
	called := false
	err := p.sess.run(ctx, func(p11.SessionHandle) error { called = true; return nil }, nil)
	wantKind(t, "a call with an ended context", err, kms.Unavailable)
	if called {
		t.Error("a call was made with an ended context")
	}
	// A deadline reaches GenerateKey as Unavailable, which kms.Service
	// retries.
	dctx, dcancel := context.WithTimeout(context.Background(), time.Nanosecond)
	defer dcancel()
	<-dctx.Done()
	_, _, _, err = p.GenerateKey(dctx, "tenant-a", nil)
	wantKind(t, "GenerateKey past its deadline", err, kms.Unavailable)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("GenerateKey past its deadline: %v", err)
	}
}

// TestWrongPIN: a PIN the token refuses is Denied, and is not tried
// again (a token locks a PIN after a few failures). The wrong PIN is
// tried on the token "other", to which no other session is logged in:
// the login is the process's, shared by its sessions of a token.
func TestWrongPIN(t *testing.T) {
	h := needHSM(t)
	pin := filepath.Join(t.TempDir(), "pin")
	if err := os.WriteFile(pin, []byte("0000\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p, _, err := Open("pkcs11:token=" + otherToken + "?module-path=" + h.module + "&pin-source=file:" + pin)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	err = p.Check(context.Background(), "tenant-a")
	wantKind(t, "Check with a wrong PIN", err, kms.Denied)
	if !isRV(err, p11.CKR_PIN_INCORRECT) {
		t.Errorf("the error does not carry CKR_PIN_INCORRECT: %v", err)
	}
	err = p.Check(context.Background(), "tenant-a")
	wantKind(t, "a second Check with a wrong PIN", err, kms.Denied)
	if err == nil || !strings.Contains(err.Error(), "no further login") {
		t.Errorf("the second Check: %v", err)
	}
}

func TestTokenMissing(t *testing.T) {
	h := needHSM(t)
	p, _, err := Open("pkcs11:token=absent?module-path=" + h.module + "&pin-source=file:" + h.pinFile)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	err = p.Check(context.Background(), "tenant-a")
	wantKind(t, "Check on a token not present", err, kms.Unavailable)
	if err == nil || !strings.Contains(err.Error(), `"s3seal"`) {
		t.Errorf("the error does not name the tokens present: %v", err)
	}
	if _, _, err := Open("pkcs11:token=s3seal?module-path=" + filepath.Join(h.dir, "none.so") + "&pin-source=file:" + h.pinFile); err == nil {
		t.Error("Open with a missing module succeeded")
	}
}
