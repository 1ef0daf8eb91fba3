package s3api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"slices"
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
	return Credentials{accessKey: {AccessKey: accessKey, SecretKey: secretKey, Read: []string{"*"}, Write: []string{"*"}}}
}

// LoadCredentialsFile reads a JSON file of the form
//
//	{"credentials": [{"access_key": "...", "secret_key": "...",
//	  "read": ["*"], "write": ["backups"], "key_id": "k2"}]}
//
// Write access implies read access. Errors never quote secrets.
func LoadCredentialsFile(path string) (Credentials, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Credentials []Credential `json:"credentials"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("credentials file %s: %w", path, err)
	}
	out := Credentials{}
	for i, c := range doc.Credentials {
		switch {
		case c.AccessKey == "" || c.SecretKey == "":
			return nil, fmt.Errorf("credentials file %s: entry %d needs access_key and secret_key", path, i+1)
		case out[c.AccessKey].AccessKey != "":
			return nil, fmt.Errorf("credentials file %s: access key %q appears twice", path, c.AccessKey)
		}
		out[c.AccessKey] = c
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("credentials file %s: no credentials", path)
	}
	return out, nil
}

// canRead reports whether the client may read bucket.
func (c Credential) canRead(bucket string) bool {
	return allows(c.Read, bucket) || allows(c.Write, bucket)
}

// canWrite reports whether the client may write bucket.
func (c Credential) canWrite(bucket string) bool { return allows(c.Write, bucket) }

func allows(list []string, bucket string) bool {
	return slices.Contains(list, "*") || slices.Contains(list, bucket)
}
