// Package sealstore is s3seal's encrypting object layer. It stores each
// plaintext object as sealed ciphertext (package crypto) in a backend.Store
// and reads it back, keeping S3's plaintext semantics: sizes, ETags, ranges.
// It speaks neither HTTP nor XML; the s3api package maps its errors.
package sealstore

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/crypto"
	"github.com/s3seal/s3seal/kms"
)

// ReservedPrefix is the key prefix under which s3seal keeps its own objects
// in a bucket. It is hidden from listings and refused as a client key.
const ReservedPrefix = ".s3seal/"

// MaxSingleObjectSize is the largest body one PUT or copy may carry, as in S3.
const MaxSingleObjectSize = 5 << 30

// DefaultCacheEntries bounds the cache of resolved listing entries unless
// Options.CacheEntries says otherwise.
const DefaultCacheEntries = 100_000

// Options configure a Store. The zero value of each field means its default.
type Options struct {
	// KMS is the key service of the keyring's master keys held outside
	// s3seal; with it, SSE-KMS writes are sealed under the KMS key they
	// name (KMSKey) instead of going to the store. KMSDefault is the
	// external id of the key an SSE-KMS write without a key id gets (""
	// for none: such a write is refused).
	KMS        *kms.Service
	KMSDefault string
	// Settings sends the requests of Setting, PutSetting and DeleteSetting
	// (the store's own configurations of buckets and objects: tags,
	// Object Lock, CORS, lifecycle, website) as the store's S3 API takes
	// them. nil for a store that keeps none: each answers NotImplemented.
	Settings backend.Forwarder
	// SpoolDir holds the unlinked temporary files that bodies are sealed
	// into before they are published. Default: os.TempDir().
	SpoolDir string
	// SpoolReserve is the free space of SpoolDir's filesystem that spool
	// files never take: a PUT or part whose sealed body would leave less
	// is answered 503 SlowDown before a byte of it is written (a body of
	// unknown length, as it grows). Default DefaultSpoolReserve; below
	// zero, none (bodies are admitted while they fit).
	SpoolReserve int64
	// MemoryBodies bounds the sealed bytes of small bodies (a declared
	// length of at most 1 MiB) held in memory instead of a spool file, all
	// requests together; a body past it is spooled. Default
	// DefaultMemoryBodies; below zero, none (every body is spooled).
	MemoryBodies int64
	// spoolFree, when set, replaces the statfs of SpoolDir (tests).
	spoolFree func(dir string) (int64, error)
	// minPartSize, when set, replaces MinPartSize (tests of many parts).
	minPartSize int64
	// MaxObjectSize bounds one PUT or copy. Default MaxSingleObjectSize.
	MaxObjectSize int64
	// ListConcurrency bounds the HEADs one listing page issues to resolve
	// plaintext sizes and ETags. Default 16.
	ListConcurrency int
	// CacheEntries bounds the cache of resolved listing entries (least
	// recently used dropped). Default DefaultCacheEntries.
	CacheEntries int
	// ListCacheFile, when set, keeps the cache of resolved listing
	// entries across restarts: New loads it, SaveListCache and
	// KeepListCache write it (listcachefile.go). It is sealed under a key
	// derived from a local master key; a keyring without one keeps the
	// cache in memory only. One process at a time may use the file.
	ListCacheFile string
	// ListCacheScope names the store the listing cache describes (serve
	// gives the backend's endpoint): a file saved for another is ignored.
	ListCacheScope string
	// ManifestCacheParts bounds the cache of multipart manifests by the
	// parts they hold in all (about 50 bytes each). Default 1,048,576
	// (about 50 MB: a hundred 10,000-part objects, or a million small ones).
	ManifestCacheParts int
	// BackendChecksum sends the CRC32C of the ciphertext
	// (x-amz-checksum-crc32c) with every backend PUT and part, so the
	// backend checks what arrived; a store that refuses the header, or
	// does not confirm it, gets Content-MD5 instead (backend/integrity.go).
	// CRC32C costs a twentieth of
	// MD5 (worth it over plain HTTP; redundant under TLS, whose records are
	// authenticated). Objects with a lock always carry Content-MD5, which
	// stores demand for them. Default false.
	BackendChecksum bool
	// AllowPlaintextReads serves objects that carry no s3seal metadata as
	// they are, to read a bucket that held data before s3seal (migration).
	// Off by default: the provider is not trusted, and such an object is
	// whatever the provider chose to store, or s3seal ciphertext stripped of
	// its metadata; a copy would seal that content into an authenticated
	// object. Every GET of such an object is logged at WARN.
	AllowPlaintextReads bool
	// Logger receives s3seal's events about stored objects (integrity
	// failures, multipart recoveries, state left for gc). Default
	// slog.Default().
	Logger *slog.Logger
	// Observer, when set, is told of spool use and listing cache lookups
	// (metrics). Default: none.
	Observer Observer
	// OwnerPendingAge is how long after the store created a bucket one
	// without an owner document is taken for one whose CreateBucket is
	// still keeping its owner (SlowDown to others), rather than one made
	// before s3seal kept owners. Default DefaultOwnerPendingAge.
	OwnerPendingAge time.Duration
	// BucketDocTTL is how long a bucket's documents, once read, are
	// trusted (bucketdocs.go). Default DefaultBucketDocTTL.
	BucketDocTTL time.Duration
	// bucketDocWarm, when set, replaces how long an unused bucket's
	// documents are kept fresh in the background (tests).
	bucketDocWarm time.Duration
}

