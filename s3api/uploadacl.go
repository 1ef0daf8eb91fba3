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

// uploadContent is what an upload's pending record is bound to: a name
// no object's content has.
func uploadContent(uploadID string) string { return "upload:" + uploadID }

// keepUploadACL keeps the ACL of a new upload (CreateMultipartUpload).
func (s *Server) keepUploadACL(req *request, w *objectACLWrite, uploadID string) error {
	if !w.keep {
		return nil
	}
	return s.keepObjectACL(req, uploadACLKey(uploadID), "", w.acl, w.flagged, uploadContent(uploadID))
}

// completeUploadACL gives the completed object the upload's ACL, else the
// default: an upload is its initiator's (S3's upload Owner), not its
// completer's. The record is bound to the content the completion made.
func (s *Server) completeUploadACL(req *request, uploadID string, done sealstore.ObjectInfo) error {
	docs, err := s.store.BucketDocs(req.r.Context(), req.bucket)
	if err != nil {
		return err
	}
	_, flagged := docs[docObjectACLs]
	if !flagged {
		return nil
	}
	a, kept, err := s.objectACLOfContent(req, uploadACLKey(uploadID), "", uploadContent(uploadID))
	if err != nil {
		return err
	}
	if !kept {
		// The upload took the default: its initiator was the bucket's
		// owner (an upload of another account keeps a record), and the
		// object is the bucket owner's, whoever completes it. Unless
		// another completion of this upload (a client's retry sent to
		// another replica) already gave this very content the record it
		// took from the pending one.
		if _, mine, err := s.objectACLOfContent(req, req.key, "", done.ContentID()); err != nil || mine {
			return err
		}
		return s.store.DeleteObjectRecord(req.r.Context(), req.bucket, req.key, "")
	}
	if err := s.keepObjectACL(req, req.key, "", a, true, done.ContentID()); err != nil {
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
