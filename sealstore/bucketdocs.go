package sealstore

import (
	"bytes"
	"context"
	"errors"
	"hash/fnv"
	"io"
	"strings"
	"sync"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/s3seal/s3seal/backend"
)

// Bucket documents are what s3seal itself decides access by, and keeps
// for a bucket instead of handing them to the store: the bucket's owner,
// its ACL, its policy, its public access block, its default encryption,
// its logging configuration. Each is one sealed object under
// BucketDocPrefix in the bucket itself (listings hide it, as everything
// under ReservedPrefix): the store sees ciphertext, and a document it
// forges, alters or moves from another bucket fails to open, since an
// object's wrapped key is bound to its bucket and key. What it can still
// do is answer with an older version of a document, or none: that is the
// denial of service a store can always commit, and the reason a missing
// document never grants more than the credential's own lists.

// BucketDocPrefix is where a bucket's documents are kept; a document
// named "policy" is the object BucketDocPrefix + "policy".
const BucketDocPrefix = ReservedPrefix + "bucket/"

// MaxBucketDoc bounds one document (S3's largest, a policy, is 20 KB).
const MaxBucketDoc = 64 << 10

// DefaultOwnerPendingAge is Options.OwnerPendingAge's default: a
// CreateBucket keeps the owner right after the store's create, within
// the store's timeouts.
const DefaultOwnerPendingAge = 2 * time.Minute

// DefaultBucketDocTTL is how long BucketDocs trusts what it read: a
// change made through another s3seal process in front of the same store
// takes effect here within it. A change made through this process takes
// effect at once.
const DefaultBucketDocTTL = 5 * time.Second

// The documents of a bucket in use are read again in the background
// every half TTL (keepBucketDocs), so that its requests find them fresh
// and none waits for the store's listing; a bucket unused for
// defaultBucketDocWarm is no longer kept, and its next request reads
// them. A reading lists the documents and opens only those whose ETag
// changed since the last. A TTL under minKeepTTL (tests) keeps nothing.
const (
	defaultBucketDocWarm = time.Minute
	minKeepTTL           = 100 * time.Millisecond
)

type bucketDocEntry struct {
	docs  map[string][]byte
	etags map[string]string // each document's ETag in the listing it was read by
	at    time.Time         // when that listing was sent
}

// bucketDocCache holds the documents of the bucketDocEntries most
// recently used buckets as last read, one fetch per bucket at a time.
type bucketDocCache struct {
	mu      sync.Mutex
	entries *lru.Cache[string, bucketDocEntry]
	// gen counts changes, so that a fetch that raced a change does not
	// cache what it read before the change.
	gen      uint64
	fetching map[string]chan struct{}
	// held are documents WithoutBucketDocs has out of the store: they
	// decide, whatever the TTL or the LRU, until forget.
	held map[string]map[string][]byte
	// kept are the buckets whose documents keepBucketDocs reads in the
	// background, each with when it was last used.
	kept map[string]time.Time
	// writing serializes, per bucket (striped), the changes of this
	// process to a bucket's documents with WithoutBucketDocs, so that
	// putting back what it read does not undo a change made meanwhile.
	writing [64]sync.Mutex
}

// writeLock is the lock of bucket's document changes.
func (c *bucketDocCache) writeLock(bucket string) *sync.Mutex {
	h := fnv.New32a()
	h.Write([]byte(bucket))
	return &c.writing[h.Sum32()%uint32(len(c.writing))]
}

// bucketDocEntries bounds the cache: at most this many buckets' documents
// (each at most a few of MaxBucketDoc) are held.
const bucketDocEntries = 1024

func newBucketDocCache() *bucketDocCache {
	entries, _ := lru.New[string, bucketDocEntry](bucketDocEntries)
	return &bucketDocCache{entries: entries, fetching: map[string]chan struct{}{}, kept: map[string]time.Time{}}
}

// forget drops bucket's cached documents after a change.
func (c *bucketDocCache) forget(bucket string) {
	c.mu.Lock()
	c.entries.Remove(bucket)
	delete(c.held, bucket)
	c.gen++
	c.mu.Unlock()
}

// hold caches docs as bucket's, read now, and holds them until forget
// (past the TTL and the LRU): WithoutBucketDocs has them out.
func (c *bucketDocCache) hold(bucket string, docs map[string][]byte) {
	c.mu.Lock()
	c.entries.Add(bucket, bucketDocEntry{docs: docs, at: time.Now()})
	if c.held == nil {
		c.held = map[string]map[string][]byte{}
	}
	c.held[bucket] = docs
	c.gen++
	c.mu.Unlock()
}