// Observer counts what a Store does. Its methods must be safe for
// concurrent use and return quickly.
type Observer interface {
	// SpoolBytes reports ciphertext bytes taken (delta > 0) or released
	// (delta < 0) in spool files.
	SpoolBytes(delta int64)
	// ListCache reports one lookup of a listing entry in the cache of
	// resolved sizes and ETags.
	ListCache(hit bool)
	// Copy reports one server-side copy made (of a part: UploadPartCopy),
	// by the store (byStore) or by reading and sealing the source again.
	Copy(part, byStore bool)
}

type nopObserver struct{}

func (nopObserver) SpoolBytes(int64) {}
func (nopObserver) ListCache(bool)   {}
func (nopObserver) Copy(bool, bool)  {}

// Store is the encrypting object layer. It is safe for concurrent use.
type Store struct {
	be    Backend
	kr    *crypto.Keyring
	opt   Options
	log   *slog.Logger
	cache *lru.Cache[cacheKey, resolved]
	space *spoolSpace
	// memory is what small bodies sealed into memory hold (smallbody.go).
	memory *memBudget
	// cacheAdds counts the entries added to cache; savedAdds is its
	// count at the last SaveListCache, which saveMu serializes.
	cacheAdds atomic.Uint64
	saveMu    sync.Mutex
	savedAdds uint64
	// uploads caches loaded upload state by (bucket, key, upload id), and
	// manifests opened manifests by oid: neither ever changes.
	uploads   *lru.Cache[uploadKey, *upload]
	manifests *manifestCache
	// listedUploads caches the checksum of uploads that listings read
	// themselves (UploadChecksums), apart from uploads.
	listedUploads *lru.Cache[uploadKey, UploadChecksum]
	// copySources holds the few manifests copy sources were last read
	// with, whole (copy_store.go), and copyConds what the store does with
	// a copy's source condition.
	copySources *lru.Cache[manifestID, crypto.Manifest]
	copyConds   copyConditions
	// bucketDocs caches the documents s3seal keeps per bucket.
	bucketDocs *bucketDocCache
	// oldBuckets remembers when buckets without an owner were seen older
	// than OwnerPendingAge (createdRecently).
	oldBuckets *lru.Cache[string, time.Time]
	// warnNoBucketAges logs once that the store does not list buckets.
	warnNoBucketAges sync.Once
	// spoolOnly holds the buckets whose store refused a streamed body for
	// want of its Content-MD5: their PUTs are spooled (putstream.go).
	spoolOnly sync.Map
	// keyFailures counts the data keys the keyring did not open because
	// it lacks their master key or holds another under its id
	// (unwrapErr); configcheck.go's checks read it.
	keyFailures atomic.Uint64
	// creds caches the last check of the store's credentials.
	creds credentialCheck
}

type cacheKey struct {
	bucket, key, backendETag string
	backendSize              int64
}

// resolved is what a listing needs of an object: immutable for a given
// backend ETag, because the backend ETag hashes ciphertext with fresh nonces.
type resolved struct {
	size      int64
	etag      string
	checksums map[string]string // the plaintext's kept checksums; never changed once cached
}

