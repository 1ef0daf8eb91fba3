package sealstore

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/s3seal/s3seal/crypto"
	"github.com/s3seal/s3seal/internal/tick"
)

// The listing cache kept across restarts (Options.ListCacheFile). New
// loads the file into the cache of resolved listing entries; SaveListCache
// writes the cache back whole, least recently used first, so that a load
// restores the order in which entries are dropped. The file is sealed
// with the object format's segments (crypto.NewWriter) under a key
// derived from a local master key and the store's scope: the plaintext
// ETags and checksums it holds are as secret as they are in the objects'
// metadata, and a file that was not written by a process holding that key
// for that store (planted, damaged, cut short, from another store) fails
// to open and is ignored whole. FORMAT.md, "The listing cache file".

// listCacheMagic opens the file; listCacheVersion follows it.
const (
	listCacheMagic   = "s3seal list cache\n"
	listCacheVersion = 1
)

// listCachePurpose is the purpose of the key the file is sealed with
// (crypto.Keyring.DeriveKey); the store's scope follows it.
const listCachePurpose = "list cache v1\x00"

// maxListCacheField bounds one length-prefixed field of an entry: a key
// is at most 1024 bytes; an ETag or a checksum is far shorter.
const maxListCacheField = 4096

// maxListCacheSums bounds the kept checksums of one entry (S3 has five
// algorithms).
const maxListCacheSums = 16

// listCacheKey is the key that seals the file under the local master key
// id, or ok false when the keyring has no such key.
func (s *Store) listCacheKey(id string) (key []byte, ok bool) {
	return s.kr.DeriveKey(id, listCachePurpose+s.opt.ListCacheScope)
}

// remember caches what a listing shows of an object version, and counts
// the change for SaveListCache.
func (s *Store) remember(k cacheKey, r resolved) {
	s.cache.Add(k, r)
	s.cacheAdds.Add(1)
}

// loadListCache fills the empty cache from Options.ListCacheFile, if it is
// set and there. A file that fails to open leaves the cache empty, logged;
// it is replaced at the next save.
func (s *Store) loadListCache() {
	path := s.opt.ListCacheFile
	if path == "" {
		return
	}
	if _, ok := s.kr.DerivationKey(); !ok {
		s.log.Info("listing cache: kept in memory only, no local master key to seal its file with", "file", path)
		return
	}
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return
	}
	if err != nil {
		s.log.Warn("listing cache: file not read; starting empty", "file", path, "err", err)
		return
	}
	defer f.Close()
	start := time.Now()
	n, err := s.readListCache(f)
	if err != nil {
		s.cache.Purge()
		s.log.Warn("listing cache: file ignored (damaged, cut short, or written under another master key or for another store); starting empty",
			"file", path, "err", err)
		return
	}
	s.log.Info("listing cache: loaded", "file", path, "entries", n, "cached", s.cache.Len(), "took", time.Since(start).Round(time.Millisecond))
}

// readListCache adds the entries of the file f to the cache and returns
// how many it held. Entries are added as they are read; the caller drops
// them all if it fails.
func (s *Store) readListCache(f io.Reader) (int, error) {
	br := bufio.NewReader(f)
	head := make([]byte, len(listCacheMagic)+2)
	if _, err := io.ReadFull(br, head); err != nil {
		return 0, fmt.Errorf("header: %w", err)
	}
	if string(head[:len(listCacheMagic)]) != listCacheMagic || head[len(listCacheMagic)] != listCacheVersion {
		return 0, errors.New("not a listing cache file of this version")
	}
	id := make([]byte, head[len(head)-1])
	var oid [crypto.OIDSize]byte
	var size [8]byte
	for _, b := range [][]byte{id, oid[:], size[:]} {
		if _, err := io.ReadFull(br, b); err != nil {
			return 0, fmt.Errorf("header: %w", err)
		}
	}
	key, ok := s.listCacheKey(string(id))
	if !ok {
		return 0, fmt.Errorf("sealed under master key %q, which is not in the keyring", id)
	}
	dk, err := crypto.Config{}.DataKeyFrom(key, oid)
	if err != nil {
		return 0, err
	}
	plain := int64(binary.BigEndian.Uint64(size[:]))
	if plain < 0 || plain > crypto.MaxPlainSize {
		return 0, fmt.Errorf("header: %d bytes of entries", plain)
	}
	r, err := crypto.NewReader(br, dk, crypto.Stream{}, plain, 0, plain)
	if err != nil {
		return 0, err
	}
	d := listCacheDecoder{r: bufio.NewReader(r)}
	n := 0
	for {
		k, v, err := d.entry()
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		s.cache.Add(k, v)
		n++
	}
}

// SaveListCache writes the cache of resolved listing entries to
// Options.ListCacheFile when an entry was added since the last save:
// into a temporary file beside it, synced, then renamed over it. It does
// nothing without the file or a local master key.
func (s *Store) SaveListCache() error {
	id, ok := s.kr.DerivationKey()
	if s.opt.ListCacheFile == "" || !ok {
		return nil
	}
	s.saveMu.Lock()
	defer s.saveMu.Unlock()
	adds := s.cacheAdds.Load()
	if adds == s.savedAdds {
		return nil
	}
	key, _ := s.listCacheKey(id)
	if err := s.writeListCache(id, key); err != nil {
		return fmt.Errorf("listing cache: %w", err)
	}
	s.savedAdds = adds
	return nil
}

