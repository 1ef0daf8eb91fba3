// Package audit keeps s3seal's audit trail: one JSON line per access
// decision and per use of a master key, each chained to the one before
// by a keyed hash, so that a line changed, removed or reordered is found
// by Verify. Writer appends and rotates the trail; Verify checks it.
// It knows nothing of S3 or of keys beyond the chain key: its callers
// hand it plain records.
//
// docs/DESIGN.md ("The audit trail") says why it is so; docs/FORMAT.md
// ("The audit trail") specifies the lines.
package audit

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
)

// KeySize is the size of the chain key.
const KeySize = 32

// The kinds of line (Line.Type).
const (
	TypeStart      = "start"      // a file's first line, or a restart: the anchor
	TypeAccess     = "access"     // an access decision
	TypeKey        = "key"        // a use of a master key
	TypeCheckpoint = "checkpoint" // the last line written before a rotation or a clean stop
)

// Access is one access decision, as the S3 front took it.
type Access struct {
	RequestID string // the x-amz-request-id answered
	AccessKey string // "" for an anonymous caller
	Account   string
	Op        string // the operation's S3 action name, as the policy evaluation uses it
	Bucket    string
	Key       string
	VersionID string // the version the request names, "" for none
	Allow     bool
	Rule      string // the rule that decided (access.Decision.Rule)
	Reason    string // its words
}

// KeyUse is one use of a master key: a data key wrapped or unwrapped
// under it, or a call to the key service (KMS) that holds it.
type KeyUse struct {
	RequestID string
	Op        string // "wrap", "unwrap", "kms:generate", "kms:decrypt", ...
	KeyID     string // the master key's id (an external id for a KMS key)
	Bucket    string
	Key       string
	Outcome   string // "ok", or the failure's kind
}

// Line is one line of the trail, as Verify reads it back. Its fields are
// written in this order, the empty ones left out, then "mac".
type Line struct {
	Seq       uint64 `json:"seq"`
	Time      string `json:"time"`
	Type      string `json:"type"`
	RequestID string `json:"request_id,omitempty"`
	AccessKey string `json:"access_key,omitempty"`
	Account   string `json:"account,omitempty"`
	Op        string `json:"op,omitempty"`
	Bucket    string `json:"bucket,omitempty"`
	Key       string `json:"key,omitempty"`
	VersionID string `json:"version_id,omitempty"`
	Decision  string `json:"decision,omitempty"` // "allow" or "deny"
	Rule      string `json:"rule,omitempty"`
	Reason    string `json:"reason,omitempty"`
	KeyID     string `json:"key_id,omitempty"`
	Outcome   string `json:"outcome,omitempty"`
	// A start line's anchor: the sequence number and MAC of the line
	// before it (the previous file's last line); 0 and 64 zeros for the
	// first line of a new trail.
	PrevSeq uint64 `json:"prev_seq,omitempty"`
	PrevMAC string `json:"prev_mac,omitempty"`
	MAC     string `json:"mac"`
}

// reasonRotation is the reason of a rotation's checkpoint, which Verify
// tells from a clean stop's ("shutdown"): the trail goes on in the next
// file.
const reasonRotation = "rotation"

// macSuffix opens the last field of every line: `,"mac":"` then 64 hex
// digits, `"}` and a newline.
var macSuffix = []byte(`,"mac":"`)

// macLen is the length of a MAC in hex.
const macLen = 2 * sha256.Size

// zeroMAC is the MAC before a trail's first line.
var zeroMAC [sha256.Size]byte

// chain computes the MACs of a trail: HMAC-SHA256 under the chain key
// of the previous line's MAC (32 bytes) followed by the line's body, its
// bytes up to the `,"mac":"` that ends them.
type chain struct {
	h   hash.Hash
	sum []byte // Sum's buffer, reused: a line allocates nothing
}

func newChain(key []byte) (*chain, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("the audit chain key is %d bytes, want %d", len(key), KeySize)
	}
	return &chain{h: hmac.New(sha256.New, key), sum: make([]byte, 0, 2*sha256.Size)}, nil
}

// next returns the MAC of body after prev.
func (c *chain) next(prev [sha256.Size]byte, body []byte) (out [sha256.Size]byte) {
	c.h.Reset()
	c.sum = append(c.sum[:0], prev[:]...) // prev[:] itself would escape
	c.h.Write(c.sum)
	c.h.Write(body)
	c.sum = c.h.Sum(c.sum[:0])
	copy(out[:], c.sum)
	return out
}

// appendLine appends to dst the line of body (a JSON object without its
// closing brace) sealed with mac, newline included.
func appendLine(dst, body []byte, mac [sha256.Size]byte) []byte {
	dst = append(dst, body...)
	dst = append(dst, macSuffix...)
	dst = hex.AppendEncode(dst, mac[:])
	return append(dst, '"', '}', '\n')
}

// errNotLine is the error of a line that is no audit line.
var errNotLine = errors.New(`not an audit line: want a JSON object ending in ,"mac":"<64 lower-case hex digits>"}`)

// splitLine parses one line (without its newline): its body, its MAC and
// its fields.
func splitLine(line []byte) (body []byte, mac [sha256.Size]byte, l Line, err error) {
	tail := len(macSuffix) + macLen + 2
	if len(line) < tail+1 || !bytes.HasSuffix(line, []byte(`"}`)) {
		return nil, mac, l, errNotLine
	}
	body = line[:len(line)-tail]
	if !bytes.Equal(line[len(body):len(body)+len(macSuffix)], macSuffix) {
		return nil, mac, l, errNotLine
	}
	digits := line[len(body)+len(macSuffix) : len(line)-2]
	if bytes.ContainsAny(digits, "ABCDEF") { // the MAC's own bytes are not malleable
		return nil, mac, l, errNotLine
	}
	if _, err := hex.Decode(mac[:], digits); err != nil {
		return nil, mac, l, errNotLine
	}
	if err := json.Unmarshal(line, &l); err != nil {
		return nil, mac, l, fmt.Errorf("not an audit line: %v", err)
	}
	return body, mac, l, nil
}

// parseMAC reads a MAC in hex ("" is the zero MAC).
func parseMAC(s string) ([sha256.Size]byte, error) {
	var m [sha256.Size]byte
	if s == "" {
		return m, nil
	}
	if len(s) != macLen {
		return m, fmt.Errorf("a MAC of %d hex digits, want %d", len(s), macLen)
	}
	_, err := hex.Decode(m[:], []byte(s))
	return m, err
}

// ParseKey reads a chain key as `s3seal keygen` prints it: standard
// base64 of 32 bytes, surrounding space ignored.
func ParseKey(text []byte) ([]byte, error) {
	t := bytes.TrimSpace(text)
	k, err := base64.StdEncoding.Strict().DecodeString(string(t))
	if err != nil || len(k) != KeySize {
		return nil, errors.New("the audit key is not base64 of 32 bytes (s3seal keygen makes one)")
	}
	return k, nil
}
