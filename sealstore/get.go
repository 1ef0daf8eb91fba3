package sealstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/crypto"
)

// Range is a client's byte range in plaintext terms, as parsed from
// "bytes=First-Last", "bytes=First-" (Last < 0) or "bytes=-SuffixLen"
// (First < 0).
type Range struct {
	First, Last int64
	SuffixLen   int64
}

// Resolve applies r to an object of size bytes and returns the offset and
// length it selects, or InvalidRange.
func (r Range) Resolve(size int64) (off, n int64, err error) {
	switch {
	case r.First < 0:
		if r.SuffixLen <= 0 || size == 0 {
			return 0, 0, errorf("InvalidRange", "the requested range is not satisfiable")
		}
		off = max(0, size-r.SuffixLen)
		return off, size - off, nil
	case r.First >= size:
		return 0, 0, errorf("InvalidRange", "the requested range is not satisfiable")
	default:
		last := size - 1
		if r.Last >= 0 && r.Last < last {
			last = r.Last
		}
		return r.First, last - r.First + 1, nil
	}
}

// Head describes an object in plaintext terms. For an encrypted object the
// reported size and ETag are authenticated by unwrapping its data key.
func (s *Store) Head(ctx context.Context, bucket, key string) (ObjectInfo, error) {
	if err := CheckKey(key); err != nil {
		return ObjectInfo{}, err
	}
	bi, err := s.be.HeadObject(ctx, bucket, key)
	if err != nil {
		return ObjectInfo{}, err
	}
	info, _, err := s.describe(bucket, bi)
	return info, err
}

// Reader is the plaintext body of a GET. Off and Len give the byte range it
// holds; Partial is true when a range was asked for.
type Reader struct {
	io.Reader
	Off, Len int64
	Partial  bool
	body     io.Closer
}

// Close releases the backend response.
func (r *Reader) Close() error { return r.body.Close() }

// Get opens an object, or the plaintext range rng of it, for reading. The
// first segment is authenticated before Get returns, so a corrupt object
// whose damage is at the start fails here rather than mid-stream; later
// damage surfaces as a read error wrapping ErrIntegrity. The caller closes
// the Reader.
func (s *Store) Get(ctx context.Context, bucket, key string, rng *Range) (ObjectInfo, *Reader, error) {
	if err := CheckKey(key); err != nil {
		return ObjectInfo{}, nil, err
	}
	if rng == nil {
		obj, err := s.be.GetObject(ctx, backend.GetInput{Bucket: bucket, Key: key})
		if err != nil {
			return ObjectInfo{}, nil, err
		}
		info, rd, err := s.open(obj, bucket, 0, -1)
		if err != nil {
			obj.Body.Close()
		}
		return info, rd, err
	}
	// A range needs the plaintext size first. The ranged GET is pinned to
	// the version the HEAD saw; if the object changed in between, start over
	// once.
	for attempt := 0; ; attempt++ {
		info, err := s.Head(ctx, bucket, key)
		if err != nil {
			return info, nil, err
		}
		off, n, err := rng.Resolve(info.Size)
		if err != nil {
			return info, nil, err
		}
		br := &backend.ByteRange{Off: off, Len: n}
		if info.Encrypted {
			br.Off, br.Len = crypto.CipherRange(info.Size, off, n)
		}
		obj, err := s.be.GetObject(ctx, backend.GetInput{Bucket: bucket, Key: key, Range: br, IfMatch: info.backendETag})
		if backend.ErrorCode(err) == "PreconditionFailed" && attempt == 0 {
			continue
		}
		if err != nil {
			return info, nil, err
		}
		_, rd, err := s.open(obj, bucket, off, n)
		if err != nil {
			obj.Body.Close()
			return info, nil, err
		}
		rd.Partial = true
		return info, rd, nil
	}
}

