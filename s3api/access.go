package s3api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/s3seal/s3seal/access"
)

// Credential is one client of s3seal: the key pair it signs with, the
// buckets it may read and write ("*" for all), and the master key its new
// objects are sealed with ("" = the keyring's primary).
type Credential struct {
	AccessKey string   `json:"access_key"`
	SecretKey string   `json:"secret_key"`
	Read      []string `json:"read"`
	Write     []string `json:"write"`
	KeyID     string   `json:"key_id,omitempty"`
	// SSEKMSToStore passes this credential's SSE-KMS writes to the
	// object store, which then holds the keys (on top of s3seal's
	// sealing under KeyID), as when s3seal has no key service; without
	// it, a key service seals them under their KMS key (ssekms.go).
	SSEKMSToStore bool `json:"sse_kms_to_store,omitempty"`
	// KMSKeys are the KMS keys this credential may have its writes
	// sealed under, as requests name them (an ARN, alias, key id, a keys
	// file's id), besides its own key_id and the default KMS key; "*":
	// any key s3seal's KMS credential may use. Every KMS call is
	// s3seal's own, so this list is the only check of which key a
	// request may name (ssekms.go).
	KMSKeys []string `json:"kms_keys,omitempty"`
	// KafkaTopics are the topics this credential may produce to and
	// consume from through the LFS Kafka listener, where its access key
	// is the SASL user name and its secret key the password: exact
	// names, or prefixes ending in "*" ("*": every topic). None: the
	// credential cannot use the listener's topics.
	KafkaTopics []string `json:"kafka_topics,omitempty"`
	// Admin may read and change what the object store enforces for a
	// bucket (policy, CORS, lifecycle, ownership controls, ACLs, the
	// Object Lock configuration) and bypass GOVERNANCE retention.
	Admin bool `json:"admin,omitempty"`
	// CanonicalID, DisplayName, Account and Email name the credential as
	// a principal (principal.go); each has a default but Email.
	CanonicalID string `json:"canonical_id,omitempty"`
	DisplayName string `json:"display_name,omitempty"`
	Account     string `json:"account,omitempty"`
	Email       string `json:"email,omitempty"`
}

// Credentials is the set of clients s3seal accepts, by access key. It
// implements sigv4.Credentials.
type Credentials map[string]Credential

// Secret returns the secret key of accessKey.
func (c Credentials) Secret(accessKey string) (string, bool) {
	cr, ok := c[accessKey]
	return cr.SecretKey, ok
}

// SingleCredential allows one client full access to every bucket.
func SingleCredential(accessKey, secretKey string) Credentials {
	return Credentials{accessKey: {AccessKey: accessKey, SecretKey: secretKey, Read: []string{"*"}, Write: []string{"*"}, KMSKeys: []string{"*"}, KafkaTopics: []string{"*"}}}
}

// MayUseTopic reports whether the credential may use topic over the LFS
// Kafka listener (KafkaTopics).
func (c Credential) MayUseTopic(topic string) bool {
	for _, p := range c.KafkaTopics {
		if prefix, ok := strings.CutSuffix(p, "*"); ok && strings.HasPrefix(topic, prefix) || p == topic {
			return true
		}
	}
	return false
}

