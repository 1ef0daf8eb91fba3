package crypto

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func key(b byte) []byte { return bytes.Repeat([]byte{b}, KeySize) }

func testKeyring(t testing.TB, primary string, ids ...string) *Keyring {
	t.Helper()
	keys := map[string][]byte{}
	for i, id := range ids {
		keys[id] = key(byte(i + 1))
	}
	kr, err := NewKeyring(primary, keys)
	if err != nil {
		t.Fatal(err)
	}
	return kr
}

func TestNewKeyring(t *testing.T) {
	kr := testKeyring(t, "k2", "k1", "k2", "a.b_c-D9")
	if kr.Primary() != "k2" || !kr.Has("k1") || kr.Has("k3") || kr.Has("") {
		t.Fatal("Primary/Has")
	}
	if ids := kr.IDs(); strings.Join(ids, ",") != "a.b_c-D9,k1,k2" {
		t.Fatalf("IDs = %v", ids)
	}
	// The keyring keeps copies.
	keys := map[string][]byte{"k": key(1)}
	kr, _ = NewKeyring("k", keys)
	keys["k"][0] = 99
	if kr.keys["k"][0] != 1 {
		t.Fatal("keyring shares the caller's key slice")
	}

	for name, c := range map[string]struct {
		primary string
		keys    map[string][]byte
	}{
		"no keys":         {"k", nil},
		"primary missing": {"k2", map[string][]byte{"k1": key(1)}},
		"empty primary":   {"", map[string][]byte{"k1": key(1)}},
		"short key":       {"k", map[string][]byte{"k": key(1)[:31]}},
		"long key":        {"k", map[string][]byte{"k": append(key(1), 0)}},
		"empty id":        {"k", map[string][]byte{"k": key(1), "": key(2)}},
		"id with space":   {"a b", map[string][]byte{"a b": key(1)}},
		"id with slash":   {"a/b", map[string][]byte{"a/b": key(1)}},
		"id too long":     {strings.Repeat("x", 65), map[string][]byte{strings.Repeat("x", 65): key(1)}},
	} {
		if _, err := NewKeyring(c.primary, c.keys); !errors.Is(err, ErrKeyring) {
			t.Errorf("%s: %v, want ErrKeyring", name, err)
		}
	}
	if !ValidKeyID(strings.Repeat("x", 64)) || ValidKeyID("é") {
		t.Error("ValidKeyID")
	}
}

func TestParseKey(t *testing.T) {
	k := key(7)
	got, err := ParseKey(base64.StdEncoding.EncodeToString(k))
	if err != nil || !bytes.Equal(got, k) {
		t.Fatal(got, err)
	}
	for _, s := range []string{
		"",
		base64.StdEncoding.EncodeToString(k[:31]),
		base64.StdEncoding.EncodeToString(append(k, 1)),
		base64.RawStdEncoding.EncodeToString(k),      // no padding
		base64.URLEncoding.EncodeToString(key(0xfb)), // URL alphabet
		"not base64!",
	} {
		if _, err := ParseKey(s); !errors.Is(err, ErrKeyring) {
			t.Errorf("ParseKey(%q): %v", s, err)
		} else if s != "" && strings.Contains(err.Error(), s) {
			t.Errorf("ParseKey error quotes its input: %v", err)
		}
	}
	a, err1 := GenerateKey()
	b, err2 := GenerateKey()
	if err1 != nil || err2 != nil || len(a) != KeySize || bytes.Equal(a, b) {
		t.Fatal("GenerateKey")
	}
}

