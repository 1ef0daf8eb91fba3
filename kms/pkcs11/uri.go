//go:build pkcs11 && cgo

package pkcs11

import (
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// maxLabel bounds a key label: "pkcs11:" and the label make an external
// id of at most crypto.MaxExternalKeyID (255) bytes.
const maxLabel = 255 - len("pkcs11:")

// maxPINFile bounds what is read of a PIN file.
const maxPINFile = 4096

// tokenSpec says which token a URI names: every field given must match.
type tokenSpec struct {
	label, manufacturer, model, serial string
	slotID                             *uint
}

func (t tokenSpec) matches(slot uint, label, manufacturer, model, serial string) bool {
	return label == t.label &&
		(t.manufacturer == "" || manufacturer == t.manufacturer) &&
		(t.model == "" || model == t.model) &&
		(t.serial == "" || serial == t.serial) &&
		(t.slotID == nil || slot == *t.slotID)
}

// config is what a master key URI says.
type config struct {
	token      tokenSpec
	object     string // the key's label, "" for none
	modulePath string
	pinFile    string
}

// parseURI reads an RFC 7512 URI of a master key (see the package
// comment). Its errors never quote the query, which may name a secret.
func parseURI(uri string) (config, error) {
	var c config
	rest, ok := strings.CutPrefix(uri, "pkcs11:")
	if !ok {
		return c, fmt.Errorf("a PKCS#11 URI starts with %q", "pkcs11:")
	}
	path, query, _ := strings.Cut(rest, "?")
	if strings.Contains(path, "#") || strings.Contains(query, "#") {
		return c, fmt.Errorf("a PKCS#11 URI of a key has no fragment (#)")
	}
	seen := map[string]bool{}
	for attr := range strings.SplitSeq(path, ";") {
		if attr == "" {
			continue
		}
		name, value, err := attribute(attr, seen, "path")
		if err != nil {
			return c, err
		}
		switch name {
		case "token":
			c.token.label = value
		case "manufacturer":
			c.token.manufacturer = value
		case "model":
			c.token.model = value
		case "serial":
			c.token.serial = value
		case "slot-id":
			n, err := strconv.ParseUint(value, 10, 0)
			if err != nil {
				return c, fmt.Errorf("PKCS#11 URI: slot-id %q is not a decimal number", value)
			}
			id := uint(n)
			c.token.slotID = &id
		case "object":
			c.object = value
		case "type":
			if value != "secret-key" {
				return c, fmt.Errorf("PKCS#11 URI: type=%s: a master key is a secret key (type=secret-key)", value)
			}
		case "id":
			return c, fmt.Errorf("PKCS#11 URI: id= is not taken: a master key is named by its label (object=), and its versions are the objects of that label, told apart by CKA_ID")
		default:
			return c, fmt.Errorf("PKCS#11 URI: path attribute %q is not one s3seal takes (token, manufacturer, model, serial, slot-id, object, type)", name)
		}
	}
	for attr := range strings.SplitSeq(query, "&") {
		if attr == "" {
			continue
		}
		name, value, err := attribute(attr, seen, "query")
		if err != nil {
			return c, err
		}
		switch name {
		case "module-path":
			c.modulePath = value
		case "pin-source":
			if c.pinFile, err = pinSourceFile(value); err != nil {
				return c, err
			}
		case "pin-value":
			return c, fmt.Errorf("PKCS#11 URI: pin-value is refused, since the PIN would sit in configuration, process listings and logs: put it in a file only s3seal's user may read and give pin-source=file:<path>")
		case "module-name":
			return c, fmt.Errorf("PKCS#11 URI: module-name is not taken: give the module's file with module-path=<path>")
		default:
			return c, fmt.Errorf("PKCS#11 URI: query attribute %q is not one s3seal takes (module-path, pin-source)", name)
		}
	}
	switch {
	case c.token.label == "":
		return c, fmt.Errorf("PKCS#11 URI: name the token by its label (token=<label>)")
	case c.modulePath == "":
		return c, fmt.Errorf("PKCS#11 URI: name the module (?module-path=<path of the PKCS#11 library>)")
	case c.pinFile == "":
		return c, fmt.Errorf("PKCS#11 URI: name the file of the user PIN (&pin-source=file:<path>)")
	}
	if c.object != "" {
		if err := checkLabel(c.object); err != nil {
			return c, fmt.Errorf("PKCS#11 URI: object=: %v", err)
		}
	}
	return c, nil
}

// attribute splits one name=value attribute of a URI's path or query and
// percent-decodes its value; an attribute given twice is refused.
func attribute(attr string, seen map[string]bool, part string) (string, string, error) {
	name, raw, ok := strings.Cut(attr, "=")
	if !ok || name == "" {
		return "", "", fmt.Errorf("PKCS#11 URI: %s attribute %q is not name=value", part, truncate(name))
	}
	if seen[name] {
		return "", "", fmt.Errorf("PKCS#11 URI: %s is given twice", name)
	}
	seen[name] = true
	value, err := url.PathUnescape(raw)
	if err != nil {
		return "", "", fmt.Errorf("PKCS#11 URI: the value of %s is not percent-encoded correctly", name)
	}
	return name, value, nil
}

// pinSourceFile returns the file a pin-source names: file:<path>,
// file:///<path> (or file://localhost/<path>) or an absolute path.
func pinSourceFile(src string) (string, error) {
	p := src
	if rest, ok := strings.CutPrefix(src, "file:"); ok {
		p = rest
		if host, ok := strings.CutPrefix(rest, "//"); ok {
			i := strings.IndexByte(host, '/')
			if i < 0 || (host[:i] != "" && host[:i] != "localhost") {
				return "", fmt.Errorf("PKCS#11 URI: pin-source names a file on another host")
			}
			p = host[i:]
		}
	}
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("PKCS#11 URI: pin-source must name a file by its absolute path (pin-source=file:/path/to/pin)")
	}
	return p, nil
}

// checkLabel refuses a label that cannot be part of an external id.
func checkLabel(label string) error {
	if label == "" || len(label) > maxLabel {
		return fmt.Errorf("a key label is 1 to %d bytes, not %d", maxLabel, len(label))
	}
	for i := 0; i < len(label); i++ {
		if c := label[i]; c < 0x21 || c > 0x7e {
			return fmt.Errorf("key label %q is not printable ASCII without spaces, which s3seal's key ids are", label)
		}
	}
	return nil
}

func truncate(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// readPIN reads the user PIN from path. Like every file of secrets
// s3seal reads, the file must be regular and private to its owner: its
// group or others could read the PIN, or replace it. A trailing newline
// is dropped.
func readPIN(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", err
	}
	if !st.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a regular file", path)
	}
	if perm := st.Mode().Perm(); perm&0o077 != 0 {
		return "", fmt.Errorf("%s holds secrets but its group or others may access it (mode %04o); run: chmod 600 %s", path, perm, path)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxPINFile+1))
	if err != nil {
		return "", err
	}
	if len(data) > maxPINFile {
		return "", fmt.Errorf("%s is larger than %d bytes, which no PIN is", path, maxPINFile)
	}
	pin := strings.TrimSuffix(strings.TrimSuffix(string(data), "\n"), "\r")
	if pin == "" {
		return "", fmt.Errorf("%s is empty", path)
	}
	return pin, nil
}
