//go:build pkcs11 && cgo

package pkcs11

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/s3seal/s3seal/kms"
)

func TestParseURI(t *testing.T) {
	const q = "?module-path=/usr/lib/softhsm/libsofthsm2.so&pin-source=file:/etc/s3seal/pin"
	c, err := parseURI("pkcs11:token=s3seal;object=tenant-a" + q)
	if err != nil {
		t.Fatal(err)
	}
	if c.token.label != "s3seal" || c.object != "tenant-a" || c.modulePath != "/usr/lib/softhsm/libsofthsm2.so" || c.pinFile != "/etc/s3seal/pin" {
		t.Errorf("parsed %+v", c)
	}

	// Percent-decoding (RFC 7512): '+' stays itself.
	c, err = parseURI("pkcs11:token=My%20HSM;serial=00%2B1;slot-id=7;type=secret-key;object=tenant%2Da+b" +
		"?module-path=/opt/hsm/lib%20p11.so&pin-source=file:///etc/s3seal/pin")
	if err != nil {
		t.Fatal(err)
	}
	if c.token.label != "My HSM" || c.token.serial != "00+1" || c.token.slotID == nil || *c.token.slotID != 7 ||
		c.object != "tenant-a+b" || c.modulePath != "/opt/hsm/lib p11.so" || c.pinFile != "/etc/s3seal/pin" {
		t.Errorf("parsed %+v", c)
	}

	// No object: a provider without a default key.
	if c, err := parseURI("pkcs11:token=s3seal" + q); err != nil || c.object != "" {
		t.Errorf("without object=: %+v, %v", c, err)
	}
	if c, err := parseURI("pkcs11:token=s3seal?module-path=/m.so&pin-source=/etc/pin"); err != nil || c.pinFile != "/etc/pin" {
		t.Errorf("pin-source as a path: %+v, %v", c, err)
	}

	for uri, want := range map[string]string{
		"pkcs11:token=s3seal;object=a?module-path=/m.so&pin-value=1234":        "pin-source=file:",
		"pkcs11:token=s3seal;object=a?module-name=softhsm2&pin-source=file:/p": "module-path=",
		"pkcs11:token=s3seal;object=a;id=%01" + q:                              "CKA_ID",
		"pkcs11:token=s3seal;object=a;library-version=1" + q:                   `"library-version"`,
		"pkcs11:token=s3seal;object=a" + q + "&x-vendor=1":                     `"x-vendor"`,
		"pkcs11:object=a" + q:                                                    "token=",
		"pkcs11:token=s3seal;object=a?pin-source=file:/p":                        "module-path=",
		"pkcs11:token=s3seal;object=a?module-path=/m.so":                         "pin-source=",
		"pkcs11:token=s3seal;token=other" + q:                                    "twice",
		"pkcs11:token=s3seal;object=a%2" + q:                                     "percent",
		"pkcs11:token=s3seal;object" + q:                                         "name=value",
		"pkcs11:token=s3seal;object=a%20b" + q:                                   "printable ASCII",
		"pkcs11:token=s3seal;type=private-key" + q:                               "secret-key",
		"pkcs11:token=s3seal;slot-id=x" + q:                                      "slot-id",
		"pkcs11:token=s3seal?module-path=/m.so&pin-source=file:pin":              "absolute path",
		"pkcs11:token=s3seal?module-path=/m.so&pin-source=file://host/etc/pin":   "another host",
		"pkcs11:token=s3seal?module-path=/m.so&pin-source=|/usr/bin/pinentry":    "absolute path",
		"pkcs11:token=s3seal;object=" + strings.Repeat("k", maxLabel+1) + q:      "1 to 248",
		"pkcs11:token=s3seal" + q + "#frag":                                      "fragment",
		"pkcs11-x:token=s3seal" + q:                                              "pkcs11:",
		"pkcs11:token=s3seal?module-path=/m.so&pin-source=file:/p&pin-source=/q": "twice",
	} {
		_, err := parseURI(uri)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("parseURI(%q) = %v, want an error saying %q", uri, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "1234") {
			t.Errorf("parseURI(%q) quotes the PIN: %v", uri, err)
		}
	}
}

func TestReadPIN(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for data, want := range map[string]string{"1234\n": "1234", "1234": "1234", "12 34\r\n": "12 34"} {
		if pin, err := readPIN(write("pin", data, 0o600)); err != nil || pin != want {
			t.Errorf("readPIN of %q = %q, %v; want %q", data, pin, err, want)
		}
	}
	for _, mode := range []os.FileMode{0o644, 0o640, 0o604, 0o660} {
		p := write("open", "1234\n", mode)
		if _, err := readPIN(p); err == nil || !strings.Contains(err.Error(), "chmod 600 "+p) {
			t.Errorf("readPIN of a file of mode %04o: %v, want a refusal saying chmod 600", mode, err)
		}
		// Open refuses it before it loads any module.
		uri := "pkcs11:token=s3seal;object=a?module-path=/nonexistent.so&pin-source=file:" + p
		if _, _, err := kms.Open(uri, os.Getenv); err == nil || !strings.Contains(err.Error(), "chmod 600") {
			t.Errorf("kms.Open with a PIN file of mode %04o: %v", mode, err)
		}
	}
	if _, err := readPIN(write("empty", "\n", 0o600)); err == nil {
		t.Error("readPIN of an empty file succeeded")
	}
	if _, err := readPIN(write("big", strings.Repeat("1", maxPINFile+1), 0o600)); err == nil {
		t.Error("readPIN of a big file succeeded")
	}
	if _, err := readPIN(dir); err == nil {
		t.Error("readPIN of a directory succeeded")
	}
}
