package sealstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/crypto"
)

// Range is a client's byte range in plaintext terms, as parsed from
// "bytes=First-Last", "bytes=First-" (Last < 0) or "bytes=-SuffixLen"
// (First < 0).
type Range struct {
	First, Last int64
	SuffixLen   int64
	// Part, when not 0, selects part Part of a multipart object instead
	// (GET or HEAD with ?partNumber=); part 1 of a single-PUT object is the
	// whole object, as in S3.
	Part int
}

// Resolve applies r to an object of size bytes and returns the offset and
// length it selects, or InvalidRange.
func (r Range) Resolve(size int64) (off, n int64, err error) {
	switch {
	case r.First < 0:
		if r.SuffixLen <= 0 {
			return 0, 0, errorf("InvalidRange", "The requested range is not satisfiable")
		}
		if size == 0 {
			// S3 answers "bytes=-N" on an empty object with the whole
			// (empty) object, 200 and no Content-Range.
			return 0, 0, nil
		}
		off = max(0, size-r.SuffixLen)
		return off, size - off, nil
	case r.First >= size:
		return 0, 0, errorf("InvalidRange", "The requested range is not satisfiable")
	default:
		last := size - 1
		if r.Last >= 0 && r.Last < last {
			last = r.Last
		}
		return r.First, last - r.First + 1, nil
	}
}

// partNotSatisfiable is S3's answer to a part number beyond the object's
// parts (416), naming the part asked for and how many there are.
func partNotSatisfiable(asked, parts int) *Error {
	e := errorf("InvalidPartNumber", "The requested partnumber is not satisfiable")
	e.Fields = [][2]string{{"PartNumberRequested", strconv.Itoa(asked)}, {"ActualPartCount", strconv.Itoa(parts)}}
	return e
}

// ResolveRange applies rng to the object info describes.
func ResolveRange(rng *Range, info ObjectInfo) (off, n int64, err error) {
	if rng.Part == 0 {
		return rng.Resolve(info.Size)
	}
	if info.manifest == nil {
		if rng.Part != 1 {
			return 0, 0, partNotSatisfiable(rng.Part, 1)
		}
		return 0, info.Size, nil
	}
	// Parts are counted in order, whatever numbers the upload gave them,
	// as clients read them: partNumber 1 to x-amz-mp-parts-count.
	if rng.Part > len(info.manifest.Parts) {
		return 0, 0, partNotSatisfiable(rng.Part, len(info.manifest.Parts))
	}
	for _, p := range info.manifest.Parts[:rng.Part-1] {
		off += p.PlainSize
	}
	return off, info.manifest.Parts[rng.Part-1].PlainSize, nil
}

// Head describes an object in plaintext terms. For an encrypted object the
// reported size and ETag are authenticated by unwrapping its data key.
func (s *Store) Head(ctx context.Context, bucket, key string) (ObjectInfo, error) {
	return s.HeadVersion(ctx, bucket, key, "")
}

// HeadVersion is Head of one version ("" the current one). Each version
// is authenticated with its own metadata, bound to bucket and key.
func (s *Store) HeadVersion(ctx context.Context, bucket, key, versionID string) (ObjectInfo, error) {
	if err := CheckKey(key); err != nil {
		return ObjectInfo{}, err
	}
	bi, err := s.headObject(ctx, bucket, key, versionID)
	if err != nil {
		return ObjectInfo{}, err
	}
	info, _, err := s.describe(ctx, bucket, bi, false)
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
	return s.GetVersion(ctx, bucket, key, "", rng)
}

// GetVersion is Get of one version ("" the current one). A first block
// that fails to verify, or whose answer was cut (backend.CutError, a
// transport failure, never taken for damage), is asked for once more before
// the error stands: nothing has reached the client yet. Real damage fails
// the second time too.
func (s *Store) GetVersion(ctx context.Context, bucket, key, versionID string, rng *Range) (ObjectInfo, *Reader, error) {
	return s.Read(ctx, ReadInput{Bucket: bucket, Key: key, VersionID: versionID, Range: rng})
}

// Read is GetVersion with the client's customer key (SSE-C), which an
// object sealed with one needs and any other object refuses.
func (s *Store) Read(ctx context.Context, in ReadInput) (ObjectInfo, *Reader, error) {
	info, rd, err := s.getVersion(ctx, in)
	switch {
	case ctx.Err() != nil:
	case backend.IsCut(err):
		slog.Warn("the store's answer was cut before the first block; reading it once more", "bucket", in.Bucket, "key", in.Key, "err", err)
		info, rd, err = s.getVersion(ctx, in)
	case errors.Is(err, ErrIntegrity):
		slog.Warn("object failed its integrity check on first read; reading it once more", "bucket", in.Bucket, "key", in.Key, "err", err)
		info, rd, err = s.getVersion(ctx, in)
	}
	if err == nil {
		// The content is authenticated with the first segment (open):
		// what the read was decided for, or nothing of it goes out.
		if err = in.checkContent(info); err != nil {
			rd.Close()
			return ObjectInfo{}, nil, err
		}
	}
	return info, rd, err
}

