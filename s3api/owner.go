package s3api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/s3seal/s3seal/access"
	"github.com/s3seal/s3seal/s3api/s3err"
	"github.com/s3seal/s3seal/sealstore"
)

// A bucket's owner is the principal that created it through s3seal, kept
// as the bucket document docOwner (access.Owner, JSON). The owner may do
// anything to its bucket and everything in it that the credential's lists
// allow (package access), and is the owner ListObjects, the ACLs and
// CreateBucket's BucketAlreadyOwnedByYou name. A bucket without the
// document (created before s3seal kept owners, or by another client of
// the store) has no owner: every credential its lists allow may do
// anything to it, as before.

// bucketOwnerOf reads the owner from a bucket's documents; ok is false
// when the bucket has none. A document that does not parse names nobody
// (access.DecodeOwner; it was s3seal's own, written by recordOwner).
func bucketOwnerOf(docs map[string][]byte) (o access.Owner, ok bool) {
	d, ok := docs[docOwner]
	if !ok {
		return access.Owner{}, false
	}
	return access.DecodeOwner(d), true
}

// recordOwner keeps the caller as the owner of the bucket it created.
func (s *Server) recordOwner(req *request) error {
	b, err := json.Marshal(access.Owner{ID: req.who.CanonicalID, DisplayName: req.who.DisplayName, Account: req.who.Account})
	if err != nil {
		return err
	}
	// Only a bucket without an owner gets one: another CreateBucket that
	// found the bucket missing too (a store that answers a re-create with
	// 200, as AWS in us-east-1) made it first.
	return s.store.CreateBucketDoc(req.r.Context(), req.bucket, docOwner, b)
}

// errOwnBucket is existingBucket's answer to the owner re-creating its
// bucket with the default ACL: createBucket answers it as AWS does in the
// region (200 in us-east-1, else BucketAlreadyOwnedByYou).
var errOwnBucket = errors.New("the caller owns the bucket")

// existingBucket answers a CreateBucket of a bucket that exists and has
// an owner document: errOwnBucket to its owner asking for the
// default ACL, BucketAlreadyExists to anyone else (and to an owner asking
// for another ACL, which S3 would not apply). nil when the bucket is not
// there or has no owner (the store answers, as before).
//
// existed reports a bucket that is there without an owner: the store
// answers its CreateBucket as before, and it gets no owner (a store that
// answers 200 to a re-create must not let any credential claim a bucket
// others use).
func (s *Server) existingBucket(req *request, plain bool) (existed bool, err error) {
	// A HeadBucket first: the bucket is new in most CreateBuckets, and a
	// listing of a bucket that is not there is a failure to the metrics
	// (retry.refusalOutcome), where HeadBucket's 404 is an answer.
	err = s.store.HeadBucket(req.r.Context(), req.bucket)
	docs := map[string][]byte(nil)
	if err == nil {
		docs, err = s.store.BucketDocs(req.r.Context(), req.bucket)
	}
	switch {
	case sealstore.StoreCode(err) == "NoSuchBucket" || sealstore.IsNotFound(err):
		return false, nil
	case sealstore.StoreCode(err) == "AccessDenied" || sealstore.StoreCode(err) == "Forbidden":
		// A bucket s3seal's credentials may not reach is someone else's,
		// unless the store refuses those credentials outright: a
		// bodiless HEAD cannot say, a signed listing can.
		if cerr := s.store.CheckCredentials(req.r.Context()); cerr != nil {
			return false, cerr
		}
		return false, s3err.New(s3err.BucketAlreadyExists, "")
	case err != nil:
		return false, err
	}
	o, ok := bucketOwnerOf(docs)
	if !ok {
		return true, nil
	}
	if _, acl := docs[docACL]; plain && !acl && o.OwnedBy(req.who) {
		return true, errOwnBucket
	}
	return true, s3err.New(s3err.BucketAlreadyExists, "")
}

// ownerOf is the owner as answers show it: the display name of the
// credential with the id now, else the one kept.
func (s *Server) ownerOf(o access.Owner) owner {
	if p, ok := s.principalByID(o.ID); ok {
		return owner{ID: p.CanonicalID, DisplayName: p.DisplayName}
	}
	return owner{ID: o.ID, DisplayName: o.DisplayName}
}

// principalByID is the credential whose canonical id is id.
func (s *Server) principalByID(id string) (access.Principal, bool) {
	for _, c := range s.cfg.Credentials {
		if p := c.principal(); p.CanonicalID == id {
			return p, true
		}
	}
	return access.Principal{}, false
}

// principalByEmail is the credential whose e-mail address is addr (case
// does not matter, as in S3).
func (s *Server) principalByEmail(addr string) (access.Principal, bool) {
	for _, c := range s.cfg.Credentials {
		if p := c.principal(); p.Email != "" && strings.EqualFold(p.Email, addr) {
			return p, true
		}
	}
	return access.Principal{}, false
}

