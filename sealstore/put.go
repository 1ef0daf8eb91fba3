package sealstore

import (
	"context"
	"crypto/md5"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/crypto"
)

// PutInput is one plaintext object to store.
type PutInput struct {
	Bucket, Key string
	// Body is read to its end. A read error aborts the PUT and nothing is
	// published; the error is returned as it is, so a verifying reader can
	// report its own S3 error.
	Body io.Reader
	// Size is the plaintext length the client declared, or -1 if unknown.
	// A body of another length is refused with IncompleteBody.
	Size int64
	// ContentMD5, when set, is the 16-byte MD5 the client declared; a
	// mismatch is refused with BadDigest.
	ContentMD5 []byte
	// Declared is the checksums the client gave before its body (a
	// header's value, not a trailer's), lower-case algorithm name -> value
	// as Finalize returns it; Finalize still checks them. With Size and
	// ContentMD5 they let a large PUT be streamed (putstream.go).
	Declared map[string]string
	Meta     map[string]string // user metadata, lower-case keys without "x-amz-meta-"
	Headers  backend.Headers
	// KeyID names the master key for this object; "" means the primary.
	// A key held outside s3seal (an SSE-KMS write s3seal terminates)
	// takes KMSContext (canonical, see KMSContext) and BucketKey, and
	// Headers' SSE fields then never reach the store.
	KeyID      string
	KMSContext string
	BucketKey  bool
	// Observe, when set, sees every plaintext byte (e.g. checksum hashes).
	Observe io.Writer
	// Finalize, when set, runs after the whole body was read and sealed and
	// before anything is published. An error aborts the PUT. The checksums
	// it returns (algorithm name -> value as the client sees it) are kept
	// with the object and reported in ObjectInfo.Checksums.
	Finalize func() (checksums map[string]string, err error)
	// Cond, when set, makes the PUT conditional on the object now under
	// the key; it is decided after the body was sealed and checked, by
	// the backend, atomically with the write (see Condition).
	Cond *Condition
	// Protect is the object's lock and tags, passed on to the backend. A
	// lock makes the backend PUT carry Content-MD5, which stores require
	// for objects with a retention.
	Protect backend.Protection
	// CustomerKey, when set, seals the object with the client's key
	// (SSE-C): reading it will need that key too.
	CustomerKey *crypto.CustomerKey
	// Record is what the write does to its object's record, bound to the
	// content written (nil: nothing; recordwrites.go).
	Record *RecordWrite
}

// Put seals in.Body into a spool file or memory, checks it, and publishes
// it to the backend in one PUT. Nothing reaches the backend unless every check passed.
func (s *Store) Put(ctx context.Context, in PutInput) (ObjectInfo, error) {
	if err := CheckNewKey(in.Key); err != nil {
		return ObjectInfo{}, err
	}
	// Whether a record may be there to drop is read before the write,
	// from the documents the request was decided by (cached): after a
	// long write they would be read from the store again.
	flagged := false
	if in.Record != nil && in.Record.Body == nil {
		var err error
		if flagged, err = s.HasObjectRecords(ctx, in.Bucket); err != nil {
			return ObjectInfo{}, err
		}
	}
	info, err := s.put(ctx, in)
	if err != nil {
		return info, err
	}
	return info, s.writeRecord(ctx, in.Bucket, in.Key, in.Record, flagged, info)
}

