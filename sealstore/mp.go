package sealstore

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"

	"github.com/s3seal/s3seal/crypto"
)

// The upload state that s3seal processes share lives in the backend, in the
// upload's bucket (docs/FORMAT.md, "Upload state"):
//
//	.s3seal/uploads/<u>/info                 the upload's envelope, as metadata
//	.s3seal/uploads/<u>/<part>.<record>      one empty object per uploaded part
//	                                         (<record> cut by "/" into segments of 255 bytes)
//	.s3seal/uploads/<u>/<part>.~<nonce>      the same, the record in the body (a record too
//	                                         long for a key)
//	.s3seal/manifests/<oid>/<backend ETag>   the sealed manifest of a completed object
//
// <u> hashes (bucket, key, upload id), so it has a fixed length whatever
// the key, and cannot collide between uploads.
const (
	uploadsPrefix   = ReservedPrefix + "uploads/"
	manifestsPrefix = ReservedPrefix + "manifests/"
	infoName        = "info"

	// Upload-level settings kept beside the envelope in the info object's
	// metadata (not secret: S3 shows them in ListParts), and sealed with
	// the upload id in metaSettings, which is what s3seal reads; the plain
	// entries are for an earlier s3seal sharing the store.
	metaChecksumAlg  = "checksum-algorithm"
	metaChecksumType = "checksum-type"
	// What gc needs to find the object or upload a state object belongs
	// to: the key (base64url, keys may be any UTF-8) and the upload id.
	metaKey      = "object-key"
	metaUploadID = "upload-id"
	// The upload's id, checksum algorithm and type, sealed with its data
	// key (crypto.SealUploadSettings), under the names of their plain
	// entries. Not an s3seal-* key, so that an earlier s3seal sharing the
	// store ignores it.
	metaSettings = "upload-settings"
)

var b64url = base64.RawURLEncoding.Strict()

func uploadPrefix(bucket, key, uploadID string) string {
	h := sha256.New()
	h.Write([]byte(bucket))
	h.Write([]byte{0})
	h.Write([]byte(key))
	h.Write([]byte{0})
	h.Write([]byte(uploadID))
	return uploadsPrefix + hex.EncodeToString(h.Sum(nil))[:32] + "/"
}

// manifestDir is where the manifests of upload oid live, one per part list
// a completion of it was asked with, each named by the backend ETag of the
// object that part list makes.
func manifestDir(oid [crypto.OIDSize]byte) string {
	return manifestsPrefix + b64url.EncodeToString(oid[:]) + "/"
}

func manifestKey(oid [crypto.OIDSize]byte, name string) string {
	return manifestDir(oid) + name
}