// bucketOwner is the owner of req's bucket as answers show it: the kept
// owner, else (no owner document) the caller, as s3seal showed every
// bucket's owner before it kept owners.
func (s *Server) bucketOwner(req *request) (owner, error) {
	docs, err := s.store.BucketDocs(req.r.Context(), req.bucket)
	if err != nil {
		return owner{}, bucketErr(err)
	}
	if o, ok := bucketOwnerOf(docs); ok {
		return s.ownerOf(o), nil
	}
	return owner{ID: req.who.CanonicalID, DisplayName: req.who.DisplayName}, nil
}

// objectOwners gives the owner a listing shows for each key of req's
// bucket: the bucket's owner, or the owner kept in an object's record
// (read only in a bucket where some object has one).
func (s *Server) objectOwners(req *request) func(key string) owner {
	bo, err := s.bucketOwner(req)
	if err != nil {
		bo = owner{ID: req.who.CanonicalID, DisplayName: req.who.DisplayName}
	}
	docs, err := s.store.BucketDocs(req.r.Context(), req.bucket)
	if _, flagged := docs[sealstore.ObjectRecordsDoc]; err != nil || !flagged {
		return func(string) owner { return bo }
	}
	return func(key string) owner {
		// Shown, not decided by: a listing reads no object's envelope,
		// so the record is not checked against the content listed.
		a, _, kept, err := s.objectACL(req, req.bucket, key, "")
		if err != nil || !kept {
			return bo
		}
		return s.ownerOf(access.Owner{ID: a.Owner.ID})
	}
}

// ownsListed reports whether ListBuckets shows bucket to req's caller:
// S3 lists the buckets the caller's account owns; a bucket without an owner
// document is listed to every credential whose lists reach it, as before.
func (s *Server) ownsListed(req *request, bucket string) (bool, error) {
	docs, err := s.store.BucketDocs(req.r.Context(), bucket)
	switch {
	case sealstore.IsKMSUnavailable(err):
		// The documents are sealed under a KMS key the KMS does not
		// answer for: the listing cannot tell owners apart (503).
		return false, err
	case err != nil:
		return true, nil // listed as before; any request to it is decided then
	}
	o, ok := bucketOwnerOf(docs)
	return !ok || o.OwnedBy(req.who), nil
}

// ClaimServiceBucket makes bucket the service's: it creates the bucket on
// the store when missing and gives it an owner document naming service
// and cred, the credential the service signs with. A bucket the service
// already owns is left as it is; one without an owner (made by an older
// s3seal, which gave the service's bucket none) is claimed; one another
// owner holds, an account that created it through the S3 API, is an
// error naming it: the service never takes an account's bucket. Through
// the S3 API the bucket is then the service's alone (package access
// decides it: the service's credential, and credentials whose lists name
// it, never a policy or an ACL); CreateBucket of its name answers
// BucketAlreadyExists and ListBuckets shows it to no one else.
func ClaimServiceBucket(ctx context.Context, store ObjectStore, bucket, service string, cred Credential) error {
	p := cred.principal()
	want := access.Owner{ID: p.CanonicalID, DisplayName: p.DisplayName, Service: service}
	if err := store.CreateBucket(ctx, bucket); err != nil {
		switch sealstore.StoreCode(err) {
		case "BucketAlreadyOwnedByYou", "BucketAlreadyExists":
		default:
			return err
		}
	}
	doc, err := json.Marshal(want)
	if err != nil {
		return err
	}
	for range 2 {
		docs, err := store.BucketDocs(ctx, bucket)
		if toAPIError(err).Code == s3err.SlowDown {
			// A bucket the store made a moment ago (this claim's own
			// CreateBucket) without an owner yet: the conditional write
			// below decides whose it is.
			docs, err = map[string][]byte{}, nil
		}
		if err != nil {
			return err
		}
		if o, ok := bucketOwnerOf(docs); ok {
			if o == want {
				return nil
			}
			if o.Service != "" {
				return fmt.Errorf("bucket %s belongs to s3seal's %s, with another credential", bucket, o.Service)
			}
			return fmt.Errorf("bucket %s belongs to %s (canonical id %s, account %s), who created it through the S3 API; give the %s its own bucket",
				bucket, o.DisplayName, o.ID, o.Account, service)
		}
		// Conditional: a replica claiming it at the same moment wrote the
		// same document, which the second pass finds.
		err = store.CreateBucketDoc(ctx, bucket, docOwner, doc)
		if err == nil {
			return nil
		}
		if code := toAPIError(err).Code; code != s3err.PreconditionFailed && code != s3err.ConditionalRequestConflict {
			return err
		}
	}
	return fmt.Errorf("bucket %s: its owner document changed while s3seal claimed it for the %s", bucket, service)
}
