package sealstore

import (
	"context"
	"net/url"

	"github.com/s3seal/s3seal/backend"
)

// A Setting is a configuration that the object store keeps and enforces
// for a bucket or an object version, and that s3seal passes on as its
// document (S3's XML) without sealing it: tags, Object Lock, CORS,
// lifecycle, website. None carries object bytes. What s3seal keeps
// itself (policies, ACLs, ownership, the public access block, logging,
// encryption defaults) is a bucket document (bucketdocs.go), never a
// Setting. The HTTP front judges a document before it is put; the store
// lays it out, sends it, and keeps what an object version's reading needs
// in step with it (a multipart object's manifest takes its lock first).
type Setting int

// The settings, named as S3's sub-resources.
const (
	ObjectTagging Setting = iota + 1
	ObjectRetention
	ObjectLegalHold
	BucketTagging
	BucketObjectLock
	BucketCORS
	BucketLifecycle
	BucketWebsite
)

var settingParams = map[Setting]string{
	ObjectTagging: "tagging", ObjectRetention: "retention", ObjectLegalHold: "legal-hold",
	BucketTagging: "tagging", BucketObjectLock: "object-lock",
	BucketCORS: "cors", BucketLifecycle: "lifecycle", BucketWebsite: "website",
}

// Param is the setting's query parameter, as S3 spells it.
func (k Setting) Param() string { return settingParams[k] }

// OfObject reports a setting of object versions, else of buckets.
func (k Setting) OfObject() bool {
	return k == ObjectTagging || k == ObjectRetention || k == ObjectLegalHold
}

// locks reports a setting that is part of an object version's lock.
func (k Setting) locks() bool { return k == ObjectRetention || k == ObjectLegalHold }

// SettingRef names what a setting is of: a bucket (Key ""), or an object
// (its current version when VersionID is "").
type SettingRef struct {
	Bucket, Key, VersionID string
}

// SettingOptions are a PutSetting's request headers that S3 defines for it.
type SettingOptions struct {
	// BypassGovernance shortens or removes a GOVERNANCE retention
	// (x-amz-bypass-governance-retention: true). The caller decided
	// that its client may.
	BypassGovernance bool
	// LockToken is x-amz-bucket-object-lock-token.
	LockToken string
}

// SettingDoc is the store's answer about a setting: its document (for a
// read) and the object version the store names (VersionID, "" when it
// names none).
type SettingDoc struct {
	Body      []byte
	VersionID string
}

// errNoSettings answers every setting on a store that has none.
func errNoSettings(k Setting) error {
	return errorf("NotImplemented", "s3seal does not implement ?%s on this backend", k.Param())
}

// HasSettings reports whether the store keeps settings (Options.Settings):
// without them every setting answers NotImplemented.
func (s *Store) HasSettings() bool { return s.opt.Settings != nil }

// Setting reads k of ref. Errors are the store's, as for every read
// (a missing object or configuration is its 404).
func (s *Store) Setting(ctx context.Context, k Setting, ref SettingRef) (SettingDoc, error) {
	if err := checkRef(k, ref); err != nil {
		return SettingDoc{}, err
	}
	out, err := s.sendSetting(ctx, "GET", k, ref, nil, SettingOptions{})
	if err != nil {
		return SettingDoc{}, err
	}
	vid, err := answeredVersion(k, ref, out)
	return SettingDoc{Body: out.Body, VersionID: vid}, err
}

// PutSetting puts k's document doc on ref, answering the version the
// store names. A retention or legal hold of a multipart object goes to
// its manifest first, which the version needs to be read (lockManifest),
// and then to exactly the version whose manifest took it. An Object Lock
// configuration that the store refuses because the bucket holds objects
// (moto) is put again with s3seal's documents set aside, when they are
// all the bucket holds (lockConfigWithoutDocs).
func (s *Store) PutSetting(ctx context.Context, k Setting, ref SettingRef, doc []byte, o SettingOptions) (SettingDoc, error) {
	if err := checkRef(k, ref); err != nil {
		return SettingDoc{}, err
	}
	mkey := ""
	if k.locks() && s.opt.Settings != nil {
		var err error
		if ref, mkey, err = s.lockManifest(ctx, k, ref, doc, o); err != nil {
			return SettingDoc{}, err
		}
	}
	out, err := s.sendSetting(ctx, "PUT", k, ref, doc, o)
	if k == BucketObjectLock && backend.ErrorCode(err) == "InvalidBucket" {
		out, err = s.lockConfigWithoutDocs(ctx, ref, doc, o, err)
	}
	if err != nil {
		if mkey != "" {
			s.log.WarnContext(ctx, "lock: the manifest took the "+k.Param()+" but its object did not; a retry of the request evens them out",
				"bucket", ref.Bucket, "key", ref.Key, "manifest", mkey, "err", err)
		}
		return SettingDoc{}, err
	}
	vid, err := answeredVersion(k, ref, out)
	return SettingDoc{VersionID: vid}, err
}