// open wraps a backend response in a decrypting reader. n < 0 means the
// whole object (obj holds all of it).
func (s *Store) open(obj *backend.Object, bucket string, off, n int64) (ObjectInfo, *Reader, error) {
	describe := s.describe
	if n >= 0 {
		describe = s.describeRanged
	}
	info, dk, err := describe(bucket, obj.Info)
	if err != nil {
		return info, nil, err
	}
	if !info.Encrypted {
		// Only with AllowPlaintextReads: describe refuses it otherwise.
		slog.Warn("serving an object that is not encrypted (plaintext reads are allowed)", "bucket", bucket, "key", info.Key)
		if n < 0 {
			n = info.Size
		}
		exact := &exactReader{r: obj.Body, left: n, bucket: bucket, key: info.Key}
		return info, &Reader{Reader: exact, Off: off, Len: n, body: obj.Body}, nil
	}
	if n < 0 {
		n = info.Size
	}
	plain, err := crypto.NewReader(obj.Body, dk, crypto.Stream{}, info.Size, off, n)
	if err != nil {
		return info, nil, integrityErr(bucket, info.Key, err)
	}
	pr := &primedReader{r: plain, bucket: bucket, key: info.Key}
	if err := pr.prime(); err != nil {
		return info, nil, err
	}
	return info, &Reader{Reader: pr, Off: off, Len: n, body: obj.Body}, nil
}

// describeRanged is describe for a ranged response, whose size is that of
// the range: the object's size comes from the (authenticated) metadata; the
// HEAD before it described the object and the backend ETag pinned the
// version.
func (s *Store) describeRanged(bucket string, bi backend.ObjectInfo) (ObjectInfo, *crypto.DataKey, error) {
	env, encrypted, err := crypto.ParseMetadata(bi.Meta)
	if err != nil {
		return ObjectInfo{}, nil, integrityErr(bucket, bi.Key, err)
	}
	if encrypted && !env.Multipart {
		bi.Size = crypto.CiphertextSize(env.PlainSize)
	}
	return s.describe(bucket, bi)
}

// primedReader reads ahead the first block so that damage at the start of
// an object is reported before any response header is sent, and turns
// authentication failures into integrity errors.
type primedReader struct {
	r           io.Reader
	buf         []byte
	bucket, key string
	err         error
}

func (p *primedReader) prime() error {
	p.buf = make([]byte, 32<<10)
	n := 0
	for n < len(p.buf) {
		m, err := p.r.Read(p.buf[n:])
		n += m
		if err == io.EOF { // the crypto reader's verified end, nothing else
			p.err = io.EOF
			break
		}
		if err != nil {
			return p.wrap(err)
		}
	}
	p.buf = p.buf[:n]
	return nil
}

func (p *primedReader) wrap(err error) error {
	if errors.Is(err, crypto.ErrAuth) || errors.Is(err, crypto.ErrCorrupt) || errors.Is(err, io.ErrUnexpectedEOF) {
		return integrityErr(p.bucket, p.key, err)
	}
	return err
}

func (p *primedReader) Read(b []byte) (int, error) {
	if len(p.buf) > 0 {
		n := copy(b, p.buf)
		p.buf = p.buf[n:]
		return n, nil
	}
	if p.err != nil {
		return 0, p.err
	}
	n, err := p.r.Read(b)
	if err != nil && !errors.Is(err, io.EOF) {
		err = p.wrap(err)
	}
	return n, err
}

// exactReader passes an unencrypted object's body on and makes a body that
// ends before its length an integrity error, never a clean end.
type exactReader struct {
	r           io.Reader
	left        int64
	bucket, key string
}

func (e *exactReader) Read(b []byte) (int, error) {
	n, err := e.r.Read(b)
	e.left -= int64(n)
	if e.left > 0 && (err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF)) {
		err = integrityErr(e.bucket, e.key, fmt.Errorf("the backend body ended %d bytes short", e.left))
	}
	return n, err
}