// put is Put of any key, s3seal's own under ReservedPrefix included.
func (s *Store) put(ctx context.Context, in PutInput) (ObjectInfo, error) {
	if err := CheckMeta(in.Meta); err != nil {
		return ObjectInfo{}, err
	}
	if in.Size > s.opt.MaxObjectSize {
		return ObjectInfo{}, errorf("EntityTooLarge", "Your proposed upload exceeds the maximum allowed object size: a single PUT may carry at most %d bytes.", s.opt.MaxObjectSize)
	}
	om := objectMeta(in.Meta, in.Headers)
	if err := checkObjectMeta(om); err != nil {
		return ObjectInfo{}, err
	}
	dk, err := crypto.NewDataKey()
	if err != nil {
		return ObjectInfo{}, err
	}
	name := crypto.Name{Bucket: in.Bucket, Key: in.Key}
	wk, err := s.newWrapKey(ctx, in.KeyID, name, in.KMSContext, in.BucketKey)
	if err != nil {
		return ObjectInfo{}, err
	}
	defer wk.Close()
	if err := checkMetaRoom(wk, om); err != nil {
		return ObjectInfo{}, err
	}
	// While the body arrives, learn whether the key holds a multipart
	// object, whose manifest this PUT will make unreachable.
	content, check, err := sealKey(dk, in.CustomerKey)
	if err != nil {
		return ObjectInfo{}, err
	}
	prev := s.peekManifest(ctx, in.Bucket, in.Key)
	sk := sealing{dk: dk, content: content, wk: wk, check: check, om: om}
	if s.streams(in) {
		return s.putStreamed(ctx, in, sk, prev)
	}
	sp, err := s.seal(in, content, crypto.Stream{})
	if err != nil {
		return ObjectInfo{}, err
	}
	defer sp.close()

	env, err := sk.envelope(in, sp.size, sp.md5, sp.checksums)
	if err != nil {
		return ObjectInfo{}, err
	}
	if _, err := sp.file.Seek(0, io.SeekStart); err != nil {
		return ObjectInfo{}, fmt.Errorf("rewind spool: %w", err)
	}
	bin := backend.PutInput{
		Bucket: in.Bucket, Key: in.Key,
		Body: sp.file, Size: sp.cipherSize, ContentMD5: sp.cipherMD5, ContentCRC32C: sp.cipherCRC32C,
		Meta: env.Metadata(), Headers: storeHeadersFor(env, in.Headers), Protect: in.Protect,
	}
	if in.Cond != nil {
		if err := s.pin(ctx, in.Bucket, in.Key, in.Cond, &bin); err != nil {
			return ObjectInfo{}, err
		}
	}
	old := <-prev // before the PUT, so the HEAD cannot see this object
	out, err := s.be.PutObject(ctx, bin)
	if err != nil && in.Cond != nil {
		var bi backend.ObjectInfo
		if bi, err = s.settle(ctx, in.Bucket, in.Key, in.Cond, env.Metadata(), err); err == nil {
			out.ETag = bi.ETag
		}
	}
	if err != nil {
		return ObjectInfo{}, err
	}
	return s.published(ctx, in, env, old, out, sp), nil
}

