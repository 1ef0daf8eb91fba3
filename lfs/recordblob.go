package lfs

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/md5"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/s3seal/s3seal/backend"
)

// The record blob path serves lfs/kafkaproxy: a record value a producer
// marked with the header LFS_BLOB is stored as /lfs/produce stores a body,
// and the record's new value is the envelope.

// Header names a producer marks a record with (KafScale's names).
const (
	BlobHeader    = "LFS_BLOB"     // value: the expected checksum, or empty
	BlobAlgHeader = "LFS_BLOB_ALG" // value: sha256 (default), md5, crc32, none
)

// envelopeHeaders are the record headers copied into an envelope's
// original_headers (KafScale's list): ones that say what the blob is or
// trace it, never arbitrary application headers.
var envelopeHeaders = map[string]bool{
	"content-type": true, "content-encoding": true, "correlation-id": true, "message-id": true,
	"x-correlation-id": true, "x-request-id": true, "traceparent": true, "tracestate": true,
}

// RecordHeader is one Kafka record header.
type RecordHeader struct {
	Key   string
	Value []byte
}

// BlobSlot says where a record sits in its producer's stream. An
// idempotent producer's record (ProducerID >= 0) is named by it, so that a
// retry of the same batch, which carries the same identity, stores to the
// same key instead of leaving the first copy orphaned.
type BlobSlot struct {
	// Principal is the client's authenticated name ("" when anonymous):
	// two clients never share a key, whatever ids they send.
	Principal     string
	Topic         string
	Partition     int32
	ProducerID    int64
	ProducerEpoch int16
	Sequence      int32 // the batch's base sequence plus the record's offset delta
	// LogEnd is the partition's log end offset before the record was
	// sent (-1: unknown): the record, if it is ever written, is at or
	// after it. Kept with the blob for SweepKafkaBlobs' reader.
	LogEnd int64
}

// StoredBlob is a record blob in storage.
type StoredBlob struct {
	Key      string
	Envelope []byte // the record's new value
	// Created says this call wrote the object; false when an earlier
	// attempt of the same record had already stored it (same key, same
	// content), which a refusal of this attempt must then not delete.
	Created bool
	Size    int64
}

// BlobError is a record blob the client must be told of, with the Kafka
// error it maps to (the caller picks the code by Kind).
type BlobError struct {
	Kind string // "too_large", "checksum", "invalid", "storage"
	Msg  string
	Err  error
}

func (e *BlobError) Error() string { return e.Msg }
func (e *BlobError) Unwrap() error { return e.Err }

const recordKeyPurpose = "lfs kafka record object key"

// blobKey names a record's blob, under <namespace>/<topic>/lfs/kafka/<partition>/
// (KafkaBlobs reads topic and partition back from it). An idempotent
// producer's record gets a key derived (HMAC under a key derived from the master key, so neither
// the store nor a client can aim at one) from its slot and its content:
// a retry of the batch hashes to the same key; a client that forges
// another producer's ids with other content gets another key and cannot
// overwrite the first blob. Others get a fresh random key, as
// /lfs/produce's.
func (h *Handler) blobKey(slot BlobSlot, sha []byte, contentType string) string {
	name := func(id string) string {
		return fmt.Sprintf("%s/%s/lfs/kafka/%d/obj-%s", h.cfg.Namespace, slot.Topic, slot.Partition, id)
	}
	if slot.ProducerID < 0 {
		return name(newUUID())
	}
	keyID, _ := h.cfg.Keyring.DerivationKey()
	k, _ := h.cfg.Keyring.DeriveKey(keyID, recordKeyPurpose)
	m := hmac.New(sha256.New, k)
	var b [8 + 4 + 8 + 2 + 4]byte
	for _, s := range []string{slot.Principal, slot.Topic, contentType} {
		binary.BigEndian.PutUint64(b[:8], uint64(len(s)))
		m.Write(b[:8])
		m.Write([]byte(s))
	}
	binary.BigEndian.PutUint32(b[8:], uint32(slot.Partition))
	binary.BigEndian.PutUint64(b[12:], uint64(slot.ProducerID))
	binary.BigEndian.PutUint16(b[20:], uint16(slot.ProducerEpoch))
	binary.BigEndian.PutUint32(b[22:], uint32(slot.Sequence))
	m.Write(b[8:])
	m.Write(sha)
	return name(hex.EncodeToString(m.Sum(nil)[:16]))
}

