package s3api

import (
	"net/http"
	"sort"
	"strings"

	"github.com/gorilla/mux"

	"github.com/s3seal/s3seal/s3api/s3err"
	"github.com/s3seal/s3seal/sealstore"
)

// plainParams are the query parameters that select no sub-resource: list
// parameters, GET response overrides and presigned-URL fields. Any other
// parameter names a sub-resource; a route serves it only when the route
// lists it as allowed (acl, tagging, versioning and the others routed
// below), and one no route allows gets 501 NotImplemented naming it rather
// than being passed through.
var plainParams = map[string]bool{
	"prefix": true, "delimiter": true, "marker": true, "max-keys": true,
	"encoding-type": true, "list-type": true, "continuation-token": true,
	"start-after": true, "fetch-owner": true, "x-id": true,
	"response-content-type": true, "response-content-language": true,
	"response-expires": true, "response-cache-control": true,
	"response-content-disposition": true, "response-content-encoding": true,
	"x-amz-algorithm": true, "x-amz-credential": true, "x-amz-date": true,
	"x-amz-expires": true, "x-amz-signedheaders": true, "x-amz-signature": true,
	"x-amz-security-token": true, "x-amz-content-sha256": true,
	"x-amz-checksum-mode": true, "x-amz-user-agent": true,
}

// subresources implemented per level (lower case); see routes.
var (
	bucketSubs = map[string]bool{"location": true, "delete": true, "uploads": true,
		"key-marker": true, "upload-id-marker": true, "max-uploads": true}
	objectSubs = map[string]bool{"uploads": true, "uploadid": true, "partnumber": true,
		"part-number-marker": true, "max-parts": true,
		"attributes": true}
	serviceSubs = map[string]bool{"max-buckets": true}
)

