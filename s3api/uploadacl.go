package s3api

import "github.com/s3seal/s3seal/sealstore"

// A multipart upload's ACL (x-amz-acl, x-amz-grant-* on
// CreateMultipartUpload) and its initiator's ownership are kept, when not
// the default, as the object record of a name no client key can have
// (uploadACLKey), and become the object's record when the upload
// completes; an abort drops them. An upload with the default ACL, by the
// bucket's owner, keeps nothing.

// uploadACLKey is the name whose record is an upload's pending ACL: a
// name under sealstore.ReservedPrefix, which no client key can be
// (sealstore.CheckKey), so no client's PutObjectAcl reaches it.
func uploadACLKey(uploadID string) string { return sealstore.ReservedPrefix + "upload-acl/" + uploadID }

// keepUploadACL keeps the ACL of a new upload (CreateMultipartUpload).
func (s *Server) keepUploadACL(req *request, w *objectACLWrite, uploadID string) error {
	if !w.keep {
		return nil
	}
	return s.keepObjectACL(req, uploadACLKey(uploadID), "", w.acl, w.flagged)
}

// completeUploadACL gives the completed object the upload's ACL, else the
// default: an upload is its initiator's (S3's upload Owner), not its
// completer's.
func (s *Server) completeUploadACL(req *request, uploadID string) error {
	docs, err := s.store.BucketDocs(req.r.Context(), req.bucket)
	if err != nil {
		return err
	}
	_, flagged := docs[docObjectACLs]
	if !flagged {
		return nil
	}
	a, kept, err := s.objectACL(req, req.bucket, uploadACLKey(uploadID), "")
	if err != nil {
		return err
	}
	if !kept {
		// The upload took the default: its initiator was the bucket's
		// owner (an upload of another account keeps a record), and the
		// object is the bucket owner's, whoever completes it.
		return s.store.DeleteObjectRecord(req.r.Context(), req.bucket, req.key, "")
	}
	if err := s.keepObjectACL(req, req.key, "", a, true); err != nil {
		return err
	}
	return s.store.DeleteObjectRecord(req.r.Context(), req.bucket, uploadACLKey(uploadID), "")
}

// dropUploadACL forgets an aborted upload's ACL.
func (s *Server) dropUploadACL(req *request, uploadID string) error {
	docs, err := s.store.BucketDocs(req.r.Context(), req.bucket)
	if err != nil {
		return err
	}
	if _, flagged := docs[docObjectACLs]; !flagged {
		return nil
	}
	return s.store.DeleteObjectRecord(req.r.Context(), req.bucket, uploadACLKey(uploadID), "")
}
