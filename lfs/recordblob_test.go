package lfs

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/s3seal/s3seal/sealstore"
)

// A record value is stored whole or refused whole, in one PUT (1000 bytes)
// or in parts (6 MiB, past the 5 MiB parts here), from a producer without
// ids (random key; hashed while it is stored) and from an idempotent one
// (key named by its hash; hashed first): a wrong checksum stores nothing,
// the right one stores the value with its SHA-256 in the envelope.
func TestStoreRecordBlobChecksum(t *testing.T) {
	for _, n := range []int{1000, 6 << 20} {
		for _, pid := range []int64{-1, 7} {
			t.Run(fmt.Sprintf("%d bytes, producer id %d", n, pid), func(t *testing.T) {
				e := newEnv(t)
				h, _ := e.replica(nil)
				slot := BlobSlot{Topic: "orders", Partition: 0, ProducerID: pid, Sequence: 3}
				v := randBytes(n, 5)
				_, err := h.StoreRecordBlob(context.Background(), slot, v, []RecordHeader{{Key: BlobHeader, Value: []byte(strings.Repeat("ab", 32))}})
				var be *BlobError
				if !errors.As(err, &be) || be.Kind != "checksum" {
					t.Fatalf("a wrong checksum: %v, want a checksum BlobError", err)
				}
				e.assertEmpty()

				sum := sha256.Sum256(v)
				sb, err := h.StoreRecordBlob(context.Background(), slot, v, []RecordHeader{{Key: BlobHeader, Value: []byte(hex.EncodeToString(sum[:]))}})
				if err != nil {
					t.Fatal(err)
				}
				var env Envelope
				if err := json.Unmarshal(sb.Envelope, &env); err != nil {
					t.Fatal(err)
				}
				if !sb.Created || env.Key != sb.Key || env.Size != int64(n) || env.SHA256 != hex.EncodeToString(sum[:]) {
					t.Fatalf("stored %+v, envelope %+v", sb, env)
				}
				if !bytes.Equal(e.readBlob(sb.Key), v) {
					t.Fatal("the blob does not read back")
				}
				if _, ups := e.objects(); len(ups) != 0 {
					t.Fatalf("multipart uploads left: %v", ups)
				}
			})
		}
	}
}

// A retry of an idempotent producer's record finds its blob and does not
// store it again, in one PUT or in parts; an object of the same size but
// other content at that key (a store that swapped it) is no reason to
// skip: the value is stored again and reads back.
func TestStoreRecordBlobRetryFindsItsBlob(t *testing.T) {
	for _, n := range []int{1000, 6 << 20} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			e := newEnv(t)
			h, _ := e.replica(nil)
			ctx := context.Background()
			slot := BlobSlot{Topic: "orders", ProducerID: 7, Sequence: 3, LogEnd: -1}
			v := randBytes(n, 11)
			first, err := h.StoreRecordBlob(ctx, slot, v, []RecordHeader{{Key: BlobHeader}})
			if err != nil || !first.Created {
				t.Fatalf("%+v %v", first, err)
			}
			again, err := h.StoreRecordBlob(ctx, slot, v, []RecordHeader{{Key: BlobHeader}})
			if err != nil || again.Created || again.Key != first.Key {
				t.Fatalf("a retry: %+v %v, want the first blob found", again, err)
			}
			other := randBytes(n, 12)
			if _, err := e.store().Put(ctx, sealstore.PutInput{Bucket: testBucket, Key: first.Key, Body: bytes.NewReader(other), Size: int64(n)}); err != nil {
				t.Fatal(err)
			}
			swapped, err := h.StoreRecordBlob(ctx, slot, v, []RecordHeader{{Key: BlobHeader}})
			if err != nil || !swapped.Created {
				t.Fatalf("over another object of the same size: %+v %v, want the value stored again", swapped, err)
			}
			if !bytes.Equal(e.readBlob(first.Key), v) {
				t.Fatal("the blob does not read back")
			}
		})
	}
}