// writeListCache writes the file, sealed with key (derived from the
// master key id).
func (s *Store) writeListCache(id string, key []byte) error {
	path := s.opt.ListCacheFile
	var oid [crypto.OIDSize]byte
	if _, err := rand.Read(oid[:]); err != nil {
		return err
	}
	dk, err := crypto.Config{}.DataKeyFrom(key, oid)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	defer os.Remove(tmp) // after the rename, nothing is there
	defer f.Close()
	bw := bufio.NewWriter(f)
	head := append([]byte(listCacheMagic), listCacheVersion, byte(len(id)))
	head = append(append(head, id...), oid[:]...)
	sizeAt := int64(len(head))
	head = append(head, make([]byte, 8)...) // the entries' size, known at the end
	if _, err := bw.Write(head); err != nil {
		return err
	}
	cw := crypto.NewWriter(bw, dk, crypto.Stream{})
	var plain int64
	var buf []byte
	for _, k := range s.cache.Keys() { // least recently used first
		v, ok := s.cache.Peek(k)
		if !ok {
			continue // dropped meanwhile
		}
		buf = appendListCacheEntry(buf[:0], k, v)
		if _, err := cw.Write(buf); err != nil {
			return err
		}
		plain += int64(len(buf))
	}
	if err := cw.Close(); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if _, err := f.WriteAt(binary.BigEndian.AppendUint64(nil, uint64(plain)), sizeAt); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		d.Sync() // the rename itself; a failure leaves the old file, still valid
		d.Close()
	}
	return nil
}

// KeepListCache saves the listing cache every interval until ctx ends
// (serve saves it once more after draining). A failed save is logged and
// tried again at the next tick.
func (s *Store) KeepListCache(ctx context.Context, every time.Duration) {
	tick.Every(ctx, every, func() {
		if err := s.SaveListCache(); err != nil {
			s.log.Warn("listing cache: not saved", "file", s.opt.ListCacheFile, "err", err)
		}
	})
}

// appendListCacheEntry appends one entry: bucket, key, backend ETag,
// backend size, plaintext size, plaintext ETag, then the count of kept
// checksums and each one's algorithm and value; strings are a uvarint
// length and the bytes, numbers uvarints.
func appendListCacheEntry(b []byte, k cacheKey, v resolved) []byte {
	str := func(b []byte, s string) []byte { return append(binary.AppendUvarint(b, uint64(len(s))), s...) }
	b = str(str(str(b, k.bucket), k.key), k.backendETag)
	b = binary.AppendUvarint(binary.AppendUvarint(b, uint64(k.backendSize)), uint64(v.size))
	b = binary.AppendUvarint(str(b, v.etag), uint64(len(v.checksums)))
	for alg, sum := range v.checksums {
		b = str(str(b, alg), sum)
	}
	return b
}

// listCacheDecoder reads the entries appendListCacheEntry wrote.
type listCacheDecoder struct {
	r   *bufio.Reader
	err error  // the first error
	buf []byte // the field being read
}

// entry reads the next entry; io.EOF where the entries end, at an entry's
// boundary.
func (d *listCacheDecoder) entry() (cacheKey, resolved, error) {
	if _, err := d.r.Peek(1); err == io.EOF {
		return cacheKey{}, resolved{}, io.EOF
	}
	var k cacheKey
	var v resolved
	k.bucket, k.key, k.backendETag = d.str(), d.str(), d.str()
	k.backendSize, v.size = d.size(), d.size()
	v.etag = d.str()
	if n := d.num(maxListCacheSums); n > 0 {
		v.checksums = make(map[string]string, n)
		for range n {
			alg := d.str()
			v.checksums[alg] = d.str()
		}
	}
	if d.err != nil {
		return cacheKey{}, resolved{}, d.err
	}
	return k, v, nil
}

// num reads a uvarint of at most limit.
func (d *listCacheDecoder) num(limit int) int {
	if d.err != nil {
		return 0
	}
	n, err := binary.ReadUvarint(d.r)
	switch {
	case err == io.EOF:
		d.err = io.ErrUnexpectedEOF
	case err != nil:
		d.err = err
	case n > uint64(limit):
		d.err = fmt.Errorf("entry field of %d, above %d", n, limit)
	}
	return int(n)
}

func (d *listCacheDecoder) size() int64 { return int64(d.num(int(crypto.MaxPlainSize))) }

func (d *listCacheDecoder) str() string {
	n := d.num(maxListCacheField)
	if d.err != nil {
		return ""
	}
	d.buf = slices.Grow(d.buf[:0], n)[:n]
	if _, err := io.ReadFull(d.r, d.buf); err != nil {
		d.err = io.ErrUnexpectedEOF
	}
	return string(d.buf)
}
