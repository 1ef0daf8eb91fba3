package s3api

import (
	"net/http"

	"github.com/s3seal/s3seal/s3api/checksum"
	"github.com/s3seal/s3seal/sealstore"
)

// setPartChecksumHeaders reports, on a GET or HEAD by partNumber with
// x-amz-checksum-mode ENABLED, the selected part's kept checksums of the
// object's algorithm (as GetObjectAttributes' ObjectParts shows them) and
// the object's x-amz-checksum-type: S3 answers a part read with the
// part's checksum, not the object's.
func setPartChecksumHeaders(h http.Header, info sealstore.ObjectInfo) {
	cs := objectPartChecksums(info.Checksums, info.PartChecksums)
	for alg, v := range cs {
		if a, ok := checksum.ParseAlgorithm(alg); ok {
			h.Set(a.HeaderName(), v)
		}
	}
	if len(cs) > 0 {
		h.Set("X-Amz-Checksum-Type", checksumType(info.Checksums))
	}
}