func writeFile(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "keys.json")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadKeyringFile(t *testing.T) {
	k1 := base64.StdEncoding.EncodeToString(key(1))
	k2 := base64.StdEncoding.EncodeToString(key(2))
	kr, err := LoadKeyringFile(writeFile(t, `{"primary": "k2", "keys": {"k1": "`+k1+`", "k2": "`+k2+`"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if kr.Primary() != "k2" || strings.Join(kr.IDs(), ",") != "k1,k2" || !bytes.Equal(kr.keys["k1"], key(1)) {
		t.Fatal("wrong keyring")
	}
	// Order of fields and whitespace do not matter.
	if _, err := LoadKeyringFile(writeFile(t, "{\n \"keys\": {\"k1\": \""+k1+"\"},\n \"primary\": \"k1\"\n}\n")); err != nil {
		t.Fatal(err)
	}

	_, err = LoadKeyringFile(filepath.Join(t.TempDir(), "missing.json"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}

	// A secret that must never show up in an error, even partly.
	const secret = "SECRETq0123456789abcdefghijklmnopqrstuvwxy="
	bad := map[string]string{
		"unknown field":      `{"primary": "k1", "keys": {"k1": "` + k1 + `"}, "extra": 1}`,
		"primary twice":      `{"primary": "k1", "primary": "k1", "keys": {"k1": "` + k1 + `"}}`,
		"keys twice":         `{"primary": "k1", "keys": {"k1": "` + k1 + `"}, "keys": {}}`,
		"id twice":           `{"primary": "k1", "keys": {"k1": "` + k1 + `", "k1": "` + k2 + `"}}`,
		"no primary":         `{"keys": {"k1": "` + k1 + `"}}`,
		"no keys":            `{"primary": "k1"}`,
		"empty keys":         `{"primary": "k1", "keys": {}}`,
		"primary not a key":  `{"primary": "k3", "keys": {"k1": "` + k1 + `"}}`,
		"key not a string":   `{"primary": "k1", "keys": {"k1": 12345}}`,
		"keys not an object": `{"primary": "k1", "keys": ["` + secret + `"]}`,
		"trailing data":      `{"primary": "k1", "keys": {"k1": "` + k1 + `"}} {}`,
		"not json":           `primary = k1`,
		"empty":              ``,
		"truncated":          `{"primary": "k1", "keys": {"k1": "` + secret[:20],
		"bad key":            `{"primary": "k1", "keys": {"k1": "` + secret + `"}}`,
		"short key":          `{"primary": "k1", "keys": {"k1": "` + secret[7:27] + `"}}`,
		"bad escape in key":  `{"primary": "k1", "keys": {"k1": "SECR\qET` + secret + `"}}`,
		"control in key":     "{\"primary\": \"k1\", \"keys\": {\"k1\": \"SECRET\x01" + secret + "\"}}",
		"bad id":             `{"primary": "k 1", "keys": {"k 1": "` + k1 + `"}}`,
		"case of field":      `{"Primary": "k1", "keys": {"k1": "` + k1 + `"}}`,
	}
	// Malformed JSON is located by line and column, never quoted.
	_, err = LoadKeyringFile(writeFile(t, "{\n  \"primary\": \"k1\",\n  \"keys\": {\"k1\": "+secret+"}\n}\n"))
	if msg := fmt.Sprint(err); !errors.Is(err, ErrKeyring) || !strings.Contains(msg, "line 3, column") {
		t.Errorf("syntax error on line 3: %v, want its line and column", err)
	}
	for name, content := range bad {
		_, err := LoadKeyringFile(writeFile(t, content))
		if !errors.Is(err, ErrKeyring) {
			t.Errorf("%s: %v, want ErrKeyring", name, err)
			continue
		}
		msg := err.Error()
		for _, leak := range []string{"SECR", "qET", secret[7:14], k1[:8], k2[:8], "'q'", "\\x01"} {
			if strings.Contains(msg, leak) {
				t.Errorf("%s: error %q contains key material %q", name, msg, leak)
			}
		}
	}
}

// TestRotation: objects wrapped under k1 stay readable after k2 becomes
// primary; new objects use k2; removing k1 makes old objects fail with
// ErrUnknownKey naming k1.
func TestRotation(t *testing.T) {
	k1, k2 := key(1), key(2)
	old, _ := NewKeyring("k1", map[string][]byte{"k1": k1})
	dk := testDataKey(t, "rotation")
	plain := []byte("written before the rotation")
	ct := seal(t, dk, 0, plain, 0)
	env, err := old.Wrap(context.Background(), dk, "", testName, Binding{PlainSize: int64(len(plain))})
	if err != nil || env.KeyID != "k1" {
		t.Fatal(env.KeyID, err)
	}
	meta := withObjectMeta(t, dk, env).Metadata()

	rotated, _ := NewKeyring("k2", map[string][]byte{"k1": k1, "k2": k2})
	env2, _, err := ParseMetadata(meta)
	if err != nil {
		t.Fatal(err)
	}
	dk2, _, err := rotated.Unwrap(context.Background(), env2, testName)
	if err != nil {
		t.Fatalf("unwrap after rotation: %v", err)
	}
	if got, err := openAll(dk2, 0, ct, int64(len(plain))); err != nil || !bytes.Equal(got, plain) {
		t.Fatal(err)
	}
	newEnv, err := rotated.Wrap(context.Background(), testDataKey(t, "new"), "", testName, Binding{})
	if err != nil || newEnv.KeyID != "k2" {
		t.Fatalf("new objects: %q, %v", newEnv.KeyID, err)
	}

	retired, _ := NewKeyring("k2", map[string][]byte{"k2": k2})
	_, _, err = retired.Unwrap(context.Background(), env2, testName)
	if !errors.Is(err, ErrUnknownKey) || !strings.Contains(err.Error(), `"k1"`) || errors.Is(err, ErrCorrupt) {
		t.Fatalf("retired key: %v", err)
	}
	// A different key under the same id fails authentication.
	impostor, _ := NewKeyring("k1", map[string][]byte{"k1": key(9)})
	if _, _, err := impostor.Unwrap(context.Background(), env2, testName); !errors.Is(err, ErrAuth) {
		t.Fatalf("other key, same id: %v", err)
	}
	if _, err := rotated.Wrap(context.Background(), dk, "k3", testName, Binding{}); !errors.Is(err, ErrUnknownKey) {
		t.Fatalf("Wrap with an unknown id: %v", err)
	}
}
