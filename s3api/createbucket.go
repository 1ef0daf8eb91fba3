package s3api

import (
	"bytes"
	"encoding/xml"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strings"

	"github.com/s3seal/s3seal/s3api/s3err"
	"github.com/s3seal/s3seal/sealstore"
)

// S3's canned ACLs for buckets, and its object ownership settings.
var (
	bucketCannedACLs = []string{"private", "public-read", "public-read-write", "authenticated-read", "log-delivery-write"}
	objectOwnerships = []string{"BucketOwnerPreferred", "ObjectWriter", "BucketOwnerEnforced"}
)

// region is the object store's region (Config.Region).
func (s *Server) region() string {
	if s.cfg.Region == "" {
		return "us-east-1"
	}
	return s.cfg.Region
}

// createBucket checks a CreateBucket as AWS does, so that the answer does
// not depend on the store (moto answers an unknown canned ACL with 503
// and re-creating one's own bucket with 200): the name, the headers, the
// canned ACL and object ownership, the location constraint (only the
// store's region, never "us-east-1", which AWS refuses) and the tags. A
// bucket s3seal saw created is BucketAlreadyExists, or
// BucketAlreadyOwnedByYou when the caller created it and neither request
// asked for an ACL (bucketCreators); of any other bucket the store
// answers, as before. Tags go to the new bucket as PutBucketTagging.
func (s *Server) createBucket(req *request) error {
	if err := checkBucketName(req.bucket); err != nil {
		return err
	}
	if err := createBucketPolicy.check(req.r.Header); err != nil {
		return err
	}
	h := req.r.Header
	acl := strings.TrimSpace(h.Get("X-Amz-Acl"))
	if acl != "" && !slices.Contains(bucketCannedACLs, acl) {
		return s3err.New(s3err.InvalidArgument, "")
	}
	own := strings.TrimSpace(h.Get("X-Amz-Object-Ownership"))
	if own != "" && !slices.Contains(objectOwnerships, own) {
		return s3err.New(s3err.InvalidArgument, "Invalid x-amz-object-ownership header: "+own)
	}
	if own == "BucketOwnerEnforced" && (acl != "" && acl != "private" || hasGrantHeader(h)) {
		return errACLWithEnforced()
	}
	body, err := readXMLBody(req, maxXMLBody)
	if err != nil {
		return err
	}
	var cfg createBucketConfiguration
	if len(bytes.TrimSpace(body)) > 0 {
		if err := decodeXML(body, &cfg); err != nil {
			return err
		}
		if len(cfg.Other) > 0 {
			return s3err.New(s3err.NotImplemented, "s3seal does not implement CreateBucketConfiguration element "+cfg.Other[0].XMLName.Local+".")
		}
	}
	if loc := cfg.LocationConstraint; loc != "" && (loc == "us-east-1" || loc != s.region()) {
		return errLocationConstraint()
	}
	var tags []tag
	if cfg.Tags != nil {
		tags = cfg.Tags.Tags
		if err := checkBucketTags(tags); err != nil {
			return err
		}
		if len(tags) > 0 && !s.store.HasSettings() {
			return s3err.New(s3err.NotImplemented, "s3seal does not implement bucket tags on this backend.")
		}
	}
	plain := (acl == "" || acl == "private") && !hasGrantHeader(h)
	if req.who.Anonymous() {
		return refusedBy("anonymous requests may not create buckets")
	}
	// The ACL is s3seal's to keep (bucketacl.go), checked before the
	// create and kept after it.
	newACL, setACL, err := s.aclOfRequest(h, nil, req.who.CanonicalID, req.who.CanonicalID, bucketCannedACLs)
	if err != nil {
		return err
	}
	existed, err := s.existingBucket(req, plain)
	if errors.Is(err, errOwnBucket) {
		// AWS in us-east-1 answers its owner's plain re-create of a bucket
		// with 200 and changes nothing; every other region, and a re-create
		// that would configure the bucket, BucketAlreadyOwnedByYou.
		if s.region() != "us-east-1" || len(tags) > 0 || lockEnabled(h) || own != "" {
			return s3err.New(s3err.BucketAlreadyOwnedByYou, "")
		}
		req.w.Header().Set("Location", "/"+req.bucket)
		req.w.WriteHeader(http.StatusOK)
		return nil
	}
	if err != nil {
		return err
	}
	// What follows the create (tags, ownership controls) is undone by
	// deleting the bucket when the store refuses it, so it only follows
	// the create of a bucket that was not there: a store that answers a
	// re-create of an existing bucket with 200 (moto, AWS in us-east-1)
	// must never see that bucket configured, or deleted, by a CreateBucket.
	if len(tags) > 0 {
		switch err := s.store.HeadBucket(req.r.Context(), req.bucket); {
		case err == nil:
			return s3err.New(s3err.BucketAlreadyOwnedByYou, "")
		case sealstore.StoreCode(err) == "AccessDenied" || sealstore.StoreCode(err) == "Forbidden":
			return s3err.New(s3err.BucketAlreadyExists, "")
		case !sealstore.IsNotFound(err):
			return err
		}
	}
	// The store gets the location constraint alone; the tags follow.
	body = nil
	if cfg.LocationConstraint != "" {
		body = []byte(`<CreateBucketConfiguration xmlns="` + s3ns + `"><LocationConstraint>` + cfg.LocationConstraint + `</LocationConstraint></CreateBucketConfiguration>`)
	}
	if !existed {
		// Until its owner is kept, the new bucket would be ownerless,
		// open to every credential its lists allow (an ACL or policy
		// put then would outlast the owner): authorize refuses every
		// other request to it, and another CreateBucket of it, here.
		if _, busy := s.creating.LoadOrStore(req.bucket, true); busy {
			return s3err.New(s3err.OperationAborted, "")
		}
		defer s.creating.Delete(req.bucket)
	}
	if lockEnabled(h) {
		if err := s.createLockedBucket(req, body); err != nil {
			return err
		}
	} else if err := s.store.CreateBucket(req.r.Context(), req.bucket); err != nil {
		return err
	}
	if existed {
		// The store took a re-create of a bucket without an owner:
		// nothing of it changes (no owner, ACL or ownership is kept).
		req.w.Header().Set("Location", "/"+req.bucket)
		req.w.WriteHeader(http.StatusOK)
		return nil
	}
	if err := s.recordOwner(req); err != nil {
		if se := (*sealstore.Error)(nil); errors.As(err, &se) && se.Code == "PreconditionFailed" || sealstore.StoreCode(err) == "PreconditionFailed" {
			// Another CreateBucket made it first: it is that one's.
			return s3err.New(s3err.BucketAlreadyExists, "")
		}
		// A bucket without its owner would be open to every credential
		// its lists reach: it goes again.
		if derr := s.store.UndoCreateBucket(req.r.Context(), req.bucket); derr != nil {
			slog.WarnContext(req.r.Context(), "CreateBucket: the owner could not be kept and the new bucket could not be deleted",
				"bucket", req.bucket, "err", derr)
		}
		return err
	}
	// The owner first, right after the store's create: until it is kept,
	// other processes answer SlowDown for the young bucket
	// (sealstore.Options.OwnerPendingAge), and nothing else is sent.
	if len(tags) > 0 {
		if err := s.tagNewBucket(req, tags); err != nil {
			return err
		}
	}
	if own != "" {
		if err := s.keepOwnership(req, own); err != nil {
			return err
		}
	}
	if setACL {
		if err := s.keepBucketACL(req, newACL); err != nil {
			return err
		}
	}
	req.w.Header().Set("Location", "/"+req.bucket)
	req.w.Header().Set("x-amz-bucket-arn", "arn:aws:s3:::"+req.bucket)
	req.w.WriteHeader(http.StatusOK)
	return nil
}