// New returns a Store over be that wraps new data keys with kr. serve
// gives it the retry package's store (retry.NewStore); tools and tests
// that want no retries give it Direct(be).
func New(be Backend, kr *crypto.Keyring, opt Options) (*Store, error) {
	if opt.MaxObjectSize <= 0 {
		opt.MaxObjectSize = MaxSingleObjectSize
	}
	if opt.ListConcurrency <= 0 {
		opt.ListConcurrency = 16
	}
	if opt.CacheEntries <= 0 {
		opt.CacheEntries = DefaultCacheEntries
	}
	if opt.Logger == nil {
		opt.Logger = slog.Default()
	}
	if opt.Observer == nil {
		opt.Observer = nopObserver{}
	}
	c, err := lru.New[cacheKey, resolved](opt.CacheEntries)
	if err != nil {
		return nil, err
	}
	ups, err := lru.New[uploadKey, *upload](4096)
	if err != nil {
		return nil, err
	}
	if opt.ManifestCacheParts <= 0 {
		opt.ManifestCacheParts = 1 << 20
	}
	mans, err := newManifestCache(opt.ManifestCacheParts)
	if err != nil {
		return nil, err
	}
	listed, err := lru.New[uploadKey, UploadChecksum](listedUploadEntries)
	if err != nil {
		return nil, err
	}
	if opt.minPartSize <= 0 {
		opt.minPartSize = MinPartSize
	}
	if opt.BucketDocTTL <= 0 {
		opt.BucketDocTTL = DefaultBucketDocTTL
	}
	if opt.bucketDocWarm <= 0 {
		opt.bucketDocWarm = defaultBucketDocWarm
	}
	if opt.OwnerPendingAge <= 0 {
		opt.OwnerPendingAge = DefaultOwnerPendingAge
	}
	old, err := lru.New[string, time.Time](4096)
	if err != nil {
		return nil, err
	}
	sources, err := lru.New[manifestID, crypto.Manifest](copySourceManifests)
	if err != nil {
		return nil, err
	}
	if opt.SpoolDir == "" {
		opt.SpoolDir = os.TempDir()
	}
	if opt.MemoryBodies == 0 {
		opt.MemoryBodies = DefaultMemoryBodies
	}
	s := &Store{be: be, kr: kr, opt: opt, log: opt.Logger, cache: c, uploads: ups, manifests: mans, listedUploads: listed, bucketDocs: newBucketDocCache(), oldBuckets: old,
		copySources: sources, space: newSpoolSpace(opt.SpoolDir, opt.SpoolReserve, opt.spoolFree), memory: &memBudget{limit: max(opt.MemoryBodies, 0)}}
	s.loadListCache()
	return s, nil
}

// ObjectInfo describes an object in plaintext terms.
type ObjectInfo struct {
	Bucket, Key  string
	Size         int64  // plaintext size
	ETag         string // plaintext ETag, without quotes
	LastModified time.Time
	StorageClass string
	Meta         map[string]string // user metadata, s3seal's own keys removed
	Headers      backend.Headers
	Encrypted    bool // false for an object written around s3seal
	// CustomerKeyed says the object is sealed with a customer key (SSE-C):
	// reading its content needs that key.
	CustomerKeyed bool
	// Checksums are the flexible checksums of the plaintext kept with the
	// object: lower-case algorithm name ("crc32", "sha256", ...) -> value.
	Checksums map[string]string
	// PartChecksums are the kept checksums of the part a read by part
	// number selected, when ReadInput.PartChecksums asked for them and
	// the object's checksum is COMPOSITE.
	PartChecksums map[string]string

	// VersionID is the backend's version id of the object ("" in a bucket
	// that never had versioning).
	VersionID string

	// PartsCount is the number of parts of a multipart object, else 0.
	PartsCount int
	// TagCount and Lock are what the backend enforces on the object.
	TagCount int
	Lock     backend.Protection
	// CompletedElsewhere, from CompleteMultipart, says another completion
	// of the same upload (a client's retry sent elsewhere, another replica)
	// made the object, with these very parts; this one found it done.
	CompletedElsewhere bool

	backendETag string
	backendSize int64
	env         crypto.Envelope
	manifest    *crypto.Manifest // multipart objects only
	// origin is, for a single-stream object whose bytes are a copy of
	// another object's stream, where they were sealed (crypto.Origin).
	origin *crypto.Origin
}

