package s3api

// aclDecision decides by ACL grants as S3 maps its permissions to
// operations: the bucket's ACL gives READ (list the bucket), WRITE
// (write and delete its objects, multipart uploads; never a version's
// deletion, notByACL), READ_ACP and
// WRITE_ACP (read and change the bucket's ACL); an object's ACL gives
// READ (read the object), READ_ACP and WRITE_ACP (its ACL), and its owner
// all three. FULL_CONTROL is all of them. A grant to AllUsers is to
// anyone, anonymous requests included (when s3seal serves them); to
// AuthenticatedUsers, to any of s3seal's credentials. With the bucket's
// public access block's IgnorePublicAcls, both count for nothing.

// The permission an operation needs of the bucket's ACL.
var bucketOpPermission = map[string]string{
	"ListObjects": "READ", "ListObjectsV2": "READ", "ListObjectVersions": "READ", "HeadBucket": "READ",
	"ListMultipartUploads": "READ",
	"GetBucketAcl":         "READ_ACP", "PutBucketAcl": "WRITE_ACP",
	"PutObject": "WRITE", "CopyObject": "WRITE", "DeleteObject": "WRITE", "DeleteObjects": "WRITE",
	"CreateMultipartUpload": "WRITE", "UploadPart": "WRITE", "UploadPartCopy": "WRITE",
	"CompleteMultipartUpload": "WRITE", "AbortMultipartUpload": "WRITE", "ListParts": "WRITE",
}

// The permission an operation needs of the object's ACL.
var objectOpPermission = map[string]string{
	"GetObject": "READ", "HeadObject": "READ", "GetObjectAttributes": "READ",
	"GetObjectAcl": "READ_ACP", "PutObjectAcl": "WRITE_ACP",
}

// notByACL are the actions no ACL grant gives, whatever its permission:
// S3 lets the bucket owner do them, or whom a bucket policy allows. A
// delete naming a version (s3:DeleteObjectVersion) destroys history, so a
// WRITE grant (a drop-box writer, everyone's public-read-write) may add
// delete markers but never remove a version, its own included.
var notByACL = map[string]bool{"s3:DeleteObjectVersion": true}

// aclDecision is what the bucket's (and the object's) ACL grants say of
// req: allow, or nothing.
func (s *Server) aclDecision(req *request, op string, docs map[string][]byte) decision {
	if action, _ := policyActionOf(req, op); notByACL[action] {
		return decideNone
	}
	ignorePublic := publicAccessBlockOf(docs).IgnorePublicAcls
	if perm, ok := objectOpPermission[op]; ok && req.key != "" {
		if _, flagged := docs[docObjectACLs]; !flagged {
			return decideNone // every object has the default ACL: its owner's, the bucket's
		}
		// A version named by id is decided by its own record (kept by
		// PutObjectAcl for a version), never by the current object's:
		// the current ACL may have been put on another version.
		a, forContent, kept, err := s.objectACL(req, req.bucket, req.key, req.r.URL.Query().Get("versionId"))
		if err != nil || !kept {
			return decideNone
		}
		if !req.who.isAnonymous() && a.Owner.ID == req.who.CanonicalID || grants(a, req.who, perm, ignorePublic) {
			// Allowed on the content the record was kept for, and no
			// other: an overwrite landing before the read is not it.
			req.boundTo = forContent
			return decideAllow
		}
		return decideNone
	}
	perm, ok := bucketOpPermission[op]
	if !ok {
		return decideNone
	}
	d, ok := docs[docACL]
	if !ok {
		return decideNone
	}
	if a, ok := decodeStoredACL(d); ok && grants(a, req.who, perm, ignorePublic) {
		return decideAllow
	}
	return decideNone
}

// grants reports whether a gives who perm (or FULL_CONTROL).
func grants(a aclDoc, who principal, perm string, ignorePublic bool) bool {
	for _, g := range a.Grants {
		if g.Permission != perm && g.Permission != "FULL_CONTROL" {
			continue
		}
		switch gr := g.Grantee; {
		case gr.Type == "CanonicalUser" && !who.isAnonymous() && gr.ID == who.CanonicalID:
			return true
		case gr.Type == "Group" && gr.URI == groupAllUsers && !ignorePublic:
			return true
		case gr.Type == "Group" && gr.URI == groupAuthUsers && !ignorePublic && !who.isAnonymous():
			return true
		}
	}
	return false
}
