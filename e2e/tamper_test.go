package e2e

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// tamperPlainSize gives four segments, the last one partial.
const tamperPlainSize = 3*segPlain + 500

// putRaw overwrites a backend object with data and exactly meta.
func putRaw(t *testing.T, b *s3.Client, bucket, key string, data []byte, meta map[string]string) {
	t.Helper()
	_, err := b.PutObject(ctxT(t), &s3.PutObjectInput{
		Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader(data), Metadata: meta,
	})
	if err != nil {
		t.Fatalf("backend PUT %s/%s: %v", bucket, key, err)
	}
}

// readOutcome GETs through s3seal and describes what the client got.
type readOutcome struct {
	err     error // request error (error status)
	readErr error // error while reading the body
	body    []byte
	length  int64 // Content-Length announced
}

func getOutcome(t *testing.T, c *s3.Client, bucket, key, rng string) readOutcome {
	t.Helper()
	in := &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)}
	if rng != "" {
		in.Range = aws.String(rng)
	}
	out, err := c.GetObject(ctxT(t), in)
	if err != nil {
		return readOutcome{err: err}
	}
	defer out.Body.Close()
	body, rerr := io.ReadAll(out.Body)
	return readOutcome{readErr: rerr, body: body, length: aws.ToInt64(out.ContentLength)}
}

// wantDetected fails unless the read visibly failed: an error status, a
// body read error, or a body shorter than announced/expected. A complete
// body is a failure whatever its bytes (and worse if they are altered).
func wantDetected(t *testing.T, what string, o readOutcome, fullLen int, original []byte) {
	t.Helper()
	switch {
	case o.err != nil:
		t.Logf("%s: detected with %v", what, o.err)
	case o.readErr != nil:
		t.Logf("%s: detected while streaming after %d bytes: %v", what, len(o.body), o.readErr)
	case len(o.body) < fullLen:
		t.Logf("%s: detected (short body %d of %d)", what, len(o.body), fullLen)
	case bytes.Equal(o.body, original):
		t.Errorf("%s: tampering NOT detected: complete 200 body (identical to the original)", what)
	default:
		t.Errorf("%s: tampering NOT detected: complete 200 body with ALTERED bytes", what)
	}
	if o.err == nil && o.readErr == nil && int64(len(o.body)) > o.length && o.length > 0 {
		t.Errorf("%s: body longer than Content-Length", what)
	}
}

