package sealstore

import (
	"context"
	"strings"

	"github.com/s3seal/s3seal/backend"
)

// A write that replaces a multipart object must drop its manifest, so it
// first HEADs its key (peekManifest): a round trip beside every PUT. A
// bucket s3seal made, empty, carries the bucket document SinglePartDoc
// until the first multipart upload is created in it (or a manifest is
// about to be written there, whatever made the upload); writes into a
// bucket that carries it skip the HEAD, since no key there can hold a
// multipart object.
//
// Another process sees the document gone within the TTL of its bucket
// documents (BucketDocTTL). An upload created and completed within that
// time, and overwritten through a process that still had the document,
// leaves its manifest: gc finds it (a manifest whose object is another
// object now). That is once in a bucket's life, at its first multipart
// upload.

// SinglePartDoc is the bucket document that says the bucket has held no
// multipart object since s3seal created it.
const SinglePartDoc = "single-part"

// claimSinglePart keeps SinglePartDoc in a bucket the store has just
// made, when the bucket holds nothing (a store that answers a create of
// an existing bucket with success may give back one that holds
// multipart objects). A failure leaves the bucket without it: its writes
// look for manifests.
func (s *Store) claimSinglePart(ctx context.Context, bucket string) {
	out, err := s.be.ListObjects(ctx, backend.ListInput{Bucket: bucket, V2: true, MaxKeys: 1})
	if err == nil && len(out.Entries) == 0 && len(out.CommonPrefixes) == 0 {
		err = s.PutBucketDoc(ctx, bucket, SinglePartDoc, []byte("1"))
	}
	if err != nil {
		s.log.WarnContext(ctx, "bucket documents: could not mark the new bucket as without multipart objects; its writes look for manifests",
			"bucket", bucket, "error", err)
	}
}

// singlePart reports whether bucket's documents, as this process last
// read them, say it never held a multipart object; false when they
// cannot be read.
func (s *Store) singlePart(ctx context.Context, bucket string) bool {
	docs, err := s.writeDocs(ctx, bucket)
	_, ok := docs[SinglePartDoc]
	return err == nil && ok
}

// dropSinglePart removes SinglePartDoc before a multipart object can be
// made in bucket. When this process's documents lack it, it is deleted at
// the store all the same (a request, no listing): they may predate a
// document another replica wrote since (the bucket deleted and made
// again), which would otherwise outlive the multipart object.
func (s *Store) dropSinglePart(ctx context.Context, bucket string) error {
	docs, err := s.writeDocs(ctx, bucket)
	if err != nil {
		return err
	}
	if _, ok := docs[SinglePartDoc]; ok {
		return s.DeleteBucketDoc(ctx, bucket, SinglePartDoc)
	}
	err = s.be.DeleteObject(ctx, bucket, BucketDocPrefix+SinglePartDoc)
	if backend.IsNotFound(err) {
		return nil
	}
	return err
}

// mayHoldManifest reports whether a write of key in bucket may replace a
// multipart object: s3seal's own keys never are one, nor any key of a
// bucket that carries SinglePartDoc.
func (s *Store) mayHoldManifest(ctx context.Context, bucket, key string) bool {
	return !strings.HasPrefix(key, ReservedPrefix) && !s.singlePart(ctx, bucket)
}
