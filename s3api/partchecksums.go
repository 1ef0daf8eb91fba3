package s3api

import (
	"net/http"

	"github.com/s3seal/s3seal/checksum"
	"github.com/s3seal/s3seal/sealstore"
)

// setRangeChecksumHeaders reports checksums on a 206 answer of n bytes to
// a GET or HEAD with x-amz-checksum-mode ENABLED, as S3 does: a part
// (?partNumber=) of a multipart object whose checksum is COMPOSITE gets
// that part's checksum of the object's algorithm (as GetObjectAttributes'
// ObjectParts shows it) and type COMPOSITE; a range or part that is the
// whole object gets the object's checksums; any other range or part (a
// part of a FULL_OBJECT upload of several parts included) gets none, as
// its bytes have no checksum of their own that S3 kept.
func setRangeChecksumHeaders(h http.Header, info sealstore.ObjectInfo, rng *sealstore.Range, n int64) {
	if rng != nil && rng.Part > 0 && info.PartsCount > 0 && checksumType(info.Checksums) == checksum.Composite {
		cs := objectPartChecksums(info.Checksums, info.PartChecksums)
		for alg, v := range cs {
			if a, ok := checksum.ParseAlgorithm(alg); ok {
				h.Set(a.HeaderName(), v)
			}
		}
		if len(cs) > 0 {
			h.Set("X-Amz-Checksum-Type", checksum.Composite)
		}
		return
	}
	if n == info.Size {
		setChecksumHeaders(h, info)
	}
}
