package kafkaproxy

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

func randBytes(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, seed))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// A kgo producer through the proxy, each codec, idempotent: marked
// records reach the broker as envelopes whose blobs read back byte for
// byte and are sealed in the store; unmarked records pass unchanged.
func TestProduceStoresMarkedRecordsSealed(t *testing.T) {
	for _, codec := range []kgo.CompressionCodec{kgo.NoCompression(), kgo.GzipCompression(), kgo.SnappyCompression(), kgo.Lz4Compression(), kgo.ZstdCompression()} {
		t.Run(codecLabel(codec), func(t *testing.T) {
			h := newHarness(t, 3, nil)
			cl := h.client(kgo.ProducerBatchCompression(codec), kgo.DefaultProduceTopic("blobs"))
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			var sent [][]byte
			for i := range 6 {
				v := randBytes(100_000+i, uint64(i))
				sent = append(sent, v)
				sum := sha256.Sum256(v)
				rec := &kgo.Record{Key: []byte(fmt.Sprint(i)), Value: v, Headers: []kgo.RecordHeader{
					{Key: "LFS_BLOB", Value: []byte(hex.EncodeToString(sum[:]))},
					{Key: "content-type", Value: []byte("application/x-test")},
					{Key: "app", Value: []byte("kept")},
				}}
				if err := cl.ProduceSync(ctx, rec).FirstErr(); err != nil {
					t.Fatalf("produce %d: %v", i, err)
				}
			}
			if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("plain record")}).FirstErr(); err != nil {
				t.Fatal(err)
			}
			recs := h.consume("blobs", 7)
			plain := 0
			for _, r := range recs {
				if string(r.Value) == "plain record" {
					plain++
					continue
				}
				env := h.envelope(r)
				var i int
				fmt.Sscan(string(r.Key), &i)
				if got := h.readBlob(env.Key); !bytes.Equal(got, sent[i]) {
					t.Fatalf("blob %d does not read back", i)
				}
				if raw := h.rawObject(env.Key); bytes.Contains(raw, sent[i][:64]) {
					t.Fatalf("the store holds blob %d's plaintext", i)
				}
				for _, hd := range r.Headers {
					if hd.Key == "LFS_BLOB" {
						t.Fatal("LFS_BLOB header left on the record")
					}
				}
				if env.ContentType != "application/x-test" || env.Size != int64(len(sent[i])) {
					t.Fatalf("envelope %+v", env)
				}
			}
			if plain != 1 {
				t.Fatalf("%d plain records", plain)
			}
			if n := len(h.blobKeys()); n != 6 {
				t.Fatalf("%d blobs in the store, want 6", n)
			}
		})
	}
}

func codecLabel(c kgo.CompressionCodec) string {
	for _, n := range []struct {
		c    kgo.CompressionCodec
		name string
	}{{kgo.GzipCompression(), "gzip"}, {kgo.SnappyCompression(), "snappy"}, {kgo.Lz4Compression(), "lz4"}, {kgo.ZstdCompression(), "zstd"}} {
		if n.c == c {
			return n.name
		}
	}
	return "none"
}