// published is what a PUT answers once the store took the object: the
// multipart object it replaced dropped, the listing cache filled.
func (s *Store) published(ctx context.Context, in PutInput, env crypto.Envelope, old prior, out backend.PutOutput, sp *spooled) ObjectInfo {
	if old.replacedBy(out.VersionID) {
		s.dropManifest(ctx, in.Bucket, in.Key, old, false)
	}
	etag := fmt.Sprintf("%x", sp.md5)
	if out.SSE != "" && !env.External() { // the backend's answer wins over what was asked
		in.Headers.SSE, in.Headers.SSEKMSKeyID, in.Headers.SSEBucketKey = out.SSE, out.SSEKMSKeyID, out.SSEBucketKey
	}
	kmsHeaders(env, &in.Headers)
	s.remember(cacheKey{in.Bucket, in.Key, out.ETag, sp.cipherSize}, resolved{sp.size, etag, sp.checksums})
	return ObjectInfo{Bucket: in.Bucket, Key: in.Key, Size: sp.size, ETag: etag,
		Meta: in.Meta, Headers: in.Headers, Encrypted: true, env: env, Checksums: sp.checksums, CustomerKeyed: env.CustomerCheck != nil,
		backendETag: out.ETag, backendSize: sp.cipherSize, VersionID: out.VersionID}
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// bodyBufSize is the size of the buffer a PUT's body is read into: two
// segments, filled as far as the client's bytes allow (copyFull).
const bodyBufSize = 128 << 10

var bodyBufs = sync.Pool{New: func() any { b := make([]byte, bodyBufSize); return &b }}

// spooled is a sealed body waiting to be sent, and what sealing it
// learnt.
type spooled struct {
	// file holds the ciphertext: an unlinked spool file, or memory for a
	// small body (smallbody.go).
	file       sealedBody
	dk         *crypto.DataKey
	size       int64
	md5        [16]byte
	cipherSize int64
	cipherMD5  string // base64, "" unless the object has a lock
	// cipherCRC32C is base64 CRC32C, "" unless Options.BackendChecksum
	// (and no cipherMD5).
	cipherCRC32C string
	counter      *spoolCounter
	checksums    map[string]string
}

// seal reads the whole body, sealing it with dk as stream into memory
// (a small body, sealInMemory) or a fresh spool file, and runs every
// check on it. The caller closes the returned body.
func (s *Store) seal(in PutInput, dk *crypto.DataKey, stream crypto.Stream) (*spooled, error) {
	if sp, ok, err := s.sealInMemory(in, dk, stream); ok {
		return sp, err
	}
	// A declared body is admitted whole before anything is read or
	// written; one of unknown length as it grows.
	room := &spaceWriter{space: s.space}
	if in.Size >= 0 {
		need := crypto.CiphertextSize(min(in.Size, s.opt.MaxObjectSize))
		if err := s.space.take(need); err != nil {
			return nil, err
		}
		room.held = need
	}
	defer room.release()
	f, err := os.CreateTemp(s.opt.SpoolDir, "s3seal-spool-*")
	if noSpace(err) {
		return nil, spoolFull(err)
	}
	if err != nil {
		return nil, fmt.Errorf("create spool file: %w", err)
	}
	// Unlink at once: the file lives only as long as the open descriptor,
	// so a crash leaves nothing behind.
	_ = os.Remove(f.Name())
	room.w = f
	cw := &spoolCounter{w: room, obs: s.opt.Observer}
	sp, err := s.sealInto(f, cw, in, dk, stream)
	if err != nil {
		f.Close()
		cw.release()
		return nil, err
	}
	sp.counter = cw
	return sp, nil
}

// close closes the body and releases its bytes.
func (sp *spooled) close() error {
	err := sp.file.Close()
	sp.counter.release()
	return err
}

// spoolCounter reports the bytes written to a spool file to the Observer,
// and releases them all at once when the file is closed.
type spoolCounter struct {
	w   io.Writer
	obs Observer
	n   int64
}

func (c *spoolCounter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	c.obs.SpoolBytes(int64(n))
	return n, err
}

func (c *spoolCounter) release() {
	if c != nil && c.n > 0 {
		c.obs.SpoolBytes(-c.n)
		c.n = 0
	}
}

// sealInto seals the body into spool, whose bytes f holds to be sent,
// and checks it.
func (s *Store) sealInto(f sealedBody, spool io.Writer, in PutInput, dk *crypto.DataKey, stream crypto.Stream) (*spooled, error) {
	// The backend checks what arrived against a checksum of the
	// ciphertext: CRC32C, which costs a twentieth of MD5, or Content-MD5
	// where a lock needs it (stores demand Content-MD5 for those).
	sink := spool
	var cipherMD5, cipherCRC hash.Hash
	switch {
	case in.Protect.Locks():
		cipherMD5 = md5.New()
		sink = io.MultiWriter(spool, cipherMD5)
	case s.opt.BackendChecksum:
		cipherCRC = crc32.New(castagnoli)
		sink = io.MultiWriter(spool, cipherCRC)
	}
	sp, err := s.sealChecked(sink, in, dk, stream)
	if err != nil {
		return nil, err
	}
	sp.file = f
	if cipherMD5 != nil {
		sp.cipherMD5 = base64.StdEncoding.EncodeToString(cipherMD5.Sum(nil))
	}
	if cipherCRC != nil {
		sp.cipherCRC32C = base64.StdEncoding.EncodeToString(cipherCRC.Sum(nil))
	}
	return sp, nil
}

// sealChecked seals in.Body with dk as stream into sink and runs every
// check on it: its length, Content-MD5 and in.Finalize. The last segment,
// which the sealer holds until its Close, goes to sink only when every
// check has passed: a body that fails one leaves sink short of
// CiphertextSize(in.Size), which a streamed PUT relies on.
func (s *Store) sealChecked(sink io.Writer, in PutInput, dk *crypto.DataKey, stream crypto.Stream) (*spooled, error) {
	cw := crypto.NewWriter(sink, dk, stream)
	plainMD5 := md5.New()
	var hashes io.Writer = plainMD5
	if in.Observe != nil {
		hashes = io.MultiWriter(plainMD5, in.Observe)
	}
	limit := s.opt.MaxObjectSize
	if in.Size >= 0 {
		limit = in.Size
	}
	n, err := copyBody(io.MultiWriter(cw, hashes), in.Body, limit, in.Size >= 0)
	if err != nil {
		return nil, err
	}
	if in.Size >= 0 && n != in.Size {
		return nil, errorf("IncompleteBody", "You did not provide the number of bytes specified by the Content-Length HTTP header (%d of %d).", n, in.Size)
	}
	sp := &spooled{dk: dk, size: n, cipherSize: crypto.CiphertextSize(n)}
	copy(sp.md5[:], plainMD5.Sum(nil))
	if in.ContentMD5 != nil && subtle.ConstantTimeCompare(in.ContentMD5, sp.md5[:]) != 1 {
		e := errorf("BadDigest", "The Content-MD5 you specified did not match what we received.")
		e.CalculatedDigest = base64.StdEncoding.EncodeToString(sp.md5[:])
		return nil, e
	}
	if in.Finalize != nil {
		cks, err := in.Finalize()
		if err != nil {
			return nil, err
		}
		for name, v := range cks {
			if sp.checksums == nil {
				sp.checksums = map[string]string{}
			}
			sp.checksums[strings.ToLower(name)] = v
		}
	}
	if err := cw.Close(); err != nil {
		return nil, fmt.Errorf("seal: %w", err)
	}
	return sp, nil
}

// copyBody copies src to dst and refuses a body longer than limit (the
// declared size when declared is true, else the object size limit): one
// byte past it is read to tell "exactly limit" from "more", which also
// lets a verifying reader finish its checks. The body ended cleanly only if
// src returned a bare io.EOF; anything else, io.ErrUnexpectedEOF or an
// error wrapping an end of stream included, is the body's error.
func copyBody(dst io.Writer, src io.Reader, limit int64, declared bool) (int64, error) {
	bp := bodyBufs.Get().(*[]byte)
	defer bodyBufs.Put(bp)
	n, err := copyFull(dst, io.LimitReader(src, limit), *bp)
	if err != nil {
		return n, err
	}
	var one [1]byte
	m, err := io.ReadFull(src, one[:])
	if m > 0 {
		if declared {
			return n, errorf("IncompleteBody", "The request body is longer than the %d bytes declared.", limit)
		}
		return n, errorf("EntityTooLarge", "Your proposed upload exceeds the maximum allowed object size: a single PUT may carry at most %d bytes.", limit)
	}
	if err != io.EOF {
		return n, err
	}
	return n, nil
}

// copyFull is io.CopyBuffer, except that it fills buf as far as src has
// bytes before each write: a client's body arrives in pieces of whatever
// size the network gave, and each write costs a round of calls through
// the hashes and the sealer.
func copyFull(dst io.Writer, src io.Reader, buf []byte) (int64, error) {
	var n int64
	for {
		m, rerr := fill(src, buf)
		if m > 0 {
			if _, err := dst.Write(buf[:m]); err != nil {
				return n, err
			}
			n += int64(m)
		}
		if rerr == io.EOF { // a bare io.EOF only: anything else is the body's error
			return n, nil
		}
		if rerr != nil {
			return n, rerr
		}
	}
}