// logEndMeta is the user metadata holding a record blob's BlobSlot.LogEnd.
const logEndMeta = "kafka-log-end"

// KafkaBlob is a record blob of the Kafka listener in storage.
type KafkaBlob struct {
	Key       string
	Topic     string
	Partition int32
	LogEnd    int64 // -1: unknown
	Modified  time.Time
}

// KafkaBlobs calls fn for each record blob of the Kafka listener last
// written before before: keys <namespace>/<topic>/lfs/kafka/<partition>/obj-*.
// Random keys (non-idempotent producers) are listed as well; both are named
// by that path. /lfs/produce's blobs are not.
func (h *Handler) KafkaBlobs(ctx context.Context, before time.Time, fn func(KafkaBlob)) error {
	in := backend.ListInput{Bucket: h.cfg.Bucket, V2: true, Prefix: h.cfg.Namespace + "/"}
	for {
		page, err := h.cfg.Store.List(ctx, in)
		if err != nil {
			h.metrics.storageErrors.Inc()
			return err
		}
		for _, e := range page.Entries {
			kb, ok := h.parseKafkaKey(e.Key)
			if !ok || !e.LastModified.Before(before) {
				continue
			}
			kb.Modified = e.LastModified
			info, err := h.cfg.Store.Head(ctx, h.cfg.Bucket, e.Key)
			if err != nil {
				continue // gone since, or unreadable: nothing to decide
			}
			if v, err := strconv.ParseInt(info.Meta[logEndMeta], 10, 64); err == nil && v >= 0 {
				kb.LogEnd = v
			}
			fn(kb)
		}
		if !page.IsTruncated {
			return nil
		}
		in.ContinuationToken = page.NextContinuationToken
	}
}

// parseKafkaKey reads topic and partition from a record blob's key.
func (h *Handler) parseKafkaKey(key string) (KafkaBlob, bool) {
	rest, ok := strings.CutPrefix(key, h.cfg.Namespace+"/")
	if !ok {
		return KafkaBlob{}, false
	}
	parts := strings.Split(rest, "/")
	if len(parts) != 5 || parts[1] != "lfs" || parts[2] != "kafka" || !strings.HasPrefix(parts[4], "obj-") {
		return KafkaBlob{}, false
	}
	p, err := strconv.ParseInt(parts[3], 10, 32)
	if err != nil || p < 0 {
		return KafkaBlob{}, false
	}
	return KafkaBlob{Key: key, Topic: parts[0], Partition: int32(p), LogEnd: -1}, true
}