func (s *Store) getVersion(ctx context.Context, in ReadInput) (ObjectInfo, *Reader, error) {
	bucket, key, versionID, rng := in.Bucket, in.Key, in.VersionID, in.Range
	if err := CheckKey(key); err != nil && !(in.own && strings.HasPrefix(key, ReservedPrefix)) {
		return ObjectInfo{}, nil, err
	}
	if rng == nil {
		obj, err := s.be.GetObject(ctx, backend.GetInput{Bucket: bucket, Key: key, VersionID: versionID})
		if err != nil {
			return ObjectInfo{}, nil, s.markerErr(ctx, bucket, key, versionID, err)
		}
		if err := checkVersion(bucket, key, versionID, obj.Info.VersionID); err != nil {
			obj.Body.Close()
			return ObjectInfo{}, nil, err
		}
		info, rd, err := s.open(ctx, obj, bucket, 0, -1, in.CustomerKey)
		if err != nil {
			obj.Body.Close()
		}
		return info, rd, err
	}
	// A range needs the plaintext size first. The ranged GET is pinned to
	// the version the HEAD saw; if the object changed in between, start over
	// once.
	for attempt := 0; ; attempt++ {
		// Stat checks the customer key before the range is resolved, as
		// S3 does.
		info, err := s.Stat(ctx, in)
		if err != nil {
			return info, nil, err
		}
		off, n, err := ResolveRange(rng, info)
		if err != nil {
			return info, nil, err
		}
		if n == 0 { // an empty part, or part 1 of an empty object
			return info, &Reader{Reader: eofReader{}, Partial: true, body: io.NopCloser(eofReader{})}, nil
		}
		br := &backend.ByteRange{Off: off, Len: n}
		switch {
		case info.manifest != nil:
			br.Off, br.Len = info.manifest.CipherRange(off, n)
		case info.Encrypted:
			br.Off, br.Len = crypto.CipherRange(info.Size, off, n)
		}
		obj, err := s.be.GetObject(ctx, backend.GetInput{Bucket: bucket, Key: key, Range: br, IfMatch: info.backendETag, VersionID: versionID})
		if backend.ErrorCode(err) == "PreconditionFailed" && attempt == 0 {
			continue
		}
		if err != nil {
			return info, nil, err
		}
		if err := checkVersion(bucket, key, versionID, obj.Info.VersionID); err != nil {
			obj.Body.Close()
			return info, nil, err
		}
		got, rd, err := s.open(ctx, obj, bucket, off, n, in.CustomerKey)
		if err != nil {
			obj.Body.Close()
			return info, nil, err
		}
		if got.Encrypted != info.Encrypted || got.env.OID != info.env.OID {
			// The store answered with another object than the one the
			// HEAD described (it ignored If-Match): its bytes must not go
			// out under that one's ETag, metadata and headers.
			rd.Close()
			if attempt == 0 {
				continue
			}
			return info, nil, integrityErr(bucket, key, fmt.Errorf("the ranged GET answered another object than its HEAD described"))
		}
		rd.Partial = true
		return info, rd, nil
	}
}

// open wraps a backend response in a decrypting reader. n < 0 means the
// whole object (obj holds all of it).
func (s *Store) open(ctx context.Context, obj *backend.Object, bucket string, off, n int64, ck *crypto.CustomerKey) (ObjectInfo, *Reader, error) {
	whole := n < 0
	info, dk, err := s.describe(ctx, bucket, obj.Info, !whole)
	if err != nil {
		return info, nil, err
	}
	if !info.Encrypted && ck != nil {
		return info, nil, customerKeyNotApplicable()
	}
	if info.Encrypted {
		if dk, err = contentKey(info, dk, ck); err != nil {
			return info, nil, err
		}
	}
	if whole {
		n = info.Size
	}
	if !info.Encrypted {
		// Only with AllowPlaintextReads: describe refuses it otherwise.
		slog.Warn("serving an object that is not encrypted (plaintext reads are allowed)", "bucket", bucket, "key", info.Key)
		exact := &exactReader{r: obj.Body, left: n, bucket: bucket, key: info.Key}
		return info, &Reader{Reader: exact, Off: off, Len: n, body: obj.Body}, nil
	}
	var plain io.Reader
	if info.manifest != nil {
		plain = newPartsReader(obj.Body, dk, *info.manifest, off, n, whole)
	} else {
		key, stream, err := info.streamKey(dk)
		if err == nil {
			plain, err = crypto.NewReader(obj.Body, key, stream, info.Size, off, n)
		}
		if err != nil {
			return info, nil, integrityErr(bucket, info.Key, err)
		}
	}
	pr := &primedReader{r: plain, bucket: bucket, key: info.Key}
	if err := pr.prime(); err != nil {
		return info, nil, err
	}
	return info, &Reader{Reader: pr, Off: off, Len: n, body: obj.Body}, nil
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

type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }
