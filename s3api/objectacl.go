package s3api

import (
	"net/http"
	"slices"
	"strings"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/s3api/s3err"
	"github.com/s3seal/s3seal/sealstore"
)

// An object's ACL and owner are kept only when they are not the default
// (the bucket's owner owns the object and alone has FULL_CONTROL): then
// as the object's record (sealstore.ObjectRecord, an AccessControlPolicy
// whose Owner is the object's owner), and the bucket document
// docObjectACLs says that some object of the bucket has one. In a bucket
// without it, which is every bucket whose objects only its owner writes
// with the default ACL, reading or writing an object costs no request
// more than before; in one with it, a read of an object reads its record
// too (aclDecision), and a write of an object that takes the default
// removes its record.

// docObjectACLs is the bucket document that says some object of the
// bucket has a record.
const docObjectACLs = "object-acls"

// objectACL reads the ACL kept for bucket's key (version "": its current
// object; else that version), and whether there is one.
func (s *Server) objectACL(req *request, bucket, key, version string) (aclDoc, bool, error) {
	b, ok, err := s.store.ObjectRecord(req.r.Context(), bucket, key, version)
	if err != nil || !ok {
		return aclDoc{}, false, err
	}
	a, ok := decodeStoredACL(b)
	if !ok {
		return aclDoc{}, false, s3err.New("InternalError", "The ACL s3seal kept for the object does not parse.")
	}
	return a, true, nil
}

// objectACLWrite is what a PUT, copy or upload does to its object's ACL.
type objectACLWrite struct {
	acl     aclDoc
	keep    bool // the ACL is not the default: keep a record
	flagged bool // the bucket has docObjectACLs
}

// objectACLOfWrite reads the ACL a write gives its object: x-amz-acl or
// x-amz-grant-*, owned by the writer. Checked before the write.
func (s *Server) objectACLOfWrite(req *request) (*objectACLWrite, error) {
	return s.objectACLOf(req, req.r.Header)
}

// objectACLOf is objectACLOfWrite of the ACL headers in h (a POST form's
// fields).
func (s *Server) objectACLOf(req *request, h http.Header) (*objectACLWrite, error) {
	docs, err := s.store.BucketDocs(req.r.Context(), req.bucket)
	if err != nil {
		return nil, bucketErr(err)
	}
	bo, hasOwner := bucketOwnerOf(docs)
	writer := req.who.CanonicalID
	if req.who.isAnonymous() || hasOwner && ownedBy(bo, req.who) {
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
		return nil, s3err.New("AccessControlListNotSupported", "")
	case ownership == "BucketOwnerPreferred" && canned == "bucket-owner-full-control" && hasOwner:
		// The writer hands the object to the bucket's owner.
		writer = bo.ID
		a = newACL(writer, userGrant(writer, "FULL_CONTROL"))
	}
	if set && isPublicACL(a) && publicAccessBlockOf(docs).BlockPublicAcls {
		return nil, refusedBy("the bucket's public access block blocks public ACLs")
	}
	if !set {
		a = newACL(writer, userGrant(writer, "FULL_CONTROL"))
	}
	_, flagged := docs[docObjectACLs]
	w := &objectACLWrite{acl: a, flagged: flagged}
	w.keep = !ownerOnlyGrants(a) || hasOwner && writer != bo.ID
	if ownershipOf(docs) == "BucketOwnerEnforced" {
		w.keep = false // the bucket's owner owns every object, with the default ACL
	}
	return w, nil
}

// clear drops, before the write, the record of the object the write
// replaces: kept until commit, it would name its writer the owner of the
// new content (readable by it) until then, and for good when commit
// fails. Until commit the object has the default ACL, which grants least.
func (w *objectACLWrite) clear(s *Server, req *request, key string) error {
	if !w.flagged {
		return nil
	}
	return s.dropReplacedRecords(req, key)
}

// dropReplacedRecords drops the records a write (or a delete without a
// version id) of key makes stale: the current object's, and the "null"
// version's, which the write replaces in a bucket without versioning or
// with versioning suspended (a read naming versionId=null would find the
// replaced content's ACL on the new one). Where versioning is enabled the
// null version stays, without its record: dropping a record grants less.
func (s *Server) dropReplacedRecords(req *request, key string) error {
	if err := s.store.DeleteObjectRecord(req.r.Context(), req.bucket, key, ""); err != nil {
		return err
	}
	return s.store.DeleteObjectRecord(req.r.Context(), req.bucket, key, "null")
}

// commit keeps the write's ACL once its object is written.
func (w *objectACLWrite) commit(s *Server, req *request, key string) error {
	ctx := req.r.Context()
	if !w.keep {
		if w.flagged {
			return s.store.DeleteObjectRecord(ctx, req.bucket, key, "")
		}
		return nil
	}
	return s.keepObjectACL(req, key, "", w.acl, w.flagged)
}

// keepObjectACL keeps a as the record of key (version: as objectACL).
func (s *Server) keepObjectACL(req *request, key, version string, a aclDoc, flagged bool) error {
	ctx := req.r.Context()
	if !flagged {
		if err := s.store.PutBucketDoc(ctx, req.bucket, docObjectACLs, []byte("1")); err != nil {
			return err
		}
	}
	b, err := encodeACL(a)
	if err != nil {
		return err
	}
	return s.store.PutObjectRecord(ctx, req.bucket, key, version, b)
}

// ownerOnlyGrants reports whether a grants its owner FULL_CONTROL and
// nothing else to anyone.
func ownerOnlyGrants(a aclDoc) bool {
	return a.Owner != nil && len(a.Grants) == 1 && a.Grants[0].Grantee.Type == "CanonicalUser" &&
		a.Grants[0].Grantee.ID == a.Owner.ID && a.Grants[0].Permission == "FULL_CONTROL"
}

// bucketOwnerFull reports whether a is bucket-owner-full-control's: its
// owner's and the bucket owner's FULL_CONTROL.
func bucketOwnerFull(a aclDoc, bucketOwnerID string) bool {
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

// forgetObjectACL drops the records a delete of key makes stale: of the
// current object, when the delete removed it (no version named, or the
// version that was current: prior, currentBeforeDelete's), and of the
// version deleted.
func (s *Server) forgetObjectACL(req *request, key, version string, prior deletePrior) error {
	if !s.hasObjectACLs(req) {
		return nil
	}
	if version != "" {
		if err := s.store.DeleteObjectRecord(req.r.Context(), req.bucket, key, version); err != nil {
			return err
		}
	}
	switch {
	case version == "":
		return s.dropReplacedRecords(req, key)
	case s.deletedCurrent(req, key, version, prior):
		return s.store.DeleteObjectRecord(req.r.Context(), req.bucket, key, "")
	}
	return nil
}

// hasObjectACLs reports whether some object of req's bucket may have a
// record (true when the documents cannot be read).
func (s *Server) hasObjectACLs(req *request) bool {
	docs, err := s.store.BucketDocs(req.r.Context(), req.bucket)
	if err != nil {
		return true
	}
	_, flagged := docs[docObjectACLs]
	return flagged
}

// deletePrior is what currentBeforeDelete saw of a key before a delete of
// one of its versions.
type deletePrior struct {
	current bool   // the version was the key's current one (or the store did not say)
	id      string // the key's current version then
}

// currentBeforeDelete reports, before a delete of key's version, whether
// it is the key's current object (or delete marker), in a bucket where
// some object may have a record (elsewhere there is nothing to forget),
// and which version is current. The record of key was put on the version
// current then: kept past its deletion, it would hand the older version
// that becomes current (the bucket owner's, say) to the writer of the
// deleted one. When the store does not say, it is taken as current:
// dropping a record grants less.
func (s *Server) currentBeforeDelete(req *request, key, version string) deletePrior {
	if !s.hasObjectACLs(req) {
		return deletePrior{}
	}
	info, err := s.store.Backend().HeadObject(req.r.Context(), req.bucket, key)
	if err != nil {
		return deletePrior{current: true}
	}
	return deletePrior{current: info.VersionID == version, id: info.VersionID}
}

// deletedCurrent reports, after a delete of key's version, whether the
// version may have been current when it went. Not current before the
// delete, it may have become current meanwhile, the record of key then
// put on it: the null version by a write in a bucket with versioning
// suspended, another by the deletes of the versions above it (the
// current version has changed since). Dropping a record grants less.
func (s *Server) deletedCurrent(req *request, key, version string, prior deletePrior) bool {
	if prior.current || version == "null" {
		return true
	}
	info, err := s.store.Backend().HeadObject(req.r.Context(), req.bucket, key)
	return err != nil || info.VersionID != prior.id
}

// forgetDeletedACLs is forgetObjectACL for each entry a DeleteObjects
// deleted; priors holds currentBeforeDelete of its entries.
func (s *Server) forgetDeletedACLs(req *request, deleted []sealstore.DeleteEntry, priors []deletePrior) error {
	for i, e := range deleted {
		if err := s.forgetObjectACL(req, e.Key, e.VersionID, priors[i]); err != nil {
			return err
		}
	}
	return nil
}

// objectThere answers NoSuchKey for an object that is not there (and
// NoSuchVersion for a version named by id that is not), and the version
// id of the key's current object ("" when the store names none).
func (s *Server) objectThere(req *request) (current string, err error) {
	if err := sealstore.CheckKey(req.key); err != nil {
		return "", err
	}
	if vid := req.r.URL.Query().Get("versionId"); vid != "" {
		if _, err := checkVersionID(vid); err != nil {
			return "", err
		}
		if _, err := s.store.Backend().HeadObjectVersion(req.r.Context(), req.bucket, req.key, vid); err != nil {
			return "", versionErr(bucketErr(err))
		}
	}
	info, err := s.store.Backend().HeadObject(req.r.Context(), req.bucket, req.key)
	switch {
	case err == nil:
		return info.VersionID, nil
	case backend.IsNotFound(err) && req.r.URL.Query().Get("versionId") != "":
		return "", nil // a version of a key whose current entry is a delete marker
	case backend.IsNotFound(err):
		return "", s3err.New("NoSuchKey", "")
	}
	return "", bucketErr(err)
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
// the version named), else the default: the bucket's owner with
// FULL_CONTROL.
func (s *Server) getObjectACL(req *request) error {
	current, err := s.objectThere(req)
	if err != nil {
		return err
	}
	bo, err := s.bucketOwner(req)
	if err != nil {
		return err
	}
	a, kept, err := s.objectACL(req, req.bucket, req.key, aclVersion(req, current))
	if err != nil {
		return err
	}
	if !kept {
		a = newACL(bo.ID, userGrant(bo.ID, "FULL_CONTROL"))
	}
	return writeACL(req, s.shownACL(a, bo))
}

// putObjectACL answers PutObjectAcl: x-amz-acl, x-amz-grant-* or a
// document, owned by the object's owner. In a versioned bucket the ACL is
// kept for the version too (named, or current), so that a later read of
// that version by id finds it; one put on the current object also
// answers its reads without a version id.
func (s *Server) putObjectACL(req *request) error {
	body, err := readXMLBody(req, maxXMLBody)
	if err != nil {
		return err
	}
	current, err := s.objectThere(req)
	if err != nil {
		return err
	}
	// Decided again now that the body is in: the decision made on the
	// headers may be of another object, when the bucket's owner
	// overwrote it (dropping the caller's record) while the body came.
	if err := s.authorize(req, "PutObjectAcl"); err != nil {
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
	_, flagged := docs[docObjectACLs]
	version := aclVersion(req, current)
	ownerID := bo.ID
	if flagged {
		cur, kept, err := s.objectACL(req, req.bucket, req.key, version)
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
		return s3err.New("MissingSecurityHeader", "")
	}
	if ownershipEnforcedIn(docs) && !ownerOnlyGrants(a) && !bucketOwnerFull(a, bo.ID) {
		return s3err.New("AccessControlListNotSupported", "")
	}
	if isPublicACL(a) && publicAccessBlockOf(docs).BlockPublicAcls {
		return refusedBy("the bucket's public access block blocks public ACLs")
	}
	// The records to write: the version's, and the current object's when
	// the version is the current one.
	targets := []string{version}
	if version == "" && current != "" && current != "null" {
		targets = append(targets, current)
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
		if err := s.keepObjectACL(req, req.key, v, a, flagged); err != nil {
			return err
		}
		flagged = true
	}
	req.w.WriteHeader(http.StatusOK)
	return nil
}
