package s3api

import (
	"net/http"
	"slices"
	"strings"

	"github.com/s3seal/s3seal/access"
	"github.com/s3seal/s3seal/s3api/s3err"
	"github.com/s3seal/s3seal/sealstore"
)

// An object's ACL and owner are kept only when they are not the default
// (the bucket's owner owns the object and alone has FULL_CONTROL): then
// as the object's record (sealstore.ObjectRecord, an AccessControlPolicy
// whose Owner is the object's owner), and the bucket document
// sealstore.ObjectRecordsDoc says that some object of the bucket has
// one. In a bucket without it, which is every bucket whose objects only
// its owner writes with the default ACL, reading or writing an object
// costs no request more than before; in one with it, a read of an object
// reads its record too (package access), and a write of an object that
// takes the default removes its record. Writes leave their record as
// part of the write (recordOfWrite, sealstore.RecordWrite).

// objectACL reads the ACL kept for bucket's key (version "": its current
// object; else that version), the content it was kept for
// (sealstore.Record.For), and whether there is one. It is the ACL of that
// content only: a caller compares forContent with the content it acts on,
// or binds its request to it (request.boundTo).
func (s *Server) objectACL(req *request, bucket, key, version string) (a access.ACL, forContent string, kept bool, err error) {
	rec, ok, err := s.store.ObjectRecord(req.r.Context(), bucket, key, version)
	if err != nil || !ok {
		return access.ACL{}, "", false, err
	}
	a, ok = access.DecodeACL(rec.Body)
	if !ok {
		return access.ACL{}, "", false, s3err.New(s3err.InternalError, "The ACL s3seal kept for the object does not parse.")
	}
	return a, rec.For, true, nil
}

// targetACL is the ACL kept for the content an ACL request is about: the
// record of the version it answers by (aclVersion), else that of the
// version it named, else the key's, whichever was written for that
// content; none when none was. A request on the current version by id is
// decided by its version's record (access.Decide) while it reads by the
// key's: both are the same content's when bound to it.
func (s *Server) targetACL(req *request, t aclTarget) (access.ACL, bool, error) {
	tried := map[string]bool{}
	for _, v := range []string{t.version, req.r.URL.Query().Get("versionId"), ""} {
		if tried[v] {
			continue
		}
		tried[v] = true
		a, kept, err := s.objectACLOfContent(req, req.key, v, t.content)
		if err != nil || kept {
			return a, kept, err
		}
	}
	return access.ACL{}, false, nil
}

// objectACLOfContent is objectACL of the record that answers for content:
// none when the record kept was written for other content.
func (s *Server) objectACLOfContent(req *request, key, version, content string) (access.ACL, bool, error) {
	a, forContent, kept, err := s.objectACL(req, req.bucket, key, version)
	if err != nil || !kept || forContent != content {
		return access.ACL{}, false, err
	}
	return a, true, nil
}

// recordOfWrite is the record a write (PUT, copy, POST, upload) gives its
// object, from the ACL headers in h (x-amz-acl, x-amz-grant-*; a POST
// form's fields), owned by the writer: checked before the write, and
// written by sealstore as part of it, bound to the content written
// (sealstore.RecordWrite). The default ACL, the bucket owner's, keeps no
// record.
func (s *Server) recordOfWrite(req *request, h http.Header) (*sealstore.RecordWrite, error) {
	docs, err := s.store.BucketDocs(req.r.Context(), req.bucket)
	if err != nil {
		return nil, bucketErr(err)
	}
	bo, hasOwner := bucketOwnerOf(docs)
	writer := req.who.CanonicalID
	if req.who.Anonymous() || hasOwner && bo.OwnedBy(req.who) {
		// What nobody writes, and what a credential of the owner's
		// account writes, the bucket's owner owns.
		writer = bo.ID
	}
	if h == nil {
		h = http.Header{}
	}
	a, set, err := s.aclOfRequest(h, nil, writer, bo.ID, objectCannedACLs)
	if err != nil {
		return nil, err
	}
	canned := strings.TrimSpace(h.Get("X-Amz-Acl"))
	switch ownership := ownershipOf(docs); {
	case ownership == "BucketOwnerEnforced" && set && canned != "bucket-owner-full-control":
		// S3 takes no ACL on a write but the one that changes nothing.
		return nil, s3err.New(s3err.AccessControlListNotSupported, "")
	case ownership == "BucketOwnerPreferred" && canned == "bucket-owner-full-control" && hasOwner:
		// The writer hands the object to the bucket's owner.
		writer = bo.ID
		a = newACL(writer, userGrant(writer, "FULL_CONTROL"))
	}
	if set && a.Public() && publicAccessBlockOf(docs).BlockPublicAcls {
		return nil, refusedBy("the bucket's public access block blocks public ACLs")
	}
	if !set {
		a = newACL(writer, userGrant(writer, "FULL_CONTROL"))
	}
	keep := !ownerOnlyGrants(a) || hasOwner && writer != bo.ID
	if ownershipOf(docs) == "BucketOwnerEnforced" {
		keep = false // the bucket's owner owns every object, with the default ACL
	}
	if !keep {
		return &sealstore.RecordWrite{}, nil
	}
	b, err := encodeACL(a)
	return &sealstore.RecordWrite{Body: b}, err
}