// routes is the table of contents of the S3 API: every route is here,
// naming its handler, and the files hold them by subject:
//
//	server.go              Config, Server, serve (authentication, slots, the request)
//	requestshape.go        refusals by the request's shape alone, before authentication
//	access.go              credentials and what each may read and write
//	refusals.go            AccessDenied and anonymous refusals, and their log line
//	headers.go             the headers each operation refuses; expected bucket owner
//	body.go                reading request bodies and XML; aws-chunked per operation
//	checksums.go           flexible checksums of a body and in answers
//	errors.go              any error as the S3 error document (the table: package s3err)
//	xml.go                 the XML documents of buckets, listings, copies and deletes
//	bucket.go              bucket names, HeadBucket, DeleteBucket, GetBucketLocation
//	createbucket.go        CreateBucket with its configuration, lock, ACL and tags
//	bucketconfig.go        lifecycle rule count and bucket tags, judged as S3 does
//	lifecycle.go           lifecycle rules judged as S3 does; x-amz-expiration (lifecycle_cache.go: the rules read back)
//	bucketpolicy.go        bucket policies, judged as S3 judges them when put
//	policydoc.go           PUT, GET, DELETE ?policy and GET ?policyStatus (kept by s3seal)
//	authorize.go           the bucket's documents and the request, for package access to decide
//	policyvalues.go        the condition keys a bucket policy asks of a request
//	acl.go                 what S3 takes in ACL and ownership controls documents
//	owner.go               bucket owners kept and shown, service buckets claimed, principals by id and e-mail
//	acls.go                ACLs kept by s3seal: canned, grant headers, documents, answers
//	bucketacl.go           ?acl of buckets
//	publicaccess.go        ?publicAccessBlock
//	ownership.go           ?ownershipControls, and what it does to ACLs
//	objectacl.go           object ACLs and owners (object records), ?acl of objects
//	uploadacl.go           a multipart upload's ACL until it completes
//	anonymous.go           unsigned requests (--allow-anonymous)
//	website.go             website configuration, and absent-document answers
//	cors.go                CORS preflights, actual-request headers, the rules cache (rules: package cors)
//	list.go                ListBuckets, ListObjects V1 and V2, DeleteObjects
//	versions.go            bucket versioning, ListObjectVersions, version ids
//	object.go              PutObject, GetObject, HeadObject, DeleteObject
//	copy.go                CopyObject and the copy source
//	attributes.go          GetObjectAttributes
//	storageclass.go        x-amz-storage-class and the website redirect header
//	sse.go                 SSE-C and SSE-KMS headers
//	protect.go             Object Lock and tag headers of a write
//	lockcheck.go           ?object-lock: Object Lock configurations, per-key locks
//	lockretention.go       ?retention and ?legal-hold of object versions
//	lockdoc.go             strict reading of Object Lock documents
//	settings.go            the store's settings: ?tagging, and what ?object-lock, ?cors, ?lifecycle, ?website, ?retention, ?legal-hold share
//	subdocs.go             the documents of the store's settings
//	subresversion.go       version answers of object sub-resources
//	multipart.go           multipart uploads: create, parts, copy parts, complete, list
//	multipart_args.go      multipart arguments (counts, checksum type), conditional aborts
//	multipart_complete.go  checks of a completion's parts and checksums
//	multipart_xml.go       the XML documents of multipart uploads
//	postform.go            reading a browser POST form (the policy: package postpolicy)
//	postobject.go          browser POST uploads
//	keepalive.go           keep-alive of long answers whose status went out early
//	slowclient.go          the guard against clients that stall a transfer
//	linger.go              reading a refused request's body so the client sees the refusal
//	observe.go             metrics observer and per-request info
func (s *Server) routes() *mux.Router {
	r := mux.NewRouter().SkipClean(true)
	r.Path("/healthz").Methods(http.MethodGet, http.MethodHead).MatcherFunc(unsigned).HandlerFunc(s.healthz)
	if s.cfg.Readiness != nil {
		r.Path("/readyz").Methods(http.MethodGet, http.MethodHead).MatcherFunc(unsigned).HandlerFunc(s.readyz)
	}
	if s.cfg.Metrics != nil {
		r.Path("/metrics").Methods(http.MethodGet).MatcherFunc(unsigned).Handler(s.cfg.Metrics)
	}

	level := func(want int) mux.MatcherFunc {
		return func(r *http.Request, _ *mux.RouteMatch) bool {
			bucket, key := s.target(r)
			switch {
			case bucket == "":
				return want == 0
			case key == "":
				return want == 1
			default:
				return want == 2
			}
		}
	}
	unknownSub := func(allowed map[string]bool) mux.MatcherFunc {
		return func(r *http.Request, _ *mux.RouteMatch) bool {
			for k := range r.URL.Query() {
				lk := strings.ToLower(k)
				if !plainParams[lk] && !allowed[lk] {
					return true
				}
			}
			return false
		}
	}
	has := func(param string) mux.MatcherFunc {
		return func(r *http.Request, _ *mux.RouteMatch) bool {
			_, ok := r.URL.Query()[param]
			return ok
		}
	}

	// A CORS preflight is unsigned and answered from the bucket's rules
	// (cors.go), whatever the query.
	r.Methods(http.MethodOptions).MatcherFunc(func(r *http.Request, m *mux.RouteMatch) bool {
		return !level(0)(r, m)
	}).HandlerFunc(s.preflight)

	svc := r.MatcherFunc(level(0)).Subrouter()
	svc.Methods(http.MethodGet).MatcherFunc(unknownSub(serviceSubs)).HandlerFunc(s.serve("NotImplemented", accService, notImplemented))
	svc.Methods(http.MethodGet).HandlerFunc(s.serve("ListBuckets", accService, s.listBuckets))

	// A sub-resource route takes the requests that name it and no other
	// parameter but versionId (objects) and presigned-URL fields
	// (onlySub); they come before each router's catch-all for unknown
	// parameters.
	sub := func(rt *mux.Router, object bool, method, name, op string, need bucketNeed, h handler) {
		rt.Methods(method).MatcherFunc(onlySub(name, object)).HandlerFunc(s.serve(op, need, h))
	}
	get, put, del := http.MethodGet, http.MethodPut, http.MethodDelete

	b := r.MatcherFunc(level(1)).Subrouter()
	// Kept by s3seal as the bucket's documents (sealstore.BucketDocs).
	sub(b, false, get, "acl", "GetBucketAcl", accRead, s.getBucketACL) // bucketacl.go
	sub(b, false, put, "acl", "PutBucketAcl", accWrite, s.putBucketACL)
	sub(b, false, get, "publicAccessBlock", "GetPublicAccessBlock", accRead, s.getPublicAccessBlock) // publicaccess.go
	sub(b, false, put, "publicAccessBlock", "PutPublicAccessBlock", accWrite, s.putPublicAccessBlock)
	sub(b, false, del, "publicAccessBlock", "DeletePublicAccessBlock", accWrite, s.deletePublicAccessBlock)
	sub(b, false, get, "ownershipControls", "GetBucketOwnershipControls", accRead, s.getOwnershipControls) // ownership.go
	sub(b, false, put, "ownershipControls", "PutBucketOwnershipControls", accWrite, s.putOwnershipControls)
	sub(b, false, del, "ownershipControls", "DeleteBucketOwnershipControls", accWrite, s.deleteOwnershipControls)
	sub(b, false, get, "policy", "GetBucketPolicy", accRead, s.getBucketPolicy) // policydoc.go
	sub(b, false, put, "policy", "PutBucketPolicy", accWrite, s.putBucketPolicy)
	sub(b, false, del, "policy", "DeleteBucketPolicy", accWrite, s.deleteBucketPolicy)
	sub(b, false, get, "policyStatus", "GetBucketPolicyStatus", accRead, s.getBucketPolicyStatus)
	sub(b, false, get, "encryption", "GetBucketEncryption", accRead, s.getBucketEncryption) // bucketencryption.go
	sub(b, false, put, "encryption", "PutBucketEncryption", accWrite, s.putBucketEncryption)
	sub(b, false, del, "encryption", "DeleteBucketEncryption", accWrite, s.deleteBucketEncryption)
	sub(b, false, get, "logging", "GetBucketLogging", accRead, s.getBucketLogging) // bucketlogging.go
	sub(b, false, put, "logging", "PutBucketLogging", accWrite, s.putBucketLogging)
	sub(b, false, get, "requestPayment", "GetBucketRequestPayment", accRead, s.getBucketRequestPayment) // requestpayment.go
	sub(b, false, put, "requestPayment", "PutBucketRequestPayment", accWrite, s.putBucketRequestPayment)
	// Kept and enforced by the object store (sealstore.Setting, settings.go).
	sub(b, false, get, "tagging", "GetBucketTagging", accRead, s.setting(sealstore.BucketTagging)) // bucketconfig.go judges
	sub(b, false, put, "tagging", "PutBucketTagging", accWrite, s.setting(sealstore.BucketTagging))
	sub(b, false, del, "tagging", "DeleteBucketTagging", accWrite, s.setting(sealstore.BucketTagging))
	sub(b, false, get, "object-lock", "GetObjectLockConfiguration", accRead, s.setting(sealstore.BucketObjectLock)) // lockcheck.go
	sub(b, false, put, "object-lock", "PutObjectLockConfiguration", accWrite, s.setting(sealstore.BucketObjectLock))
	sub(b, false, get, "cors", "GetBucketCors", accRead, s.setting(sealstore.BucketCORS)) // cors.go
	sub(b, false, put, "cors", "PutBucketCors", accWrite, s.setting(sealstore.BucketCORS))
	sub(b, false, del, "cors", "DeleteBucketCors", accWrite, s.setting(sealstore.BucketCORS))
	sub(b, false, get, "lifecycle", "GetBucketLifecycle", accRead, s.setting(sealstore.BucketLifecycle)) // lifecycle.go
	sub(b, false, put, "lifecycle", "PutBucketLifecycle", accWrite, s.setting(sealstore.BucketLifecycle))
	sub(b, false, del, "lifecycle", "DeleteBucketLifecycle", accWrite, s.setting(sealstore.BucketLifecycle))
	sub(b, false, get, "website", "GetBucketWebsite", accRead, s.setting(sealstore.BucketWebsite)) // website.go
	sub(b, false, put, "website", "PutBucketWebsite", accWrite, s.setting(sealstore.BucketWebsite))
	sub(b, false, del, "website", "DeleteBucketWebsite", accWrite, s.setting(sealstore.BucketWebsite))
	b.MatcherFunc(unknownSub(bucketSubs)).HandlerFunc(s.serve("NotImplemented", accService, notImplemented))
	b.Methods(http.MethodGet).MatcherFunc(has("location")).HandlerFunc(s.serve("GetBucketLocation", accRead, s.getBucketLocation))
	b.Methods(http.MethodGet).MatcherFunc(has("uploads")).HandlerFunc(s.serve("ListMultipartUploads", accWrite, s.listMultipartUploads))
	b.Methods(http.MethodGet).MatcherFunc(has("versioning")).HandlerFunc(s.serve("GetBucketVersioning", accRead, s.getBucketVersioning))
	b.Methods(http.MethodPut).MatcherFunc(has("versioning")).HandlerFunc(s.serve("PutBucketVersioning", accWrite, s.putBucketVersioning))
	b.Methods(http.MethodGet).MatcherFunc(has("versions")).HandlerFunc(s.serve("ListObjectVersions", accRead, s.listObjectVersions))
	b.MatcherFunc(hasAny("versioning", "versions", "version-id-marker")).HandlerFunc(s.serve("MethodNotAllowed", accService, methodNotAllowed))
	b.Methods(http.MethodGet).Queries("list-type", "2").HandlerFunc(s.serve("ListObjectsV2", accRead, s.listObjectsV2))
	b.Methods(http.MethodGet).HandlerFunc(s.serve("ListObjects", accRead, s.listObjectsV1))
	b.Methods(http.MethodPost).MatcherFunc(has("delete")).HandlerFunc(s.serve("DeleteObjects", accWrite, s.deleteObjects))
	b.Methods(http.MethodPost).MatcherFunc(isPostForm).HandlerFunc(s.postObject) // browser upload; the form carries the signature
	b.Methods(http.MethodPost).MatcherFunc(plainBucketPost).HandlerFunc(s.postNotForm)
	b.Methods(http.MethodPut).HandlerFunc(s.serve("CreateBucket", accWrite, s.createBucket))
	b.Methods(http.MethodHead).HandlerFunc(s.serve("HeadBucket", accRead, s.headBucket))
	b.Methods(http.MethodDelete).HandlerFunc(s.serve("DeleteBucket", accWrite, s.deleteBucket))

	o := r.MatcherFunc(level(2)).Subrouter()
	sub(o, true, get, "acl", "GetObjectAcl", accRead, s.getObjectACL) // objectacl.go
	sub(o, true, put, "acl", "PutObjectAcl", accWrite, s.putObjectACL)
	sub(o, true, get, "tagging", "GetObjectTagging", accRead, s.setting(sealstore.ObjectTagging)) // settings.go
	sub(o, true, put, "tagging", "PutObjectTagging", accWrite, s.setting(sealstore.ObjectTagging))
	sub(o, true, del, "tagging", "DeleteObjectTagging", accWrite, s.setting(sealstore.ObjectTagging))
	sub(o, true, get, "retention", "GetObjectRetention", accRead, s.setting(sealstore.ObjectRetention)) // lockretention.go
	sub(o, true, put, "retention", "PutObjectRetention", accWrite, s.setting(sealstore.ObjectRetention))
	sub(o, true, get, "legal-hold", "GetObjectLegalHold", accRead, s.setting(sealstore.ObjectLegalHold))
	sub(o, true, put, "legal-hold", "PutObjectLegalHold", accWrite, s.setting(sealstore.ObjectLegalHold))
	o.MatcherFunc(unknownSub(objectSubs)).HandlerFunc(s.serve("NotImplemented", accService, notImplemented))
	// Multipart uploads.
	o.Methods(http.MethodPost).MatcherFunc(has("uploads")).HandlerFunc(s.serve("CreateMultipartUpload", accWrite, s.createMultipartUpload))
	o.Methods(http.MethodPost).MatcherFunc(has("uploadId")).HandlerFunc(s.serve("CompleteMultipartUpload", accWrite, s.completeMultipartUpload))
	o.Methods(http.MethodPut).MatcherFunc(has("uploadId")).MatcherFunc(has("partNumber")).
		HeadersRegexp("X-Amz-Copy-Source", ".").HandlerFunc(s.serve("UploadPartCopy", accWrite, s.uploadPartCopy))
	o.Methods(http.MethodPut).MatcherFunc(has("uploadId")).MatcherFunc(has("partNumber")).HandlerFunc(s.serve("UploadPart", accWrite, s.uploadPart))
	o.Methods(http.MethodDelete).MatcherFunc(has("uploadId")).HandlerFunc(s.serve("AbortMultipartUpload", accWrite, s.abortMultipartUpload))
	o.Methods(http.MethodGet).MatcherFunc(has("uploadId")).HandlerFunc(s.serve("ListParts", accWrite, s.listParts))
	o.Methods(http.MethodGet).MatcherFunc(has("attributes")).HandlerFunc(s.serve("GetObjectAttributes", accRead, s.getObjectAttributes))
	// A multipart parameter anywhere else changes what the request means
	// and is not ignored.
	o.MatcherFunc(misplacedMultipart).HandlerFunc(s.serve("InvalidRequest", accService, func(*request) error {
		return s3err.New(s3err.InvalidRequest, "This operation does not take the uploads, uploadId or partNumber parameter in this combination.")
	}))
	o.Methods(http.MethodPut, http.MethodPost).MatcherFunc(plainWithVersion).HandlerFunc(s.serve("InvalidArgument", accService, versionOnWrite))
	o.Methods(http.MethodPut).HeadersRegexp("X-Amz-Copy-Source", ".").HandlerFunc(s.serve("CopyObject", accWrite, s.copyObject))
	o.Methods(http.MethodPut).HandlerFunc(s.serve("PutObject", accWrite, s.putObject))
	o.Methods(http.MethodGet).HandlerFunc(s.serve("GetObject", accRead, s.getObject))
	o.Methods(http.MethodHead).HandlerFunc(s.serve("HeadObject", accRead, s.headObject))
	o.Methods(http.MethodDelete).HandlerFunc(s.serve("DeleteObject", accWrite, s.deleteObject))

	r.NotFoundHandler = s.serve("NotImplemented", accService, notImplemented)
	r.MethodNotAllowedHandler = s.serve("MethodNotAllowed", accService, func(*request) error { return s3err.New(s3err.MethodNotAllowed, "") })
	return r
}

