package e2e

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/s3seal/s3seal/backend/embedded"
)

// sharedBackend returns a function that starts s3seal processes sharing
// one backend (moto_server, or an embedded store started in the test
// process) and one master key, as replicas would.
func sharedBackend(t *testing.T, be string) func() *sealProc {
	t.Helper()
	var key string
	start := func(o sealOpts) *sealProc {
		o.Key = key
		p := startS3seal(t, o)
		key = p.Key
		return p
	}
	if be == "moto" {
		m := startMoto(t)
		return func() *sealProc { return start(sealOpts{Backend: m}) }
	}
	emb, err := embedded.Start(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { emb.Close() })
	cfg := emb.Config()
	return func() *sealProc {
		return start(sealOpts{Backend: &motoServer{Endpoint: emb.Endpoint()},
			Args: []string{"--backend-access-key", cfg.AccessKey, "--backend-secret-key", cfg.SecretKey}})
	}
}

// TestMultipartTwoProcesses: one upload served by two s3seal processes on
// one backend: created on A, parts on A and B (part 1 uploaded on A, then
// again with other bytes on B: the last upload wins), completed on B, read
// on A; then an upload whose process stops half-way is finished by a new
// process.
func TestMultipartTwoProcesses(t *testing.T) {
	t.Parallel()
	for _, be := range []string{"embedded", "moto"} {
		t.Run(be, func(t *testing.T) {
			t.Parallel()
			start := sharedBackend(t, be)
			pa, pb := start(), start()
			a, b := sdkFor(t, pa), sdkFor(t, pb)
			mustCreateBucket(t, a, "mpprocs")
			ctx := ctxT(t)

			cr, err := a.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("mpprocs"), Key: aws.String("shared")})
			if err != nil {
				t.Fatal(err)
			}
			id := aws.ToString(cr.UploadId)
			stale := []mpPart{{1, patternBytes(900, 5*mib)}}
			parts := []mpPart{{1, patternBytes(901, 5*mib)}, {2, patternBytes(902, 5*mib+1)}, {3, patternBytes(903, 70000)}}
			mpSendParts(t, a, "mpprocs", "shared", id, stale)
			mpSendParts(t, b, "mpprocs", "shared", id, parts[:1])
			mpSendParts(t, a, "mpprocs", "shared", id, parts[1:2])
			mpSendParts(t, b, "mpprocs", "shared", id, parts[2:])
			etag := mpComplete(t, b, "mpprocs", "shared", id, parts)
			data := joinParts(parts)
			checkObject(t, a, "mpprocs", "shared", data, etag)
			checkObject(t, b, "mpprocs", "shared", data, etag)
			checkRange(t, a, "mpprocs", "shared", data, 5*mib-3, 10*mib+5)

			// A restart half-way: parts through C, C stops, D finishes.
			pc := start()
			c := sdkFor(t, pc)
			cr, err = c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("mpprocs"), Key: aws.String("restarted")})
			if err != nil {
				t.Fatal(err)
			}
			id = aws.ToString(cr.UploadId)
			parts = []mpPart{{1, patternBytes(910, 5*mib)}, {2, patternBytes(911, 5*mib)}, {3, patternBytes(912, 1)}}
			mpSendParts(t, c, "mpprocs", "restarted", id, parts[:2])
			pc.Stop()
			d := sdkFor(t, start())
			etag = mpFinish(t, d, "mpprocs", "restarted", id, parts[2:], parts)
			checkObject(t, d, "mpprocs", "restarted", joinParts(parts), etag)
			checkObject(t, a, "mpprocs", "restarted", joinParts(parts), etag)
		})
	}
}

// TestMultipartRestartDefaultStore: s3seal on its own embedded store
// (no backend configured) stops with an upload in progress; started again
// on the same data directory it takes the remaining parts and completes.
func TestMultipartRestartDefaultStore(t *testing.T) {
	t.Parallel()
	p, c := startWithBucket(t, sealOpts{}, mustCreateBucket, "mprestart")
	cr, err := c.CreateMultipartUpload(ctxT(t), &s3.CreateMultipartUploadInput{Bucket: aws.String("mprestart"), Key: aws.String("obj")})
	if err != nil {
		t.Fatal(err)
	}
	id := aws.ToString(cr.UploadId)
	parts := []mpPart{{1, patternBytes(920, 5*mib)}, {2, patternBytes(921, 5*mib+3)}, {3, patternBytes(922, 65537)}}
	mpSendParts(t, c, "mprestart", "obj", id, parts[:2])
	p.Stop()
	p2 := startS3seal(t, sealOpts{DataDir: p.DataDir})
	c2 := sdkFor(t, p2)
	etag := mpFinish(t, c2, "mprestart", "obj", id, parts[2:], parts)
	checkObject(t, c2, "mprestart", "obj", joinParts(parts), etag)
}