// dropReplacedRecords drops the records a delete without a version id
// of key leaves behind: the current object's, and the "null" version's.
// Clean-up only: each is bound to the content it was written for, which
// the delete removed or hid, and would apply to no other.
func (s *Server) dropReplacedRecords(req *request, key string) error {
	if err := s.store.DeleteObjectRecord(req.r.Context(), req.bucket, key, ""); err != nil {
		return err
	}
	return s.store.DeleteObjectRecord(req.r.Context(), req.bucket, key, "null")
}

// keepObjectACL keeps a as the record of key (version: as objectACL),
// bound to content already there (PutObjectAcl).
func (s *Server) keepObjectACL(req *request, key, version string, a access.ACL, content string) error {
	ctx := req.r.Context()
	b, err := encodeACL(a)
	if err != nil {
		return err
	}
	return s.store.PutObjectRecord(ctx, req.bucket, key, version, sealstore.Record{For: content, Body: b})
}

// ownerOnlyGrants reports whether a grants its owner FULL_CONTROL and
// nothing else to anyone.
func ownerOnlyGrants(a access.ACL) bool {
	return a.Owner != nil && len(a.Grants) == 1 && a.Grants[0].Grantee.Type == "CanonicalUser" &&
		a.Grants[0].Grantee.ID == a.Owner.ID && a.Grants[0].Permission == "FULL_CONTROL"
}

// bucketOwnerFull reports whether a is bucket-owner-full-control's: its
// owner's and the bucket owner's FULL_CONTROL.
func bucketOwnerFull(a access.ACL, bucketOwnerID string) bool {
	if a.Owner == nil || len(a.Grants) != 2 {
		return false
	}
	for _, g := range a.Grants {
		if g.Grantee.Type != "CanonicalUser" || g.Permission != "FULL_CONTROL" || g.Grantee.ID != a.Owner.ID && g.Grantee.ID != bucketOwnerID {
			return false
		}
	}
	return true
}

// S3's canned ACLs for objects, as PutObjectAcl takes them.
var objectCannedACLs = append(slices.Clone(cannedACLs), "log-delivery-write")

// forgetObjectACL drops the records a delete of key leaves behind: of
// the version deleted (named by id), else of the current object. Clean-up
// only, as dropReplacedRecords: a version that becomes current meanwhile
// is other content, which no record of the deleted one applies to, in
// this process or any other.
func (s *Server) forgetObjectACL(req *request, key, version string) error {
	if !s.hasObjectACLs(req) {
		return nil
	}
	if version != "" {
		return s.store.DeleteObjectRecord(req.r.Context(), req.bucket, key, version)
	}
	return s.dropReplacedRecords(req, key)
}

// hasObjectACLs reports whether some object of req's bucket may have a
// record (true when the documents cannot be read).
func (s *Server) hasObjectACLs(req *request) bool {
	docs, err := s.store.BucketDocs(req.r.Context(), req.bucket)
	if err != nil {
		return true
	}
	_, flagged := docs[sealstore.ObjectRecordsDoc]
	return flagged
}

// forgetDeletedACLs is forgetObjectACL for each entry a DeleteObjects
// deleted.
func (s *Server) forgetDeletedACLs(req *request, deleted []sealstore.DeleteEntry) error {
	for _, e := range deleted {
		if err := s.forgetObjectACL(req, e.Key, e.VersionID); err != nil {
			return err
		}
	}
	return nil
}

// aclTarget is the object an ACL request is about, as objectThere found it.
type aclTarget struct {
	current string // the version id of the key's current object ("" when the store names none)
	version string // the version whose record answers (aclVersion)
	content string // the content the request is about (sealstore.ObjectInfo.ContentID)
}

