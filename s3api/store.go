package s3api

import (
	"context"

	"github.com/s3seal/s3seal/sealstore"
)

// ObjectStore is all the HTTP front asks of the object layer: its one
// door to the store. *sealstore.Store is the one in service; handler
// tests give a fake that answers what a test needs (fakestore_test.go).
type ObjectStore interface {
	// The KMS master key an SSE-KMS write is sealed under (sealstore/kms.go).
	KMSKey(name, credKey string) (id string, terminated bool, err error)

	// Buckets (sealstore/buckets.go).
	ListBuckets(ctx context.Context) ([]sealstore.Bucket, error)
	HeadBucket(ctx context.Context, bucket string) error
	// CheckCredentials tells a store that refuses s3seal's credentials
	// from one that refuses a bucket (sealstore/configcheck.go).
	CheckCredentials(ctx context.Context) error
	CreateBucket(ctx context.Context, bucket string) error
	CreateLockedBucket(ctx context.Context, bucket string, body []byte) error
	UndoCreateBucket(ctx context.Context, bucket string) error
	DeleteBucket(ctx context.Context, bucket string) error
	BucketRegion(ctx context.Context, bucket string) (string, error)
	BucketVersioning(ctx context.Context, bucket string) (string, error)
	SetBucketVersioning(ctx context.Context, bucket, status string) error

	// The documents s3seal keeps per bucket and per object version, which
	// access is decided by (sealstore/bucketdocs.go, objectrecords.go).
	BucketDocs(ctx context.Context, bucket string) (map[string][]byte, error)
	BucketDoc(ctx context.Context, bucket, name string) ([]byte, bool, error)
	PutBucketDoc(ctx context.Context, bucket, name string, doc []byte) error
	CreateBucketDoc(ctx context.Context, bucket, name string, doc []byte) error
	DeleteBucketDoc(ctx context.Context, bucket, name string) error
	ObjectRecord(ctx context.Context, bucket, key, version string) (sealstore.Record, bool, error)
	PutObjectRecord(ctx context.Context, bucket, key, version string, rec sealstore.Record) error
	DeleteObjectRecord(ctx context.Context, bucket, key, version string) error

	// The store's own settings: tags, Object Lock, CORS, lifecycle,
	// website (sealstore/settings.go), and what a version's lock is.
	HasSettings() bool
	Setting(ctx context.Context, k sealstore.Setting, ref sealstore.SettingRef) (sealstore.SettingDoc, error)
	PutSetting(ctx context.Context, k sealstore.Setting, ref sealstore.SettingRef, doc []byte, o sealstore.SettingOptions) (sealstore.SettingDoc, error)
	DeleteSetting(ctx context.Context, k sealstore.Setting, ref sealstore.SettingRef) (sealstore.SettingDoc, error)
	ObjectLock(ctx context.Context, bucket, key, versionID string) (sealstore.LockState, error)
	ObjectTags(ctx context.Context, bucket, key, versionID string) (string, error)

	// Objects.
	Put(ctx context.Context, in sealstore.PutInput) (sealstore.ObjectInfo, error)
	Copy(ctx context.Context, in sealstore.CopyInput) (sealstore.ObjectInfo, error)
	Read(ctx context.Context, in sealstore.ReadInput) (sealstore.ObjectInfo, *sealstore.Reader, error)
	Stat(ctx context.Context, in sealstore.ReadInput) (sealstore.ObjectInfo, error)
	Head(ctx context.Context, bucket, key string) (sealstore.ObjectInfo, error)
	HeadVersion(ctx context.Context, bucket, key, versionID string) (sealstore.ObjectInfo, error)
	Attributes(ctx context.Context, bucket, key, versionID string, ck *sealstore.CustomerKey) (sealstore.ObjectInfo, []sealstore.ObjectPart, error)
	DeleteVersion(ctx context.Context, in sealstore.DeleteInput) (sealstore.DeleteOutput, error)
	DeleteEntries(ctx context.Context, bucket string, es []sealstore.DeleteEntry) ([]sealstore.DeleteResult, error)
	List(ctx context.Context, in sealstore.ListInput) (sealstore.ListPage, error)
	ListVersions(ctx context.Context, in sealstore.ListVersionsInput) (sealstore.VersionsPage, error)

	// Multipart uploads (sealstore/mp_*.go).
	CreateMultipart(ctx context.Context, in sealstore.CreateMultipartInput) (string, error)
	UploadPart(ctx context.Context, in sealstore.UploadPartInput) (sealstore.PartInfo, error)
	UploadPartCopy(ctx context.Context, in sealstore.UploadPartCopyInput) (sealstore.PartInfo, error)
	CompleteMultipart(ctx context.Context, in sealstore.CompleteInput) (sealstore.ObjectInfo, error)
	AbortMultipart(ctx context.Context, bucket, key, uploadID string) error
	ListParts(ctx context.Context, bucket, key, uploadID string, marker, maxParts int) (sealstore.PartsPage, error)
	ListUploads(ctx context.Context, in sealstore.ListUploadsInput) (sealstore.ListUploadsOutput, error)
	UploadChecksum(ctx context.Context, bucket, key, uploadID string) (alg, typ string, err error)
	UploadChecksums(ctx context.Context, bucket string, ups []sealstore.Upload) ([]sealstore.UploadChecksum, error)
}

var _ ObjectStore = (*sealstore.Store)(nil)
