package sealstore

import (
	"context"
)

// The records a write leaves: sealstore writes them as part of each
// write (Put, Copy, CompleteMultipart), bound to the content the write
// made, so that no caller can write an object without deciding its
// record, nor bind a record to other content than the write's. A
// multipart upload's record waits under a name of its own (pending)
// until its completion makes it the object's, or its abort drops it.

// ObjectRecordsDoc is the bucket document that says some object of the
// bucket may have a record: a bucket without it has none, and its reads
// look for none. PutObjectRecord sets it with the bucket's first record.
const ObjectRecordsDoc = "object-acls"

// RecordWrite is what a write does to its object's record. Body, when
// not nil, is kept as the record of the content written; nil drops the
// record the key had (the write gives the bucket's default).
type RecordWrite struct {
	Body []byte
}

// UploadRecordKey is the name whose record (ObjectRecord) is an upload's
// pending one, which shows the upload's initiator: under ReservedPrefix,
// which no client key can be (CheckKey), so no client's PutObjectAcl
// reaches it.
func UploadRecordKey(uploadID string) string { return ReservedPrefix + "upload-acl/" + uploadID }

// uploadContent is what an upload's pending record is bound to: the
// content the upload will make (its object id, which no other upload
// has), marked as pending. Not the store's upload id, which a store may
// give again to another upload after the first is gone (aborted by a
// lifecycle rule around s3seal), whose completion must not take the
// first's record.
func uploadContent(content string) string { return "upload:" + content }

// HasObjectRecords reports whether some object of bucket may have a
// record (ObjectRecordsDoc).
func (s *Store) HasObjectRecords(ctx context.Context, bucket string) (bool, error) {
	docs, err := s.writeDocs(ctx, bucket)
	if err != nil {
		return false, err
	}
	_, ok := docs[ObjectRecordsDoc]
	return ok, nil
}

// flagObjectRecords sets ObjectRecordsDoc, before a bucket's first record.
func (s *Store) flagObjectRecords(ctx context.Context, bucket string) error {
	flagged, err := s.HasObjectRecords(ctx, bucket)
	if err != nil || flagged {
		return err
	}
	return s.PutBucketDoc(ctx, bucket, ObjectRecordsDoc, []byte("1"))
}

// writeRecord does w to key's record once the write made info there;
// flagged says whether the bucket had records before the write. In a
// versioned bucket the record is kept for the new version too, so that
// it still decides a read of that version by id once another write has
// replaced the key's.
func (s *Store) writeRecord(ctx context.Context, bucket, key string, w *RecordWrite, flagged bool, info ObjectInfo) error {
	switch {
	case w == nil:
		return nil
	case w.Body != nil:
		rec := Record{For: info.ContentID(), Body: w.Body}
		if err := s.PutObjectRecord(ctx, bucket, key, "", rec); err != nil {
			return err
		}
		if v := info.VersionID; v != "" && v != "null" {
			return s.PutObjectRecord(ctx, bucket, key, v, rec)
		}
		return nil
	case flagged:
		return s.DeleteObjectRecord(ctx, bucket, key, "")
	}
	return nil
}

// keepPendingRecord keeps a new upload's record until it completes,
// bound to the content the upload makes; an upload without one drops
// what an earlier upload of the same id may have left (flagged: the
// bucket had records).
func (s *Store) keepPendingRecord(ctx context.Context, bucket, uploadID, content string, flagged bool, w *RecordWrite) error {
	switch {
	case w == nil:
		return nil
	case w.Body != nil:
		return s.PutObjectRecord(ctx, bucket, UploadRecordKey(uploadID), "", Record{For: uploadContent(content), Body: w.Body})
	case flagged:
		return s.DeleteObjectRecord(ctx, bucket, UploadRecordKey(uploadID), "")
	}
	return nil
}

// completeRecord gives the object an upload completed its pending
// record, else none (the bucket's default), in a bucket that had records
// (flagged) before the completion: an upload is its
// initiator's, not its completer's. A completion that finds no pending
// record leaves the key's record when it is bound to this very content:
// another completion of the upload (a client's retry sent to another
// replica) already moved the pending one there.
func (s *Store) completeRecord(ctx context.Context, bucket, key, uploadID string, flagged bool, done ObjectInfo) error {
	if !flagged {
		return nil
	}
	pending, ok, err := s.ObjectRecord(ctx, bucket, UploadRecordKey(uploadID), "")
	if err != nil {
		return err
	}
	if !ok || pending.For != uploadContent(done.ContentID()) {
		cur, ok, err := s.ObjectRecord(ctx, bucket, key, "")
		if err != nil || ok && cur.For == done.ContentID() {
			return err
		}
		return s.DeleteObjectRecord(ctx, bucket, key, "")
	}
	if err := s.writeRecord(ctx, bucket, key, &RecordWrite{Body: pending.Body}, true, done); err != nil {
		return err
	}
	return s.DeleteObjectRecord(ctx, bucket, UploadRecordKey(uploadID), "")
}

// dropPendingRecord forgets an aborted upload's record.
func (s *Store) dropPendingRecord(ctx context.Context, bucket, uploadID string, flagged bool) error {
	if !flagged {
		return nil
	}
	return s.DeleteObjectRecord(ctx, bucket, UploadRecordKey(uploadID), "")
}
