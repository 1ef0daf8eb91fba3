package crypto

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"testing"
)

func testCustomerKey(t *testing.T, b byte) *CustomerKey {
	t.Helper()
	ck, err := NewCustomerKey(bytes.Repeat([]byte{b}, KeySize))
	if err != nil {
		t.Fatal(err)
	}
	return ck
}

// sealCustomer seals plain as an SSE-C object under ck and returns its
// metadata and ciphertext, as sealstore stores them.
func sealCustomer(t *testing.T, kr *Keyring, name Name, ck *CustomerKey, plain []byte) (map[string]string, []byte) {
	t.Helper()
	dk := testDataKey(t, "ssec")
	check, err := dk.CustomerCheck(ck)
	if err != nil {
		t.Fatal(err)
	}
	content, err := dk.ForCustomer(ck, check)
	if err != nil {
		t.Fatal(err)
	}
	ct := seal(t, content, 0, plain, 0)
	env, err := kr.Wrap(context.Background(), dk, "", name, Binding{PlainSize: int64(len(plain)), CustomerCheck: check})
	if err != nil {
		t.Fatal(err)
	}
	return withObjectMeta(t, dk, env).Metadata(), ct
}

func unwrapMeta(kr *Keyring, meta map[string]string, name Name) (*DataKey, Binding, error) {
	env, _, err := ParseMetadata(meta)
	if err != nil {
		return nil, Binding{}, err
	}
	return kr.Unwrap(context.Background(), env, name)
}

func TestCustomerKeyRoundTrip(t *testing.T) {
	kr := testKeyring(t, "k1", "k1")
	name := Name{Bucket: "b", Key: "k"}
	ck := testCustomerKey(t, 7)
	plain := randomPlain(3*SegmentSize+5, "ssec plain")
	meta, ct := sealCustomer(t, kr, name, ck, plain)
	if meta[MetaSSEC] == "" {
		t.Fatalf("metadata %v has no %s", meta, MetaSSEC)
	}
	dk, b, err := unwrapMeta(kr, meta, name)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.CustomerCheck) != CheckSize {
		t.Fatalf("binding check %x", b.CustomerCheck)
	}
	content, err := dk.ForCustomer(ck, b.CustomerCheck)
	if err != nil {
		t.Fatal(err)
	}
	got, err := open(content, 0, ct, int64(len(plain)), SegmentSize-3, SegmentSize+10)
	if err != nil || !bytes.Equal(got, plain[SegmentSize-3:2*SegmentSize+7]) {
		t.Fatalf("range read: %v", err)
	}

	// The keyring alone (the DEK) does not open the segments.
	if _, err := openAll(dk, 0, ct, int64(len(plain))); !errors.Is(err, ErrAuth) {
		t.Fatalf("read with the DEK alone: %v, want ErrAuth", err)
	}
	// Another customer key is refused by the check, before any decryption.
	if _, err := dk.ForCustomer(testCustomerKey(t, 8), b.CustomerCheck); !errors.Is(err, ErrCustomerKey) {
		t.Fatalf("wrong customer key: %v, want ErrCustomerKey", err)
	}
	// The customer key with another object's DEK (a keyring that is not
	// this one, or another object) gives another check and content key.
	other := testDataKey(t, "other")
	if _, err := other.ForCustomer(ck, b.CustomerCheck); !errors.Is(err, ErrCustomerKey) {
		t.Fatalf("customer key with another DEK: %v, want ErrCustomerKey", err)
	}
	// A content key is never wrapped (it would store the content key under
	// the master key alone).
	if _, err := kr.Wrap(context.Background(), content, "", name, Binding{}); !errors.Is(err, ErrKeyring) {
		t.Fatalf("Wrap(content key): %v, want ErrKeyring", err)
	}
}

func TestCustomerCheckBoundIntoWrap(t *testing.T) {
	kr := testKeyring(t, "k1", "k1")
	name := Name{Bucket: "b", Key: "k"}
	meta, _ := sealCustomer(t, kr, name, testCustomerKey(t, 7), []byte("hello"))

	// The store swaps in the check of a key it chose: the wrap fails.
	swapped := map[string]string{}
	for k, v := range meta {
		swapped[k] = v
	}
	otherMeta, _ := sealCustomer(t, kr, Name{Bucket: "b", Key: "k2"}, testCustomerKey(t, 9), []byte("hello"))
	swapped[MetaSSEC] = otherMeta[MetaSSEC]
	if swapped[MetaSSEC] == meta[MetaSSEC] {
		t.Fatal("test needs two different checks")
	}
	if _, _, err := unwrapMeta(kr, swapped, name); !errors.Is(err, ErrAuth) {
		t.Fatalf("swapped check: %v, want ErrAuth", err)
	}
	// The store strips the check, so the object looks like one without a
	// customer key: the wrap fails too.
	stripped := map[string]string{}
	for k, v := range meta {
		if k != MetaSSEC {
			stripped[k] = v
		}
	}
	if _, _, err := unwrapMeta(kr, stripped, name); !errors.Is(err, ErrAuth) {
		t.Fatalf("stripped check: %v, want ErrAuth", err)
	}
	// A malformed check is corrupt.
	bad := map[string]string{}
	for k, v := range meta {
		bad[k] = v
	}
	bad[MetaSSEC] = "short"
	if _, _, err := unwrapMeta(kr, bad, name); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("malformed check: %v, want ErrCorrupt", err)
	}
}

// TestCustomerKeyLeavesOldObjects: an object without a customer key wraps
// exactly as before (no s3seal-ssec, the same AAD), and adding a check
// value to its envelope does not open.
func TestCustomerKeyLeavesOldObjects(t *testing.T) {
	kr := testKeyring(t, "k1", "k1")
	name := Name{Bucket: "b", Key: "k"}
	dk := testDataKey(t, "old")
	env, err := kr.Wrap(context.Background(), dk, "", name, Binding{PlainSize: 5})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := env.Metadata()[MetaSSEC]; ok {
		t.Fatal("an object without a customer key got s3seal-ssec")
	}
	if !bytes.Equal(wrapAAD(env, name), wrapAADBase(env, name)) {
		t.Fatal("the AAD of an object without a customer key changed")
	}
	_, b, err := kr.Unwrap(context.Background(), env, name)
	if err != nil || b.CustomerCheck != nil {
		t.Fatalf("Unwrap: %v, check %x", err, b.CustomerCheck)
	}
	env.CustomerCheck = make([]byte, CheckSize)
	if _, _, err := kr.Unwrap(context.Background(), env, name); !errors.Is(err, ErrAuth) {
		t.Fatalf("a check added to an old object: %v, want ErrAuth", err)
	}
}

func TestCustomerKeyMD5(t *testing.T) {
	raw, _ := base64.StdEncoding.DecodeString("pO3upElrwuEXSoFwCfnZPdSsmt/xWeFa0N9KgDijwVs=")
	ck, err := NewCustomerKey(raw)
	if err != nil {
		t.Fatal(err)
	}
	// s3-tests' key pO3upElrwuEXSoFwCfnZPdSsmt/xWeFa0N9KgDijwVs= and its MD5.
	if got := ck.MD5(); got != "DWygnHRtgiJ77HCm+1rvHw==" {
		t.Fatalf("MD5 = %s", got)
	}
	if _, err := NewCustomerKey(raw[:31]); err == nil {
		t.Fatal("a 31-byte customer key was taken")
	}
}