func TestTamperDetected(t *testing.T) {
	t.Parallel()
	m := startMoto(t)
	p := startS3seal(t, sealOpts{Backend: m})
	c, b := sdkFor(t, p), motoClient(t, m)
	mustCreateBucket(t, c, "tamper")

	type tamperCase struct {
		name string
		// alter gets the victim's and another object's stored bytes and
		// metadata and returns what to store under the victim's key.
		alter func(data []byte, meta map[string]string, otherData []byte, otherMeta map[string]string) ([]byte, map[string]string)
	}
	flip := func(off int) func([]byte, map[string]string, []byte, map[string]string) ([]byte, map[string]string) {
		return func(d []byte, m map[string]string, _ []byte, _ map[string]string) ([]byte, map[string]string) {
			d[off] ^= 0x01
			return d, m
		}
	}
	cases := []tamperCase{
		{"flip nonce byte of segment 1", flip(segCipher + 3)},
		{"flip ciphertext byte of segment 1", flip(segCipher + 12 + 1000)},
		{"flip tag byte of last segment", flip(cipherSize(tamperPlainSize) - 1)},
		{"swap segments 0 and 1", func(d []byte, m map[string]string, _ []byte, _ map[string]string) ([]byte, map[string]string) {
			s0 := bytes.Clone(d[:segCipher])
			copy(d[:segCipher], d[segCipher:2*segCipher])
			copy(d[segCipher:2*segCipher], s0)
			return d, m
		}},
		{"truncate last segment", func(d []byte, m map[string]string, _ []byte, _ map[string]string) ([]byte, map[string]string) {
			return d[:3*segCipher], m
		}},
		{"truncate last segment, size metadata adjusted", func(d []byte, m map[string]string, _ []byte, _ map[string]string) ([]byte, map[string]string) {
			m["s3seal-size"] = strconv.Itoa(3 * segPlain)
			return d[:3*segCipher], m
		}},
		{"append a copy of segment 0", func(d []byte, m map[string]string, _ []byte, _ map[string]string) ([]byte, map[string]string) {
			return append(d, d[:segCipher]...), m
		}},
		{"size metadata changed", func(d []byte, m map[string]string, _ []byte, _ map[string]string) ([]byte, map[string]string) {
			m["s3seal-size"] = strconv.Itoa(tamperPlainSize - 1)
			return d, m
		}},
		{"oid metadata changed", func(d []byte, m map[string]string, _ []byte, _ map[string]string) ([]byte, map[string]string) {
			m["s3seal-oid"] = "AAAAAAAAAAAAAAAAAAAAAA"
			return d, m
		}},
		{"bytes with another object's metadata", func(d []byte, _ map[string]string, _ []byte, om map[string]string) ([]byte, map[string]string) {
			return d, om
		}},
		{"segment 1 from another object", func(d []byte, m map[string]string, od []byte, _ map[string]string) ([]byte, map[string]string) {
			copy(d[segCipher:2*segCipher], od[segCipher:2*segCipher])
			return d, m
		}},
		{"wrapped DEK from another object", func(d []byte, m map[string]string, _ []byte, om map[string]string) ([]byte, map[string]string) {
			m["s3seal-dek"] = om["s3seal-dek"]
			return d, m
		}},
	}

	// Cases whose metadata claims what it was not sealed with: a listing
	// must mark them unverified.
	metaForged := map[string]bool{
		"truncate last segment, size metadata adjusted": true,
		"size metadata changed":                         true,
		"md5 metadata changed":                          true,
		"wrapped DEK from another object":               true,
	}
	var checks []listCheck
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			victim, other := fmt.Sprintf("v%d", i), fmt.Sprintf("o%d", i)
			plain := patternBytes(uint64(1000+i), tamperPlainSize)
			otherPlain := patternBytes(uint64(2000+i), tamperPlainSize)
			putObj(t, c, "tamper", victim, plain)
			putObj(t, c, "tamper", other, otherPlain)
			data, meta, _ := rawObject(t, b, "tamper", victim)
			odata, ometa, _ := rawObject(t, b, "tamper", other)
			if len(data) != cipherSize(tamperPlainSize) {
				t.Fatalf("stored size %d, want %d", len(data), cipherSize(tamperPlainSize))
			}
			newData, newMeta := tc.alter(bytes.Clone(data), maps.Clone(meta), odata, ometa)
			putRaw(t, b, "tamper", victim, newData, newMeta)

			wantDetected(t, "GET", getOutcome(t, c, "tamper", victim, ""), tamperPlainSize, plain)
			// A range that covers segment 1 and the end must fail too.
			wantDetected(t, "GET range", getOutcome(t, c, "tamper", victim, fmt.Sprintf("bytes=%d-", segPlain+10)),
				tamperPlainSize-segPlain-10, plain[segPlain+10:])

			// The listing shows only authenticated values (here possibly
			// cached from the PUT), or the backend's marked unverified.
			_, _, raw := rawObject(t, b, "tamper", victim)
			lc := listCheck{victim: victim, name: tc.name, size: int64(len(newData)), backendETag: unquote(raw.ETag),
				authentic: []string{md5Hex(plain), md5Hex(otherPlain)}}
			lc.check(t, listedEntry(t, c, "tamper", victim), false)
			checks = append(checks, lc)

			// The untouched object still reads back.
			if got := getObj(t, c, "tamper", other); !bytes.Equal(got, otherPlain) {
				t.Errorf("untouched object %s no longer reads back", other)
			}
		})
	}

	// A fresh s3seal over the same store (nothing cached) must list every
	// object whose metadata claims what it was not sealed with as
	// unverified, with the backend's size.
	p.Stop()
	p2 := startS3seal(t, sealOpts{Backend: m, Key: p.Key})
	c2 := sdkFor(t, p2)
	for _, lc := range checks {
		lc.check(t, listedEntry(t, c2, "tamper", lc.victim), metaForged[lc.name])
	}
}

// listCheck is what a listing may show for a tampered object.
type listCheck struct {
	victim, name string
	size         int64    // backend size
	backendETag  string   // backend ETag
	authentic    []string // plaintext ETags it could authentically have
}

// check fails unless e shows the backend's size and a marked ETag, or
// (unless mustMark) an authentic plaintext size and ETag.
func (lc listCheck) check(t *testing.T, e types.Object, mustMark bool) {
	t.Helper()
	etag, size := unquote(e.ETag), aws.ToInt64(e.Size)
	if etag == "s3seal-unverified-"+lc.backendETag && size == lc.size {
		return
	}
	if !mustMark && size == tamperPlainSize && slices.Contains(lc.authentic, etag) {
		return
	}
	t.Errorf("%s (%s): listed as %d %s", lc.victim, lc.name, size, etag)
}