// objectThere answers NoSuchKey for an object that is not there (and
// NoSuchVersion for a version named by id that is not), and describes
// the object an ACL request names: the version named, else the current
// one. A request allowed on one content (request.boundTo) that finds
// another is refused: the object changed since it was decided.
func (s *Server) objectThere(req *request) (aclTarget, error) {
	if err := sealstore.CheckKey(req.key); err != nil {
		return aclTarget{}, err
	}
	ctx := req.r.Context()
	var t aclTarget
	vid := req.r.URL.Query().Get("versionId")
	if vid != "" {
		if _, err := checkVersionID(vid); err != nil {
			return aclTarget{}, err
		}
		info, err := s.store.HeadVersion(ctx, req.bucket, req.key, vid)
		if err != nil {
			return aclTarget{}, versionErr(bucketErr(err))
		}
		t.content = info.ContentID()
	}
	info, err := s.store.Head(ctx, req.bucket, req.key)
	switch {
	case err == nil:
		t.current = info.VersionID
		if vid == "" {
			t.content = info.ContentID()
		}
	case sealstore.IsNotFound(err) && vid != "":
		// a version of a key whose current entry is a delete marker
	case sealstore.IsNotFound(err):
		return aclTarget{}, s3err.New(s3err.NoSuchKey, "")
	default:
		return aclTarget{}, bucketErr(err)
	}
	if req.boundTo != "" && req.boundTo != t.content {
		return aclTarget{}, sealstore.ErrContentChanged
	}
	t.version = aclVersion(req, t.current)
	return t, nil
}

// aclVersion is the version whose record answers an ACL request: "" for
// the current object (no version named, or the current one named), else
// the version named.
func aclVersion(req *request, current string) string {
	vid := req.r.URL.Query().Get("versionId")
	if vid == current {
		return ""
	}
	return vid
}

// getObjectACL answers GetObjectAcl from the record of the object (or of
// the version named) kept for its content, else the default: the
// bucket's owner with FULL_CONTROL.
func (s *Server) getObjectACL(req *request) error {
	t, err := s.objectThere(req)
	if err != nil {
		return err
	}
	bo, err := s.bucketOwner(req)
	if err != nil {
		return err
	}
	a, kept, err := s.targetACL(req, t)
	if err != nil {
		return err
	}
	if !kept {
		a = newACL(bo.ID, userGrant(bo.ID, "FULL_CONTROL"))
	}
	return writeACL(req, s.shownACL(a, bo))
}

// putObjectACL answers PutObjectAcl: x-amz-acl, x-amz-grant-* or a
// document, owned by the object's owner, kept for the object's content.
// In a versioned bucket the ACL is kept for the version too (named, or
// current), so that a later read of that version by id finds it; one put
// on the current object also answers its reads without a version id.
func (s *Server) putObjectACL(req *request) error {
	body, err := readXMLBody(req, maxXMLBody)
	if err != nil {
		return err
	}
	// Decided again now that the body is in: the decision made on the
	// headers may be of another object, when the bucket's owner
	// overwrote it while the body came. objectThere then checks the
	// object is the content this decision was made for.
	req.boundTo = ""
	if err := s.authorize(req, "PutObjectAcl"); err != nil {
		return err
	}
	t, err := s.objectThere(req)
	if err != nil {
		return err
	}
	docs, err := s.store.BucketDocs(req.r.Context(), req.bucket)
	if err != nil {
		return bucketErr(err)
	}
	bo, err := s.bucketOwner(req)
	if err != nil {
		return err
	}
	_, flagged := docs[sealstore.ObjectRecordsDoc]
	ownerID := bo.ID
	if flagged {
		cur, kept, err := s.targetACL(req, t)
		if err != nil {
			return err
		}
		if kept {
			ownerID = cur.Owner.ID
		}
	}
	a, set, err := s.aclOfRequest(req.r.Header, body, ownerID, bo.ID, objectCannedACLs)
	if err != nil {
		return err
	}
	if !set {
		return s3err.New(s3err.MissingSecurityHeader, "")
	}
	if ownershipEnforcedIn(docs) && !ownerOnlyGrants(a) && !bucketOwnerFull(a, bo.ID) {
		return s3err.New(s3err.AccessControlListNotSupported, "")
	}
	if a.Public() && publicAccessBlockOf(docs).BlockPublicAcls {
		return refusedBy("the bucket's public access block blocks public ACLs")
	}
	// The records to write: the version's, and the current object's when
	// the version is the current one.
	targets := []string{t.version}
	if t.version == "" && t.current != "" && t.current != "null" {
		targets = append(targets, t.current)
	}
	for _, v := range targets {
		if ownerID == bo.ID && ownerOnlyGrants(a) {
			if flagged {
				if err := s.store.DeleteObjectRecord(req.r.Context(), req.bucket, req.key, v); err != nil {
					return err
				}
			}
			continue
		}
		if err := s.keepObjectACL(req, req.key, v, a, t.content); err != nil {
			return err
		}
		flagged = true
	}
	req.w.WriteHeader(http.StatusOK)
	return nil
}
