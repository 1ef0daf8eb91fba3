package crypto

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/binary"
	"io"
)

// OIDSize is the size of an object id.
const OIDSize = 16

// Config selects the source of randomness. The zero Config uses
// crypto/rand and is what production code uses (through [NewDataKey] and
// [Keyring.Unwrap]). A Config is passed by value and never modified.
type Config struct {
	// Rand is the source of data keys, object ids and nonces (of every
	// segment and of the wrapped key) for the data keys made from this
	// Config. Default: crypto/rand.Reader. Only tests and test vectors
	// should set it: a predictable Rand repeats keys and nonces, which
	// breaks AES-GCM.
	Rand io.Reader
}

func (c Config) random() io.Reader {
	if c.Rand == nil {
		return rand.Reader
	}
	return c.Rand
}

// DataKey is the per-object data key (DEK) with its object id (oid): the
// encryption context of one single-PUT object or one multipart upload. It
// seals the segments of every stream of that object ([NewWriter]) and opens
// them ([NewReader]).
//
// A DataKey is safe for concurrent use by several writers and readers,
// provided its Rand is (crypto/rand is).
type DataKey struct {
	oid  [OIDSize]byte
	dek  [KeySize]byte // kept for Keyring.Wrap
	aead cipher.AEAD
	rand io.Reader
	// derived marks a content key made by ForCustomer: it is never wrapped.
	derived bool
}

// NewDataKey returns a fresh data key and object id from crypto/rand: call
// it once per single-PUT object or copy, and once per multipart upload.
func NewDataKey() (*DataKey, error) { return Config{}.NewDataKey() }

// NewDataKey returns a data key whose DEK (32 bytes) and then oid (16
// bytes) are read from c.Rand; later nonces come from c.Rand too.
func (c Config) NewDataKey() (*DataKey, error) {
	var buf [KeySize + OIDSize]byte
	if _, err := io.ReadFull(c.random(), buf[:]); err != nil {
		return nil, err
	}
	defer clear(buf[:])
	return c.DataKeyFrom(buf[:KeySize], [OIDSize]byte(buf[KeySize:]))
}

// DataKeyFrom returns the data key with the given 32-byte DEK and oid,
// drawing nonces from c.Rand. Production code gets data keys from
// [NewDataKey] and [Keyring.Unwrap]; this is for test vectors and for
// implementations of the format that are checked against them.
func (c Config) DataKeyFrom(dek []byte, oid [OIDSize]byte) (*DataKey, error) {
	if len(dek) != KeySize {
		return nil, newErr(ErrKeyring, "data key is %d bytes, want %d", len(dek), KeySize)
	}
	block, err := aes.NewCipher(dek)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	dk := &DataKey{oid: oid, aead: aead, rand: c.random()}
	copy(dk.dek[:], dek)
	return dk, nil
}

// OID returns the object id.
func (dk *DataKey) OID() [OIDSize]byte { return dk.oid }

// StreamIDSize is the size of a stream id.
const StreamIDSize = 8

// Stream names one sealed stream of an object: the whole of a single-PUT
// object is the zero Stream; a multipart part is Stream{Part: the client's
// part number (1..10000), ID: random per upload attempt of that part}. The
// ID tells apart two uploads of the same part number under one data key,
// so the manifest can name the one that counts and a reader refuses the
// other (the store cannot swap in an earlier upload of a part).
type Stream struct {
	Part uint32
	ID   [StreamIDSize]byte
}

// NewStreamID returns a random stream id from crypto/rand.
func NewStreamID() ([StreamIDSize]byte, error) {
	var id [StreamIDSize]byte
	_, err := io.ReadFull(rand.Reader, id[:])
	return id, err
}

const (
	segAADLabel = "s3seal v1 seg\x00"
	segAADSize  = len(segAADLabel) + OIDSize + 4 + StreamIDSize + 8 + 1 // 51
)

// segAAD is the associated data of one segment: "s3seal v1 seg\x00" ||
// oid || u32be(part) || streamID (8) || u64be(index) || u8(final).
type segAAD [segAADSize]byte

func (a *segAAD) init(oid [OIDSize]byte, s Stream) {
	n := copy(a[:], segAADLabel)
	n += copy(a[n:], oid[:])
	binary.BigEndian.PutUint32(a[n:], s.Part)
	copy(a[n+4:], s.ID[:])
}

func (a *segAAD) set(index uint64, final bool) []byte {
	off := len(segAADLabel) + OIDSize + 4 + StreamIDSize
	binary.BigEndian.PutUint64(a[off:], index)
	a[segAADSize-1] = 0
	if final {
		a[segAADSize-1] = 1
	}
	return a[:]
}