// DeleteSetting removes k of ref.
func (s *Store) DeleteSetting(ctx context.Context, k Setting, ref SettingRef) (SettingDoc, error) {
	if err := checkRef(k, ref); err != nil {
		return SettingDoc{}, err
	}
	out, err := s.sendSetting(ctx, "DELETE", k, ref, nil, SettingOptions{})
	if err != nil {
		return SettingDoc{}, err
	}
	vid, err := answeredVersion(k, ref, out)
	return SettingDoc{VersionID: vid}, err
}

// answeredVersion is the object version the store's answer about ref
// names: none for a bucket's setting; for a version asked for by id, that
// version or none. An id no store makes (WellFormedVersionID), or another
// version than the one asked for, is the store's lie, never passed on.
func answeredVersion(k Setting, ref SettingRef, out *backend.RawResponse) (string, error) {
	vid := out.Header.Get("X-Amz-Version-Id")
	if !k.OfObject() || vid == "" {
		return "", nil
	}
	if !backend.WellFormedVersionID(vid) || ref.VersionID != "" && vid != ref.VersionID {
		return "", errorf("InternalError", "the object store answered ?%s of %s/%s (version %q) about version %q", k.Param(), ref.Bucket, ref.Key, ref.VersionID, vid)
	}
	return vid, nil
}

// CreateLockedBucket creates a bucket with Object Lock enabled (which
// enables versioning), with the CreateBucketConfiguration body given.
func (s *Store) CreateLockedBucket(ctx context.Context, bucket string, body []byte) error {
	if s.opt.Settings == nil {
		return errorf("NotImplemented", "s3seal does not implement Object Lock on this backend")
	}
	h := map[string][]string{"X-Amz-Bucket-Object-Lock-Enabled": {"true"}}
	_, err := s.opt.Settings.Forward(ctx, backend.RawRequest{Method: "PUT", Bucket: bucket, Query: url.Values{}, Header: h, Body: body})
	return err
}

// checkRef refuses a reference that names no object where k is an
// object's, or a key s3seal keeps for itself.
func checkRef(k Setting, ref SettingRef) error {
	if !k.OfObject() {
		return nil
	}
	return CheckKey(ref.Key)
}

// sendSetting sends one request about k to the store.
func (s *Store) sendSetting(ctx context.Context, method string, k Setting, ref SettingRef, body []byte, o SettingOptions) (*backend.RawResponse, error) {
	if s.opt.Settings == nil {
		return nil, errNoSettings(k)
	}
	in := backend.RawRequest{Method: method, Bucket: ref.Bucket, Query: url.Values{k.Param(): {""}}, Header: map[string][]string{}, Body: body}
	if k.OfObject() {
		in.Key = ref.Key
		if ref.VersionID != "" {
			in.Query.Set("versionId", ref.VersionID)
		}
	}
	// The bypass is never a client's text: stores read the header their
	// own way (RGW url-decodes it, some take its mere presence).
	if o.BypassGovernance {
		in.Header.Set("X-Amz-Bypass-Governance-Retention", "true")
	}
	if o.LockToken != "" {
		in.Header.Set("X-Amz-Bucket-Object-Lock-Token", o.LockToken)
	}
	return s.opt.Settings.Forward(ctx, in)
}

// lockManifest sends a retention or legal hold to the manifest of a
// multipart object version before the version gets it (s3seal cannot read
// the object without it), and pins ref to that version. Manifest first: a
// lock the store refuses on the manifest (shortening a COMPLIANCE
// retention) is refused on the object too, and the request fails whole
// with the store's answer, before the object changed.
func (s *Store) lockManifest(ctx context.Context, k Setting, ref SettingRef, doc []byte, o SettingOptions) (SettingRef, string, error) {
	mkey, vid, err := s.ManifestOf(ctx, ref.Bucket, ref.Key, ref.VersionID)
	if err != nil || mkey == "" {
		return ref, "", err
	}
	if _, err := s.sendSetting(ctx, "PUT", k, SettingRef{Bucket: ref.Bucket, Key: mkey}, doc, o); err != nil {
		return ref, "", err
	}
	if vid != "" && ref.VersionID == "" {
		ref.VersionID = vid
	}
	return ref, mkey, nil
}

// lockConfigWithoutDocs answers an Object Lock configuration the store
// refused because the bucket holds objects (moto's "InvalidBucket: Bucket
// needs to be empty"; AWS and RGW take it on a bucket with objects): when
// s3seal's bucket documents are all the bucket holds, the change is made
// again with them set aside (WithoutBucketDocs). Any other failure, or a
// bucket with other objects, keeps the store's answer.
func (s *Store) lockConfigWithoutDocs(ctx context.Context, ref SettingRef, doc []byte, o SettingOptions, refused error) (*backend.RawResponse, error) {
	var out *backend.RawResponse
	ran, err := s.WithoutBucketDocs(ctx, ref.Bucket, func() error {
		var err error
		out, err = s.sendSetting(ctx, "PUT", BucketObjectLock, ref, doc, o)
		return err
	})
	if !ran && err == nil {
		return nil, refused
	}
	s.log.InfoContext(ctx, "object-lock: the store refused the configuration on a bucket holding only s3seal's documents; made it with them set aside",
		"bucket", ref.Bucket, "err", err)
	return out, err
}
