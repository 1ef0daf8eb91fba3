package sealstore

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"

	"github.com/s3seal/s3seal/crypto"
)

// The multipart state machine: mp_*.go, one concept a file.
//
// An upload lives in two places: the backend's own upload, whose parts are
// ciphertext, and s3seal's upload state beside it in the same bucket (the
// layout below), from which any s3seal process serves the upload; no
// process keeps anything another one needs.
//
//  1. Create (mp_create.go). CreateMultipart makes a fresh data key and oid,
//     wraps them into an envelope bound to the bucket and key (and to the
//     customer key, SSE-C), starts the backend upload with that envelope
//     and the sealed object metadata, then writes the info object: the
//     envelope, the key
//     and upload id (for gc), the checksum algorithm and type (plain and
//     sealed with the upload id), the lock asked for and the backend
//     encryption. An info object that cannot be written aborts the backend
//     upload. Processes read the info object back with loadUpload
//     (mp_state.go), which caches it: an upload id's state never changes.
//  2. Parts (mp_part.go). UploadPart seals each part as its own stream
//     (the part number and a fresh stream id), sends it to the backend part
//     of the same number, and then writes the part's sealed record
//     (mp_records.go): plaintext size and MD5, checksums, stream and the
//     backend part's ETag, in the key of an empty object, or in its body
//     when too long for a key. A part sent again adds a record; the one
//     whose backend ETag and size are the backend part's is the part's
//     (pairRecords). ListParts (mp_listparts.go) and ListUploads
//     (mp_listuploads.go) read the same state.
//  3. Complete (mp_complete.go, checks in mp_complete_check.go).
//     CompleteMultipart pairs the backend's parts with their records, checks
//     the client's list against them (S3's rules), evaluates its
//     conditions, and writes the sealed manifest (mp_manifest.go) under
//     the ETag S3 gives the object made of these parts (manifestName),
//     with the upload's lock, before it completes the backend upload: there is no
//     moment at which the object exists and its manifest does not.
//     Completions with other parts write other manifests; none replaces one
//     another completion may need. A store whose ETags are not S3's gets
//     the manifest under the ETag it answers too.
//  4. State dropped. After the backend completion the part records and the
//     info object are deleted (best effort; gc removes what stays), the
//     manifest of an object the completion replaced for good (no versions)
//     goes, and the object gets the lock asked for where the store dropped it (mp_lock.go).
//     AbortMultipart (mp_abort.go) drops the backend upload and the state;
//     a failed completion keeps its manifest (gc removes it once no object
//     is made of its parts).
//  5. Read (mp_read.go, mp_manifest.go, mp_manifest_cache.go). A multipart
//     object is read through its manifest, found under the object's
//     backend ETag, else by listing the oid's manifests: each part it
//     touches opens as its own sealed stream.
//
// Recovery (mp_recover.go): a completion may find its upload completed
// already, and answers with the object when it is the one it asked for.
//
//   - A retried completion (the client lost the first answer): the state is
//     gone, so loading it answers NoSuchUpload; or the state is still there
//     (cached, or its completing process died before removing it) and the
//     backend upload is gone. completedBeforeRequest accepts the object at
//     the key when its manifest names this upload id and these parts; the
//     state left behind is then dropped (dropLeftoverState).
//   - A completion that succeeded but looked failed: the store never
//     answered, answered 5xx or NoSuchUpload, or the retry package's retried
//     attempt found the upload gone (NoSuchUpload on retry, completeBackend
//     asks back). completedDespiteStoreAnswer accepts the object at the key
//     when it carries this upload's oid, the manifest's size and the ETag
//     of these parts (or, on a store without S3's ETags, is made of them).
//   - Another replica finishing it: a completion of the same upload sent
//     elsewhere removed the records this one was checking (InvalidPart).
//     completedWhileChecking accepts the object once the backend upload is
//     gone, when it carries the upload's oid and its manifest names these
//     parts. Had the other completion finished only after the checks, this
//     one's backend call answers NoSuchUpload: completedDespiteStoreAnswer.
//
// completedBeforeRequest and completedWhileChecking answer at once, saying
// CompletedElsewhere, and lock a version the first completion failed to
// lock as its manifest is (lockAsManifest); after completedDespiteStoreAnswer
// the completion goes on as after a plain success (the state dropped, the
// object locked by lockCompleted).

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
	// metaStoreCopy marks, in the clear and in the sealed settings, the
	// upload of a copy the store makes (CreateMultipartInput.storeCopy).
	metaStoreCopy = "store-copy"
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