// StoreRecordBlob stores value, the value of a record marked LFS_BLOB, and
// returns the envelope that replaces it. The checksum is checked before
// anything is stored; the blob is sealed, with the record's content-type
// header as its Content-Type, exactly as /lfs/produce stores a body.
func (h *Handler) StoreRecordBlob(ctx context.Context, slot BlobSlot, value []byte, headers []RecordHeader) (StoredBlob, error) {
	var want, alg, contentType string
	orig := map[string]string{}
	for _, hd := range headers {
		switch {
		case hd.Key == BlobHeader:
			want = string(hd.Value)
		case hd.Key == BlobAlgHeader:
			alg = string(hd.Value)
		case envelopeHeaders[strings.ToLower(hd.Key)]:
			orig[hd.Key] = string(hd.Value)
			if strings.EqualFold(hd.Key, "content-type") {
				contentType = string(hd.Value)
			}
		}
	}
	spec, ae := parseChecksum(alg, want)
	if ae != nil {
		return StoredBlob{}, &BlobError{Kind: "invalid", Msg: ae.message}
	}
	switch {
	case int64(len(value)) > h.cfg.MaxBlobSize:
		return StoredBlob{}, &BlobError{Kind: "too_large", Msg: fmt.Sprintf("the LFS blob is %d bytes, larger than the %d allowed", len(value), h.cfg.MaxBlobSize)}
	case len(value) == 0:
		return StoredBlob{}, &BlobError{Kind: "invalid", Msg: "the LFS blob is empty"}
	}
	s := newSums(spec)
	s.Write(value)
	if s.mismatch() {
		return StoredBlob{}, &BlobError{Kind: "checksum", Msg: fmt.Sprintf("the LFS blob does not match its %s checksum; nothing was stored", spec.alg)}
	}
	sha := s.sha.Sum(nil)
	key := h.blobKey(slot, sha, contentType)
	out := StoredBlob{Key: key, Size: int64(len(value))}
	if slot.ProducerID >= 0 {
		// A retry of a batch finds the blob an earlier attempt stored:
		// same key, same content (the key hashes it), so it is not sent
		// again. The object there must be the value: its size and its
		// plaintext ETag (authenticated with the object's key) as the
		// store was sent it; anything else is overwritten.
		if info, err := h.cfg.Store.Head(ctx, h.cfg.Bucket, key); err == nil && info.Size == int64(len(value)) &&
			info.ETag == h.storedETag(value) {
			out.Envelope, err = h.recordEnvelope(s, key, contentType, orig)
			return out, err
		}
	}
	var meta map[string]string
	if slot.LogEnd >= 0 {
		meta = map[string]string{logEndMeta: strconv.FormatInt(slot.LogEnd, 10)}
	}
	if err := h.storeBody(ctx, key, bytes.NewReader(value), int64(len(value)), contentType, meta, nil); err != nil {
		if e := h.storeError(err); e.status < 500 {
			return StoredBlob{}, &BlobError{Kind: "invalid", Msg: e.message, Err: err}
		}
		return StoredBlob{}, &BlobError{Kind: "storage", Msg: "storing the LFS blob failed", Err: err}
	}
	out.Created = true
	env, err := h.recordEnvelope(s, key, contentType, orig)
	if err != nil {
		h.DeleteBlob(ctx, key, "envelope encoding failed")
		return StoredBlob{}, err
	}
	out.Envelope = env
	return out, nil
}

// storedETag is the plaintext ETag storeBody gives value: its MD5 when
// it is one PUT, else the MD5 of its PartSize parts' MD5s and the count.
func (h *Handler) storedETag(value []byte) string {
	if int64(len(value)) <= h.cfg.PartSize {
		sum := md5.Sum(value)
		return hex.EncodeToString(sum[:])
	}
	var all []byte
	n := 0
	for rest := value; len(rest) > 0; n++ {
		part := rest[:min(int64(len(rest)), h.cfg.PartSize)]
		sum := md5.Sum(part)
		all = append(all, sum[:]...)
		rest = rest[len(part):]
	}
	sum := md5.Sum(all)
	return hex.EncodeToString(sum[:]) + "-" + strconv.Itoa(n)
}

func (h *Handler) recordEnvelope(s *sums, key, contentType string, orig map[string]string) ([]byte, error) {
	env := s.envelope(h, key, contentType)
	if len(orig) > 0 {
		env.OriginalHeaders = orig
	}
	return json.Marshal(env)
}

// DeleteBlob deletes a record blob no envelope will point at (its produce
// was refused, its transaction aborted). A delete that fails leaves an
// orphan, counted and logged, as /lfs/produce's discard does.
func (h *Handler) DeleteBlob(ctx context.Context, key, why string) {
	h.discard(ctx, &request{id: "kafka"}, key, why)
}

// Orphan counts and logs a record blob left without a known envelope
// (its produce's answer never came).
func (h *Handler) Orphan(topic, key, why string) {
	h.orphan(&request{id: "kafka", topic: topic}, key, why, errors.New(why))
}

// Produced counts a record blob a broker accepted.
func (h *Handler) Produced(topic string, size int64, start time.Time) {
	h.succeeded(topic, size, start)
}

// Bucket is the bucket blobs are stored in.
func (h *Handler) Bucket() string { return h.cfg.Bucket }