// tagNewBucket puts CreateBucket's tags on the bucket it created; when the
// store refuses them, the new (empty) bucket is deleted again, so that a
// failed CreateBucket leaves nothing.
func (s *Server) tagNewBucket(req *request, tags []tag) error {
	var doc tagging
	doc.TagSet.Tags = tags
	b, err := xml.Marshal(doc)
	if err != nil {
		return err
	}
	if _, err := s.store.PutSetting(req.r.Context(), sealstore.BucketTagging, sealstore.SettingRef{Bucket: req.bucket}, b, sealstore.SettingOptions{}); err != nil {
		if derr := s.store.UndoCreateBucket(req.r.Context(), req.bucket); derr != nil {
			slog.WarnContext(req.r.Context(), "CreateBucket: the store refused ?tagging and the new bucket could not be deleted",
				"bucket", req.bucket, "err", derr)
		}
		return forwardErr(err)
	}
	return nil
}

func hasGrantHeader(h http.Header) bool {
	for name := range h {
		if strings.HasPrefix(http.CanonicalHeaderKey(name), "X-Amz-Grant-") {
			return true
		}
	}
	return false
}

// AWS's words for these two end without a period (not in the table,
// whose messages are sentences).
func errLocationConstraint() *s3err.Error {
	return s3err.New(s3err.InvalidLocationConstraint, "The specified location-constraint is not valid")
}

func errACLWithEnforced() *s3err.Error {
	return s3err.New(s3err.InvalidBucketAclWithObjectOwnership, "Bucket cannot have ACLs set with ObjectOwnership's BucketOwnerEnforced setting")
}
