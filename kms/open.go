package kms

import (
	"fmt"
	"sort"
	"strings"
	"sync"
)

// An Opener makes a provider from the URI that names a master key (see
// Open) and returns the key's name at the provider, "" when the URI
// names the service alone. getenv reads the process environment.
type Opener func(uri string, getenv func(string) string) (p Provider, name string, err error)

var (
	openersMu sync.Mutex
	openers   = map[string]Opener{}
)

// Register makes Open handle URIs that start with prefix ("aws-kms://",
// "hcvault://", "pkcs11:"). A provider package registers itself in its
// init; a program links the providers it offers.
func Register(prefix string, o Opener) {
	openersMu.Lock()
	defer openersMu.Unlock()
	openers[prefix] = o
}

// Open makes the provider a master key URI names and returns the key's
// name at the provider ("" when the URI names no key):
//
//	aws-kms://<key id, ARN or alias>
//	hcvault://<host:port>/<mount>/keys/<name>
//	pkcs11:token=<label>;object=<label>?module-path=<path>&pin-source=file:<path>
//
// A scheme this program was built without is refused with the reason.
func Open(uri string, getenv func(string) string) (Provider, string, error) {
	openersMu.Lock()
	var o Opener
	var known []string
	for prefix, op := range openers {
		known = append(known, prefix)
		if strings.HasPrefix(uri, prefix) {
			o = op
		}
	}
	openersMu.Unlock()
	if o != nil {
		return o(uri, getenv)
	}
	if strings.HasPrefix(uri, "pkcs11:") {
		return nil, "", fmt.Errorf("this s3seal was built without PKCS#11 support: build it with -tags pkcs11 (and cgo), or use the s3seal-pkcs11 image")
	}
	sort.Strings(known)
	return nil, "", fmt.Errorf("%q is not a master key URI this s3seal knows (it knows %s)", redactURI(uri), strings.Join(known, ", "))
}

// redactURI drops a URI's query, which may name a PIN's source.
func redactURI(uri string) string {
	if i := strings.IndexByte(uri, '?'); i >= 0 {
		return uri[:i] + "?..."
	}
	return uri
}
