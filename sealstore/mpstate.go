package sealstore

import (
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/s3seal/s3seal/backend"
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

// manifestName names the manifest of a completion with these backend
// parts: the ETag S3 gives the object they make (the MD5 of the parts'
// binary MD5s, "-" and their number), which AWS, Ceph RGW, MinIO and the
// embedded store compute so, and which a reader learns from a HEAD. When a
// part ETag is not an MD5 (the backend hashes otherwise) it is "l-" and a
// hash of the part list, and the completion also stores the manifest under
// the ETag the backend answers.
func manifestName(parts []backend.CompletedPart) string {
	h := md5.New()
	for _, p := range parts {
		sum, err := hex.DecodeString(strings.Trim(p.ETag, `"`))
		if err != nil || len(sum) != md5.Size {
			l := sha256.New()
			for _, p := range parts {
				fmt.Fprintf(l, "%d:%s\n", p.PartNumber, strings.Trim(p.ETag, `"`))
			}
			return "l-" + hex.EncodeToString(l.Sum(nil)[:16])
		}
		h.Write(sum)
	}
	return fmt.Sprintf("%x-%d", h.Sum(nil), len(parts))
}

// standardETag reports whether etag has the form of an S3 multipart ETag.
func standardETag(etag string) bool {
	hexPart, n, ok := strings.Cut(strings.Trim(etag, `"`), "-")
	_, err := hex.DecodeString(hexPart)
	_, nerr := strconv.Atoi(n)
	return ok && len(hexPart) == 2*md5.Size && err == nil && nerr == nil
}

// recordKey names the record of one uploaded part: the part number, five
// digits (so records list in part order), then the sealed record in
// base64url, cut by "/" so that no segment of the key is longer than
// maxKeySegment (a record with a SHA-512 checksum is about 260 bytes). A
// record that fits in one segment has none: older s3seal versions read it.
func recordKey(prefix string, part uint32, sealed []byte) string {
	enc := b64url.EncodeToString(sealed)
	var b strings.Builder
	fmt.Fprintf(&b, "%s%05d.", prefix, part)
	room := maxKeySegment - len("00000.")
	for len(enc) > room {
		b.WriteString(enc[:room])
		b.WriteByte('/')
		enc, room = enc[room:], maxKeySegment
	}
	b.WriteString(enc)
	return b.String()
}

const (
	// maxRecordKey is the longest record key s3seal writes: S3's limit
	// on keys, which every backend takes (the embedded store too, since
	// it names long metadata files by a hash).
	maxRecordKey = 1024
	// maxKeySegment is the longest "/"-separated segment of a record
	// key: the embedded store (as a file-system store such as MinIO)
	// keeps each segment as a file or directory name, at most 255 bytes.
	maxKeySegment = 255
)

// recordObject returns the key and body of the object that keeps one part
// record: the record in the key (an empty body) when the key fits in
// maxRecordKey, else in the body under "<part>.~<nonce>" ("~" is not
// base64url; the record's nonce makes the key unique), read back with one
// GET at completion and ListParts. Only a record with several long
// checksums and a long backend ETag (over about 700 bytes sealed) goes
// there. Earlier s3seal, which kept record keys to 222 bytes, also put
// there every record with a SHA-512 or XXHASH128 checksum; those are read
// as before.
func recordObject(prefix string, part uint32, sealed []byte) (key string, body []byte) {
	if key = recordKey(prefix, part, sealed); len(key) <= maxRecordKey {
		return key, nil
	}
	return fmt.Sprintf("%s%05d.~%s", prefix, part, b64url.EncodeToString(sealed[:min(len(sealed), 12)])), sealed
}

// parseRecordKey splits a record key below prefix; ok is false for the info
// object and anything else that is not a record. inBody says the record is
// the object's body (see recordObject); sealed is then nil.
func parseRecordKey(prefix, key string) (part uint32, sealed []byte, inBody, ok bool) {
	rest, found := strings.CutPrefix(key, prefix)
	num, enc, found2 := strings.Cut(rest, ".")
	if !found || !found2 || len(num) != 5 {
		return 0, nil, false, false
	}
	n, err := strconv.ParseUint(num, 10, 32)
	if err != nil || n == 0 || n > crypto.MaxParts {
		return 0, nil, false, false
	}
	if strings.HasPrefix(enc, "~") {
		return uint32(n), nil, true, true
	}
	b, err := b64url.DecodeString(strings.ReplaceAll(enc, "/", ""))
	if err != nil {
		return 0, nil, false, false
	}
	return uint32(n), b, false, true
}

// upload is a multipart upload in progress, as any s3seal process can
// rebuild it from the backend.
type upload struct {
	bucket, key, id string
	prefix          string
	dk              *crypto.DataKey
	env             crypto.Envelope
	checksumAlg     string             // lower-case algorithm the client chose at creation, or ""
	checksumType    string             // "COMPOSITE" or "FULL_OBJECT" when checksumAlg is set
	lock            backend.Protection // the lock asked at creation, for the manifest
	sse             backend.Headers    // the backend encryption asked at creation (SSE fields only)
}

type uploadKey struct{ bucket, key, id string }

// loadUpload finds the upload's state and unwraps its data key (readUpload).
// An upload s3seal holds no state for is NoSuchUpload, as S3 answers for
// an unknown or finished upload id. Loaded uploads are cached: the state
// of an upload id never changes.
func (s *Store) loadUpload(ctx context.Context, bucket, key, uploadID string) (*upload, error) {
	if u, ok := s.uploads.Get(uploadKey{bucket, key, uploadID}); ok {
		return u, nil
	}
	u, err := s.readUpload(ctx, bucket, key, uploadID)
	if err != nil {
		return nil, err
	}
	s.uploads.Add(uploadKey{bucket, key, uploadID}, u)
	return u, nil
}

// forgetUpload drops an ended (or new) upload from this process's caches.
func (s *Store) forgetUpload(k uploadKey) {
	s.uploads.Remove(k)
	s.listedUploads.Remove(k)
}

// readUpload reads the upload's state from the store, unwraps its data key
// for (bucket, key) and opens its sealed settings, which must name this
// upload id: the store can neither change the checksum algorithm and type
// an upload was created with nor pass one upload's state off as another's.
// A state without sealed settings was written by a release before them
// and is read as that release read it, from its plain entries, so that
// uploads an older process starts keep working through newer ones
// (FORMAT.md, "Upload state", says what a store can do with that).
func (s *Store) readUpload(ctx context.Context, bucket, key, uploadID string) (*upload, error) {
	prefix := uploadPrefix(bucket, key, uploadID)
	bi, err := s.be.HeadObject(ctx, bucket, prefix+infoName)
	if backend.IsNotFound(err) {
		return nil, s.missingUpload(ctx, bucket, err)
	}
	if err != nil {
		return nil, err
	}
	env, encrypted, err := crypto.ParseMetadata(bi.Meta)
	if err == nil && (!encrypted || !env.Multipart) {
		err = fmt.Errorf("upload state without a multipart envelope")
	}
	if err != nil {
		return nil, integrityErr(bucket, prefix+infoName, err)
	}
	dk, _, err := s.kr.Unwrap(env, crypto.Name{Bucket: bucket, Key: key})
	if err != nil {
		return nil, integrityErr(bucket, prefix+infoName, err)
	}
	alg, typ, err := uploadSettings(dk, bi.Meta, uploadID)
	if err != nil {
		return nil, integrityErr(bucket, prefix+infoName, err)
	}
	return &upload{bucket: bucket, key: key, id: uploadID, prefix: prefix, dk: dk, env: env,
		checksumAlg: alg, checksumType: typ, lock: lockOfMeta(bi.Meta), sse: sseOfMeta(bi.Meta)}, nil
}

// uploadSettings gives the checksum algorithm and type of the upload whose
// state metadata is meta, from its sealed settings (readUpload).
func uploadSettings(dk *crypto.DataKey, meta map[string]string, uploadID string) (alg, typ string, err error) {
	v, ok := meta[metaSettings]
	if !ok {
		// An earlier release's state: its plain entries, as that release
		// read them (rolling upgrades, uploads in progress at one).
		if id, err := b64url.DecodeString(meta[metaUploadID]); err != nil || string(id) != uploadID {
			return "", "", errors.New("upload state without sealed settings names another upload")
		}
		return meta[metaChecksumAlg], meta[metaChecksumType], nil
	}
	set, err := crypto.OpenUploadSettings(dk, v)
	if err != nil {
		return "", "", err
	}
	if set[metaUploadID] != uploadID {
		return "", "", errors.New("upload state sealed for another upload")
	}
	return set[metaChecksumAlg], set[metaChecksumType], nil
}

// sealSettings seals an upload's id, checksum algorithm and type for its
// state (uploadSettings opens them).
func sealSettings(dk *crypto.DataKey, uploadID, alg, typ string) (string, error) {
	set := map[string]string{metaUploadID: uploadID}
	if alg != "" {
		set[metaChecksumAlg], set[metaChecksumType] = alg, typ
	}
	return crypto.SealUploadSettings(dk, set)
}

// missingUpload is the answer for an upload without state: NoSuchBucket
// when its bucket is gone (S3 names the bucket first), else NoSuchUpload.
func (s *Store) missingUpload(ctx context.Context, bucket string, err error) error {
	if backend.ErrorCode(err) != "NoSuchBucket" {
		err = s.be.HeadBucket(ctx, bucket)
	}
	switch {
	case backend.IsNotFound(err):
		return errorf("NoSuchBucket", "The specified bucket does not exist.")
	case err != nil:
		return err
	}
	return noSuchUpload()
}

func noSuchUpload() error {
	return errorf("NoSuchUpload", "The specified multipart upload does not exist. The upload ID may be invalid, or the upload may have been aborted or completed.")
}

// backendParts lists every part the backend holds for the upload.
func (s *Store) backendParts(ctx context.Context, u *upload) ([]backend.Part, error) {
	var parts []backend.Part
	in := backend.ListPartsInput{Bucket: u.bucket, Key: u.key, UploadID: u.id}
	for {
		out, err := s.be.ListParts(ctx, in)
		if backend.ErrorCode(err) == "NoSuchUpload" {
			return nil, noSuchUpload()
		}
		if err != nil {
			return nil, err
		}
		parts = append(parts, out.Parts...)
		if !out.IsTruncated || out.NextMarker <= in.Marker {
			return parts, nil
		}
		in.Marker = out.NextMarker
	}
}

// dropKeys deletes state objects, 1000 a request, best effort: what is
// left is found by gc.
func (s *Store) dropKeys(ctx context.Context, bucket string, keys []string) {
	for len(keys) > 0 {
		n := min(len(keys), 1000)
		res, err := s.be.DeleteObjects(ctx, bucket, keys[:n])
		if err != nil {
			s.log.Warn("multipart: could not delete upload state; s3seal gc removes it", "bucket", bucket, "keys", n, "err", err)
		}
		for _, r := range res {
			// A key the store keeps (Object Lock, a policy) stays for gc,
			// which retries; the client's operation has succeeded.
			if r.Code != "" {
				s.log.Warn("multipart: the store kept s3seal's own object; s3seal gc retries", "bucket", bucket, "key", r.Key, "code", r.Code)
			}
		}
		keys = keys[n:]
	}
}

// peekManifest starts a HEAD of the key in the background and returns a
// channel that yields the manifest key of the multipart object found there
// ("" for anything else). A write calls it before it reads its body, so the
// HEAD costs no time, takes the answer before it writes, and drops that
// manifest once its own object has replaced the old one. If another writer
// replaced the object in between, the manifest dropped is that of an object
// already gone, and the other writer's (if it completed a multipart upload)
// is left for s3seal gc.
func (s *Store) peekManifest(ctx context.Context, bucket, key string) <-chan prior {
	return s.peekVersion(ctx, bucket, key, "")
}

// peekVersion is peekManifest for one version ("" the current one).
func (s *Store) peekVersion(ctx context.Context, bucket, key, versionID string) <-chan prior {
	ch := make(chan prior, 1)
	go func() {
		var p prior
		if bi, err := s.headObject(ctx, bucket, key, versionID); err == nil {
			p.versionID = bi.VersionID
			if env, enc, err := crypto.ParseMetadata(bi.Meta); err == nil && enc && env.Multipart {
				p.manifest = manifestKey(env.OID, strings.Trim(bi.ETag, `"`))
			}
		}
		ch <- p
	}()
	return ch
}

// prior is what a write or delete found at the key before it: the
// manifest of a multipart object there ("" for none) and its version id.
type prior struct {
	manifest, versionID string
}

// replacedBy reports whether a write that made version newVersion removed
// the object p describes. A version with an id of its own is never
// replaced by a write, only hidden (whatever the answer says: moto answers
// writes in a suspended bucket without a version id). Without a version
// id the bucket keeps no versions and the write replaced the object; a
// write in a suspended bucket ("null") replaces the null version, which is
// also what an object without a version id is (moto answers every write
// in a bucket without versioning with "null", and its HEAD with no id).
// When unsure, the manifest is kept (gc can remove it later; a dropped one
// cannot be restored).
func (p prior) replacedBy(newVersion string) bool {
	if p.realVersion() {
		return false
	}
	return newVersion == "" || newVersion == "null"
}

// realVersion reports whether p's version has an id of its own, so that
// only a delete naming that id removes it.
func (p prior) realVersion() bool { return p.versionID != "" && p.versionID != "null" }

// dropManifest deletes the manifest of pr, a version of key that a write
// or delete has just removed for good, unless another version of key still
// uses it. In a bucket that keeps (or kept) versions two versions can
// share one manifest: a rewrap's copy keeps the backend ETag when the
// ciphertext is unchanged (a second single-copy rewrap, or a copy by parts
// that cuts as the upload did), and the manifest is named by oid and ETag.
// So there the key's remaining versions are listed (the rule gc follows),
// and any with the manifest's ETag keeps it; so does a listing that fails
// (gc removes the manifest later; a dropped one cannot be restored).
// Without versions (pr has no version id and none was asked for) nothing
// else can use it.
func (s *Store) dropManifest(ctx context.Context, bucket, key string, pr prior, versioned bool) {
	if pr.manifest == "" {
		return
	}
	ctx = context.WithoutCancel(ctx)
	if versioned || pr.versionID != "" {
		_, name, ok := splitManifestKey(pr.manifest)
		if !ok {
			return
		}
		if kept, err := s.versionWithETag(ctx, bucket, key, name); err != nil || kept {
			if err != nil {
				s.log.Warn("multipart: could not list the key's versions; the manifest stays for s3seal gc",
					"bucket", bucket, "key", key, "manifest", pr.manifest, "err", err)
			}
			return
		}
	}
	s.dropKeys(ctx, bucket, []string{pr.manifest})
}