// ContentID names the content of this write of the object: every write
// (a PUT, a copy, a completed upload) seals a fresh data key with a
// fresh object id, authenticated with the envelope, so two writes never
// share one, and a read that authenticates the object authenticates its
// ContentID. Object records are bound to it (Record.For). An object in
// the clear (AllowPlaintextReads) is named by its store ETag and version.
func (i ObjectInfo) ContentID() string {
	if i.Encrypted {
		return hex.EncodeToString(i.env.OID[:])
	}
	return "plain:" + i.backendETag + ":" + i.VersionID
}

// ErrContentChanged is the answer of a read asked for one content
// (ReadInput.ContentID) that found other content under the name: the
// object was overwritten, or another version made current, since the
// request was decided.
var ErrContentChanged = &Error{Code: "AccessDenied", Message: "Access Denied.",
	Err: errors.New("the object changed since the request was decided")}

// Error is a failure a client caused or must be told about, with the S3
// error code that describes it.
type Error struct {
	Code    string
	Message string
	Err     error
	// CalculatedDigest is the base64 MD5 of what was received, on a
	// BadDigest for Content-MD5 (S3 names it in its answer).
	CalculatedDigest string
	// Fields are extra elements S3 adds to this error's document, in
	// order, as name/value pairs (InvalidPartNumber's PartNumberRequested
	// and ActualPartCount).
	Fields [][2]string
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Err)
	}
	return e.Code + ": " + e.Message
}

func (e *Error) Unwrap() error { return e.Err }

func errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrIntegrity is wrapped by every error that means stored data failed
// authentication: the object was corrupted or tampered with.
var ErrIntegrity = errors.New("stored object failed authentication")

// ErrNotEncrypted is wrapped (with ErrIntegrity) by the error for an object
// that carries no s3seal metadata while plaintext reads are off.
var ErrNotEncrypted = errors.New("the object carries no s3seal metadata")

// NotEncryptedMessage is what a client reads (403 InvalidObjectState) for
// such an object: why, and the flag that serves it while migrating.
const NotEncryptedMessage = "The object is not encrypted by s3seal: it carries no s3seal metadata " +
	"(written to the store directly?), so s3seal cannot authenticate it and refuses to serve it. " +
	"To serve such objects while migrating a bucket, start s3seal with --allow-plaintext-reads."

func integrityErr(bucket, key string, err error) error {
	return &Error{Code: "InternalError",
		Message: "the stored object failed its integrity check; s3seal refuses to return it",
		Err:     fmt.Errorf("%w: %s/%s: %v", ErrIntegrity, bucket, key, err)}
}

// CheckKey refuses keys longer than S3 allows and keys s3seal keeps for
// itself.
func CheckKey(key string) error {
	if len(key) > MaxKeyLength {
		return errorf("KeyTooLongError", "Your key is too long.")
	}
	if strings.HasPrefix(key, ReservedPrefix) {
		return errorf("InvalidArgument", "Object keys under %q are reserved by s3seal.", ReservedPrefix)
	}
	return nil
}

// ReservedKey is the key ReservedPrefix extends. No new object may take
// it: on a store that maps keys onto a file tree (the embedded store) an
// object ".s3seal" is a file where s3seal needs the directory ".s3seal/",
// so it would break every multipart upload in its bucket, or be refused
// for keys the client cannot see. It is refused on every backend alike;
// an object of that name written before stays readable and deletable.
const ReservedKey = ".s3seal"

// CheckNewKey is CheckKey for a key about to be written (PUT, POST, the
// destination of a copy, CreateMultipartUpload): it also refuses
// ReservedKey.
func CheckNewKey(key string) error {
	if err := CheckKey(key); err != nil {
		return err
	}
	if key == ReservedKey {
		return errorf("InvalidArgument", "The object key %q is reserved by s3seal, which keeps its own objects under %q (on the embedded store a key cannot be both an object and a directory).", ReservedKey, ReservedPrefix)
	}
	return nil
}

// MaxKeyLength is S3's limit on the length of an object key, in bytes of
// its UTF-8 form.
const MaxKeyLength = 1024

// CheckMeta refuses user metadata keys s3seal keeps for itself.
func CheckMeta(meta map[string]string) error {
	for k := range meta {
		if crypto.IsReservedMetaKey(k) {
			return errorf("InvalidArgument", "The metadata key x-amz-meta-%s is reserved by s3seal.", k)
		}
	}
	return nil
}