// ParseCredentials parses a JSON document of the form
//
//	{"credentials": [{"access_key": "...", "secret_key": "...",
//	  "read": ["*"], "write": ["backups"], "key_id": "k2"}]}
//
// Write access implies read access. Errors never quote secrets, not even
// one character of malformed JSON: they give a line and a column.
func ParseCredentials(data []byte) (Credentials, error) {
	var doc struct {
		Credentials []Credential `json:"credentials"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	err := dec.Decode(&doc)
	if err == nil && dec.More() {
		err = errors.New("data after the JSON document")
	}
	if err != nil {
		return nil, jsonError(err, data, dec.InputOffset())
	}
	out := Credentials{}
	for i, c := range doc.Credentials {
		switch {
		case c.AccessKey == "" || c.SecretKey == "":
			return nil, fmt.Errorf("entry %d needs access_key and secret_key", i+1)
		case out[c.AccessKey].AccessKey != "":
			return nil, fmt.Errorf("access key %q appears twice", c.AccessKey)
		}
		if err := checkPrincipalFields(c); err != nil {
			return nil, fmt.Errorf("entry %d (%s): %v", i+1, c.AccessKey, err)
		}
		out[c.AccessKey] = c
	}
	if len(out) == 0 {
		return nil, errors.New("no credentials")
	}
	if err := uniquePrincipals(doc.Credentials); err != nil {
		return nil, err
	}
	return out, nil
}

// Check refuses two credentials with one canonical id (given or derived)
// or one e-mail address, as ParseCredentials does: a caller that adds a
// credential of its own checks the set again.
func (c Credentials) Check() error {
	all := make([]Credential, 0, len(c))
	for _, k := range slices.Sorted(maps.Keys(c)) {
		all = append(all, c[k])
	}
	return uniquePrincipals(all)
}

// checkPrincipalFields checks the names a credential gives itself: a
// canonical id of up to 128 characters without spaces, quotes, commas or
// "=" (it is written in x-amz-grant-* headers as id="..."), an account of
// 12 digits, an e-mail address with an "@".
func checkPrincipalFields(c Credential) error {
	switch {
	case c.CanonicalID != "" && (len(c.CanonicalID) > 128 || strings.ContainsAny(c.CanonicalID, " \t\r\n\",=")):
		return errors.New("canonical_id must be up to 128 characters without spaces, quotes, commas or \"=\"")
	case c.Account != "" && (len(c.Account) != 12 || strings.Trim(c.Account, "0123456789") != ""):
		return errors.New("account must be 12 digits")
	case c.Email != "" && (!strings.Contains(c.Email, "@") || strings.ContainsAny(c.Email, " \t\r\n\",")):
		return errors.New("email must be an e-mail address")
	case len(c.DisplayName) > 128:
		return errors.New("display_name must be up to 128 characters")
	}
	return nil
}

// uniquePrincipals refuses two credentials with one canonical id (given
// or derived) or one e-mail address: an ACL grant names one principal.
func uniquePrincipals(creds []Credential) error {
	ids, emails := map[string]string{}, map[string]string{}
	for _, c := range creds {
		p := c.principal()
		if other, ok := ids[p.CanonicalID]; ok {
			return fmt.Errorf("credentials %s and %s have the same canonical_id", other, c.AccessKey)
		}
		ids[p.CanonicalID] = c.AccessKey
		if p.Email == "" {
			continue
		}
		e := strings.ToLower(p.Email)
		if other, ok := emails[e]; ok {
			return fmt.Errorf("credentials %s and %s have the same email", other, c.AccessKey)
		}
		emails[e] = c.AccessKey
	}
	return nil
}

// jsonError describes a decoding error by its place in data. encoding/json
// quotes the offending character of a syntax error and the digits of a
// mistyped number, either of which may belong to a secret.
func jsonError(err error, data []byte, off int64) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Errorf("malformed JSON at %s", lineCol(data, se.Offset))
	case errors.As(err, &te):
		return fmt.Errorf("wrong type for %q (want %s) at %s", te.Field, te.Type, lineCol(data, te.Offset))
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return errors.New("unexpected end of JSON")
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return fmt.Errorf("%s at %s", strings.TrimPrefix(err.Error(), "json: "), lineCol(data, off))
	}
	return fmt.Errorf("malformed JSON at %s", lineCol(data, off))
}

// lineCol turns a byte offset into "line L, column C" (1-based).
func lineCol(data []byte, off int64) string {
	before := data[:min(max(off, 0), int64(len(data)))]
	line := bytes.Count(before, []byte{'\n'}) + 1
	col := len(before) - bytes.LastIndexByte(before, '\n')
	return fmt.Sprintf("line %d, column %d", line, col)
}

// canRead reports whether the client may read bucket.
func (c Credential) canRead(bucket string) bool {
	return allows(c.Read, bucket) || allows(c.Write, bucket)
}

// canWrite reports whether the client may write bucket.
func (c Credential) canWrite(bucket string) bool { return allows(c.Write, bucket) }

// lists says where c's lists name bucket itself rather than through "*":
// the operator granted c that bucket, whoever owns it, and package access
// lets it in as the owner's account would be (Lists).
func (c Credential) lists(bucket string) access.Lists {
	return access.Lists{Read: slices.Contains(c.Read, bucket), Write: slices.Contains(c.Write, bucket)}
}

func allows(list []string, bucket string) bool {
	return slices.Contains(list, "*") || slices.Contains(list, bucket)
}