// BucketDocs returns the documents s3seal keeps for bucket, by name; an
// empty map when it keeps none. A bucket that does not exist is the
// store's NoSuchBucket. The answer comes from a cache no older than the
// configured TTL; the map is shared and must not be changed.
func (s *Store) BucketDocs(ctx context.Context, bucket string) (map[string][]byte, error) {
	c := s.bucketDocs
	for {
		c.mu.Lock()
		if docs, ok := c.held[bucket]; ok {
			c.mu.Unlock()
			return docs, nil
		}
		if _, ok := c.kept[bucket]; ok {
			c.kept[bucket] = time.Now()
		}
		if e, ok := c.entries.Get(bucket); ok && time.Since(e.at) < s.opt.BucketDocTTL {
			c.mu.Unlock()
			return e.docs, nil
		}
		wait, busy := c.fetching[bucket]
		if !busy {
			return s.refreshBucketDocs(ctx, bucket)
		}
		c.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// refreshBucketDocs reads bucket's documents from the store and caches
// them, unless this process changed them meanwhile. The caller holds
// c.mu and found no reading of bucket under way; it returns with c.mu
// unlocked.
func (s *Store) refreshBucketDocs(ctx context.Context, bucket string) (map[string][]byte, error) {
	c := s.bucketDocs
	done := make(chan struct{})
	c.fetching[bucket] = done
	gen := c.gen
	prev, _ := c.entries.Peek(bucket)
	c.mu.Unlock()
	sent := time.Now()
	e, err := s.readBucketDocs(ctx, bucket, prev)
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.fetching, bucket)
	close(done)
	if err == nil && c.gen == gen {
		e.at = sent
		c.entries.Add(bucket, e)
		s.keepBucketDocs(bucket)
	}
	return e.docs, err
}

// keepBucketDocs starts reading bucket's documents every half TTL in the
// background, unless that is under way. The caller holds c.mu.
func (s *Store) keepBucketDocs(bucket string) {
	c := s.bucketDocs
	if _, ok := c.kept[bucket]; ok || len(c.kept) >= bucketDocEntries || s.opt.BucketDocTTL < minKeepTTL {
		return
	}
	c.kept[bucket] = time.Now()
	time.AfterFunc(s.opt.BucketDocTTL/2, func() { s.keptBucketDocs(bucket) })
}

// keptBucketDocs is one background reading of a kept bucket's documents;
// the next is due half a TTL later. A bucket unused for a minute,
// or whose reading failed, is no longer kept: its next request reads
// them.
func (s *Store) keptBucketDocs(bucket string) {
	c := s.bucketDocs
	c.mu.Lock()
	used, ok := c.kept[bucket]
	if !ok || time.Since(used) > s.opt.bucketDocWarm {
		delete(c.kept, bucket)
		c.mu.Unlock()
		return
	}
	var err error
	if _, busy := c.fetching[bucket]; busy {
		c.mu.Unlock()
	} else {
		ctx, cancel := context.WithTimeout(context.Background(), s.opt.BucketDocTTL)
		_, err = s.refreshBucketDocs(ctx, bucket)
		cancel()
	}
	if err != nil {
		c.mu.Lock()
		delete(c.kept, bucket)
		c.mu.Unlock()
		return
	}
	time.AfterFunc(s.opt.BucketDocTTL/2, func() { s.keptBucketDocs(bucket) })
}

// BucketDoc returns one document of bucket, and whether it is there.
func (s *Store) BucketDoc(ctx context.Context, bucket, name string) ([]byte, bool, error) {
	docs, err := s.BucketDocs(ctx, bucket)
	if err != nil {
		return nil, false, err
	}
	d, ok := docs[name]
	return d, ok, nil
}

// readBucketDocs is listBucketDocsSince for a decision: a bucket without
// an owner whose owner may be on its way (ownerPending) is SlowDown, not
// a bucket decided by the credential lists alone.
func (s *Store) readBucketDocs(ctx context.Context, bucket string, prev bucketDocEntry) (bucketDocEntry, error) {
	e, err := s.listBucketDocsSince(ctx, bucket, prev)
	if err != nil {
		return bucketDocEntry{}, err
	}
	if _, owned := e.docs["owner"]; !owned {
		if err := s.ownerPending(ctx, bucket); err != nil {
			return e, err
		}
	}
	return e, nil
}

// pendingOwner is readBucketDocs's refusal to decide by a young bucket
// whose owner may be on its way; the documents read come with it, for
// what a write keeps besides its object (HasObjectRecords), which is no
// decision. Documents set aside are no such refusal: they are not all
// there.
type pendingOwner struct{ err error }

func (p pendingOwner) Error() string { return p.err.Error() }
func (p pendingOwner) Unwrap() error { return p.err }

// writeDocs is BucketDocs for what a write keeps or skips besides its
// object (HasObjectRecords, singlePart): a young bucket's documents are
// what they are, owner or not.
func (s *Store) writeDocs(ctx context.Context, bucket string) (map[string][]byte, error) {
	docs, err := s.BucketDocs(ctx, bucket)
	if po := (pendingOwner{}); errors.As(err, &po) && docs != nil {
		err = nil
	}
	return docs, err
}

// listBucketDocs lists BucketDocPrefix and opens every document there.
func (s *Store) listBucketDocs(ctx context.Context, bucket string) (map[string][]byte, error) {
	e, err := s.listBucketDocsSince(ctx, bucket, bucketDocEntry{})
	return e.docs, err
}

// listBucketDocsSince is listBucketDocs that takes a document whose ETag
// is the one in prev from prev instead of opening it again.
func (s *Store) listBucketDocsSince(ctx context.Context, bucket string, prev bucketDocEntry) (bucketDocEntry, error) {
	docs, etags := map[string][]byte{}, map[string]string{}
	in := backend.ListInput{Bucket: bucket, V2: true, Prefix: BucketDocPrefix, Delimiter: "/"}
	for page := 0; ; page++ {
		if page == maxBucketDocPages {
			// A few documents and one common prefix fit in one page: a
			// listing that goes on is the store's, and is not followed.
			return bucketDocEntry{}, errorf("InternalError", "the store's listing of %s's bucket documents did not end after %d pages", bucket, page)
		}
		out, err := s.be.ListObjects(ctx, in)
		if err != nil {
			return bucketDocEntry{}, err
		}
		for _, e := range out.Entries {
			name := strings.TrimPrefix(e.Key, BucketDocPrefix)
			if name == "" || strings.Contains(name, "/") {
				continue
			}
			if d, ok := prev.docs[name]; ok && e.ETag != "" && prev.etags[name] == e.ETag {
				docs[name], etags[name] = d, e.ETag
				continue
			}
			d, err := s.readBucketDoc(ctx, bucket, e.Key)
			if errors.Is(err, errGone) {
				continue
			}
			if err != nil {
				return bucketDocEntry{}, err
			}
			docs[name], etags[name] = d, e.ETag
		}
		if !out.IsTruncated || out.NextContinuationToken == "" {
			break
		}
		in.ContinuationToken = out.NextContinuationToken
	}
	return bucketDocEntry{docs: docs, etags: etags}, nil
}

// ownerPending answers SlowDown for a bucket without an owner document
// whose owner may be on its way: one whose documents another process has
// set aside for a moment (WithoutBucketDocs puts the owner back last), or
// one the store created less than OwnerPendingAge ago, whose CreateBucket
// (in any process) keeps its owner next. Only an older bucket without an
// owner, made before s3seal kept owners, is decided by the credential
// lists alone.
func (s *Store) ownerPending(ctx context.Context, bucket string) error {
	aside, err := s.docsAside(ctx, bucket)
	if err != nil {
		return err
	}
	if aside {
		return errorf("SlowDown", "s3seal is changing the bucket's configuration on the store; please retry")
	}
	young, err := s.createdRecently(ctx, bucket)
	if err != nil {
		return err
	}
	if young {
		return pendingOwner{errorf("SlowDown", "the bucket was just created and s3seal is keeping its owner; please retry")}
	}
	return nil
}

// createdRecently reports a bucket the store says it created less than
// OwnerPendingAge ago (a creation date ahead of this process's clock
// counts too). A bucket the store does not list, or a store that may not
// list its buckets, is not young. A bucket once seen older is taken as
// old for a minute without asking again.
func (s *Store) createdRecently(ctx context.Context, bucket string) (bool, error) {
	if seen, ok := s.oldBuckets.Get(bucket); ok && time.Since(seen) < time.Minute {
		return false, nil
	}
	bs, err := s.be.ListBuckets(ctx)
	if backend.IsRefused(err) || backend.ErrorCode(err) == "NotImplemented" {
		s.warnNoBucketAges.Do(func() {
			s.log.Warn("the store does not list its buckets to s3seal's credential, so a bucket without an owner cannot be told from one being created: "+
				"another process may decide such a bucket by the credential lists for the moment its CreateBucket keeps the owner; give the credential s3:ListAllMyBuckets",
				"bucket", bucket, "err", err)
		})
		return false, nil
	}
	if err != nil {
		return false, err
	}
	for _, b := range bs {
		if b.Name != bucket {
			continue
		}
		if time.Since(b.Created) < s.opt.OwnerPendingAge {
			return true, nil
		}
		s.oldBuckets.Add(bucket, time.Now())
	}
	return false, nil
}

// maxBucketDocPages bounds the pages readBucketDocs follows.
const maxBucketDocPages = 16

var errGone = errors.New("bucket document deleted while it was read")

func (s *Store) readBucketDoc(ctx context.Context, bucket, key string) ([]byte, error) {
	info, rd, err := s.Read(ctx, ReadInput{Bucket: bucket, Key: key, own: true})
	var be *backend.Error
	if errors.As(err, &be) && (be.Code == "NoSuchKey" || be.Code == "NotFound") {
		return nil, errGone
	}
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	if !info.Encrypted {
		// Only s3seal writes here, always sealed: an object in the clear
		// (served only with AllowPlaintextReads) is the provider's.
		return nil, integrityErr(bucket, key, ErrNotEncrypted)
	}
	d, err := io.ReadAll(io.LimitReader(rd, MaxBucketDoc+1))
	if err == nil && len(d) > MaxBucketDoc {
		err = errorf("InternalError", "bucket document %s/%s is over %d bytes", bucket, key, MaxBucketDoc)
	}
	return d, err
}

// PutBucketDoc keeps doc as bucket's document name (a name without "/"),
// replacing what was there.
func (s *Store) PutBucketDoc(ctx context.Context, bucket, name string, doc []byte) error {
	if err := checkBucketDoc(name, doc); err != nil {
		return err
	}
	mu := s.bucketDocs.writeLock(bucket)
	mu.Lock()
	defer mu.Unlock()
	defer s.bucketDocs.forget(bucket)
	_, err := s.put(ctx, PutInput{Bucket: bucket, Key: BucketDocPrefix + name, Body: bytes.NewReader(doc), Size: int64(len(doc))})
	return err
}

// CreateBucketDoc keeps doc as bucket's document name only while the
// bucket has none of that name (a conditional write, If-None-Match: *):
// PreconditionFailed when it has one, written meanwhile by another
// request or another s3seal process.
func (s *Store) CreateBucketDoc(ctx context.Context, bucket, name string, doc []byte) error {
	if err := checkBucketDoc(name, doc); err != nil {
		return err
	}
	mu := s.bucketDocs.writeLock(bucket)
	mu.Lock()
	defer mu.Unlock()
	defer s.bucketDocs.forget(bucket)
	// A store that ignores the condition is asked first.
	// The raw listing: a bucket keeping its first owner is young.
	docs, err := s.listBucketDocs(ctx, bucket)
	if err != nil {
		return err
	}
	if _, ok := docs[name]; ok {
		return errorf("PreconditionFailed", "bucket %s already has its document %s", bucket, name)
	}
	in := PutInput{Bucket: bucket, Key: BucketDocPrefix + name, Body: bytes.NewReader(doc), Size: int64(len(doc)),
		Cond: &Condition{IfNoneMatch: true}}
	_, err = s.put(ctx, in)
	if backend.ErrorCode(err) == "NotImplemented" {
		// A store without conditional writes: the listing above decided.
		in.Body, in.Cond = bytes.NewReader(doc), nil
		_, err = s.put(ctx, in)
	}
	return err
}

// DeleteBucketDoc removes bucket's document name; removing one that is not
// there is not an error.
func (s *Store) DeleteBucketDoc(ctx context.Context, bucket, name string) error {
	mu := s.bucketDocs.writeLock(bucket)
	mu.Lock()
	defer mu.Unlock()
	defer s.bucketDocs.forget(bucket)
	err := s.be.DeleteObject(ctx, bucket, BucketDocPrefix+name)
	var be *backend.Error
	if errors.As(err, &be) && (be.Code == "NoSuchKey" || be.Code == "NotFound") {
		return nil
	}
	return err
}

// gcBucketDocs finds every document of the bucket, whatever its age: a
// step of DeleteBucket's clean-up only (a bucket that goes takes its
// documents with it), never of GC.
func (s *Store) gcBucketDocs(ctx context.Context, bucket string, _ time.Time, _ func()) ([]Garbage, error) {
	var found []Garbage
	err := s.listAll(ctx, bucket, BucketDocPrefix, func(e backend.ListEntry) error {
		found = append(found, Garbage{Kind: "bucket-doc", Key: e.Key, Reason: "a document of the bucket being deleted"})
		return nil
	})
	return found, err
}

// checkBucketDoc refuses a document name with "/" (or none) and a
// document over MaxBucketDoc.
func checkBucketDoc(name string, doc []byte) error {
	if name == "" || strings.Contains(name, "/") || len(doc) > MaxBucketDoc {
		return errorf("InternalError", "bad bucket document %q (%d bytes)", name, len(doc))
	}
	return nil
}