// userMeta returns meta without s3seal's own keys.
func userMeta(meta map[string]string) map[string]string {
	out := make(map[string]string, len(meta))
	for k, v := range meta {
		if !crypto.IsReservedMetaKey(k) {
			out[strings.ToLower(k)] = v
		}
	}
	return out
}

// describe turns what the backend says of an object into its plaintext
// description and, for an encrypted object, unwraps its data key, which
// authenticates the size, ETag and checksums reported (and only then are
// they cached); a multipart object's come from its manifest. ranged says
// bi describes a ranged response, whose size is not the object's. On an
// unwrap failure info holds the backend's values; dk is nil for a
// plaintext object.
func (s *Store) describe(ctx context.Context, bucket string, bi backend.ObjectInfo, ranged bool) (info ObjectInfo, dk *crypto.DataKey, err error) {
	info = ObjectInfo{
		Bucket: bucket, Key: bi.Key, Size: bi.Size, ETag: strings.Trim(bi.ETag, `"`),
		LastModified: bi.LastModified, StorageClass: bi.StorageClass,
		Meta: userMeta(bi.Meta), Headers: bi.Headers, TagCount: bi.TagCount, Lock: bi.Lock,
		backendETag: strings.Trim(bi.ETag, `"`), backendSize: bi.Size, VersionID: bi.VersionID,
	}
	env, encrypted, err := crypto.ParseMetadata(bi.Meta)
	if err != nil {
		return info, nil, integrityErr(bucket, bi.Key, err)
	}
	if !encrypted {
		if !s.opt.AllowPlaintextReads {
			// 403 InvalidObjectState, as S3 answers for an object it
			// cannot serve in its state: clients show it at once, where
			// they retry a 500.
			return info, nil, &Error{Code: "InvalidObjectState",
				Message: NotEncryptedMessage,
				Err:     fmt.Errorf("%w: %w: %s/%s (plaintext reads are off)", ErrIntegrity, ErrNotEncrypted, bucket, bi.Key)}
		}
		return info, nil, nil
	}
	if !env.Multipart && !ranged {
		if want := crypto.CiphertextSize(env.PlainSize); want != bi.Size {
			return info, nil, integrityErr(bucket, bi.Key, fmt.Errorf("ciphertext is %d bytes, metadata implies %d", bi.Size, want))
		}
	}
	info.Encrypted = true
	info.env = env
	info.CustomerKeyed = env.CustomerCheck != nil
	if env.Version != crypto.FormatV1 {
		// What the store holds in the clear is not the client's: only
		// the sealed metadata, once opened, is.
		info.Meta, info.Headers = map[string]string{}, storeHeaders(bi.Headers)
	}
	dk, b, err := s.kr.Unwrap(ctx, env, crypto.Name{Bucket: bucket, Key: bi.Key})
	if err != nil {
		return info, nil, s.unwrapErr(bucket, bi.Key, err)
	}
	if err := openMeta(dk, env, bi, &info); err != nil {
		return info, nil, integrityErr(bucket, bi.Key, err)
	}
	if env.Origin != "" {
		o, err := crypto.OpenOrigin(dk, env.Origin)
		if err != nil {
			return info, nil, integrityErr(bucket, bi.Key, err)
		}
		info.origin = &o
	}
	kmsHeaders(env, &info.Headers)
	if env.Multipart {
		m, err := s.manifest(ctx, bucket, bi.Key, dk, strings.Trim(bi.ETag, `"`), bi.Size)
		if err != nil {
			return info, nil, err
		}
		if !ranged && m.CipherSize() != bi.Size {
			return info, nil, integrityErr(bucket, bi.Key, fmt.Errorf("ciphertext is %d bytes, the manifest implies %d", bi.Size, m.CipherSize()))
		}
		info.manifest = &m
		info.PartsCount = len(m.Parts)
		info.Size, info.ETag, info.Checksums = m.Size(), m.ETag(), m.Checksums
	} else {
		info.Size, info.ETag, info.Checksums = b.PlainSize, fmt.Sprintf("%x", b.PlainMD5), b.Checksums
	}
	if !ranged {
		s.remember(cacheKey{bucket, bi.Key, info.backendETag, bi.Size}, resolved{info.Size, info.ETag, info.Checksums})
	}
	return info, dk, nil
}