// unsigned matches requests without any signature, so that a signed
// request for a bucket named "healthz" still reaches the S3 API.
func unsigned(r *http.Request, _ *mux.RouteMatch) bool {
	return r.Header.Get("Authorization") == "" && r.URL.Query().Get("X-Amz-Signature") == ""
}

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Ready != nil && !s.cfg.Ready() {
		http.Error(w, "not ready", http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "text/plain")
	_, _ = w.Write([]byte("ok\n"))
}

// readyz answers 200 when Readiness finds nothing wrong, else 503 with
// what is wrong, in plain text.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if err := s.cfg.Readiness(r.Context()); err != nil {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte("not ready: " + err.Error() + "\n"))
		return
	}
	_, _ = w.Write([]byte("ready\n"))
}

// notImplemented answers an operation s3seal does not implement, naming
// it (its subresource) and how each common client is kept from asking.
func notImplemented(req *request) error {
	var subs []string
	for k := range req.r.URL.Query() {
		if lk := strings.ToLower(k); !plainParams[lk] && !bucketSubs[lk] && !objectSubs[lk] {
			subs = append(subs, "?"+k)
		}
	}
	sort.Strings(subs)
	what := "this operation"
	if len(subs) > 0 {
		what = req.r.Method + " " + strings.Join(subs, " ")
	}
	return s3err.New(s3err.NotImplemented, "s3seal does not implement "+what+". "+unimplementedHint)
}

// unimplementedHint says what s3seal serves and which client settings
// stay within it.
const unimplementedHint = "It serves buckets, objects, copies, multipart uploads, listings, versions, " +
	"tags and Object Lock (where the object store has them), SSE-C and SSE-KMS, and bucket policies, CORS, lifecycle, website configuration (kept, not served), ownership and ACLs " +
	"(admin credentials only), default encryption, logging (kept, no logs delivered) and request payment (bucket owner only); " +
	"other bucket configurations (notifications, replication, inventory, analytics, accelerate) are not served: " +
	"leave those off in the client."

// misplacedMultipart matches object requests that carry a multipart
// parameter the routes above did not take: partNumber is only for GET and
// HEAD (a part of an object) besides UploadPart.
func misplacedMultipart(r *http.Request, _ *mux.RouteMatch) bool {
	q := r.URL.Query()
	if q.Has("uploads") || q.Has("uploadId") || q.Has("part-number-marker") || q.Has("max-parts") {
		return true
	}
	return q.Has("partNumber") && r.Method != http.MethodGet && r.Method != http.MethodHead
}
