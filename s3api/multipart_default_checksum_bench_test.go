package s3api

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"testing"

	"github.com/s3seal/s3seal/checksum"
	"github.com/s3seal/s3seal/sealstore"
)

// BenchmarkPartChecksums times what a part of an upload created without
// an algorithm costs when the client sends a checksum: "client" hashes
// the client's algorithm only (s3seal before parts kept CRC64NVME beside
// it), "client+crc64nvme" both (now). "hash" is the hashing alone,
// "uploadpart" the whole sealed UploadPart on the embedded store, side by
// side in one run so that the ratio, not the absolute number, is read.
func BenchmarkPartChecksums(b *testing.B) {
	const n = 16 << 20
	data := make([]byte, n)
	rand.NewChaCha8([32]byte{1}).Read(data)
	for _, kind := range []string{"hash", "uploadpart"} {
		for _, alg := range []checksum.Algorithm{checksum.CRC32, checksum.SHA256} {
			h := http.Header{}
			h.Set(alg.HeaderName(), sumOf(alg, data))
			for _, mode := range []string{"client", "client+crc64nvme"} {
				b.Run(fmt.Sprintf("%s/%s/%s", kind, alg, mode), func(b *testing.B) {
					var st *sealstore.Store
					var id string
					if kind == "uploadpart" {
						st, id = benchUpload(b)
					}
					b.SetBytes(n)
					for b.Loop() {
						c, err := newBodyChecks(h)
						if err != nil {
							b.Fatal(err)
						}
						if mode != "client" {
							c.keepDefault()
						}
						if kind == "hash" {
							_, _ = c.observer().Write(data)
							_, err = c.finalize(nil)()
						} else {
							_, err = st.UploadPart(context.Background(), sealstore.UploadPartInput{Bucket: "bkt", Key: "k", UploadID: id,
								PartNumber: 1, Body: bytes.NewReader(data), Size: n, Observe: c.observer(), Finalize: c.finalize(nil)})
						}
						if err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}

// benchUpload starts an upload without an algorithm on a fresh embedded
// store.
func benchUpload(b *testing.B) (*sealstore.Store, string) {
	be := embeddedStore(b)
	st, err := sealstore.New(sealstore.Direct(be), testKeyring(), sealstore.Options{SpoolDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if err := be.CreateBucket(ctx, "bkt"); err != nil {
		b.Fatal(err)
	}
	id, err := st.CreateMultipart(ctx, sealstore.CreateMultipartInput{Bucket: "bkt", Key: "k"})
	if err != nil {
		b.Fatal(err)
	}
	return st, id
}
