package s3api

import (
	"strconv"
	"strings"

	"github.com/s3seal/s3seal/s3api/checksum"
)

// countArg parses a listing's count or marker argument (max-parts,
// max-uploads, part-number-marker), in words AWS uses: a value that is no
// 32-bit integer "Provided V not an integer or within integer range", a
// negative one "Argument V must be an integer between 0 and 2147483647".
// An absent argument is def.
func countArg(v string, def int) (int, error) {
	if v == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil {
		return 0, apiErr("InvalidArgument", "Provided "+v+" not an integer or within integer range")
	}
	if n < 0 {
		return 0, apiErr("InvalidArgument", "Argument "+v+" must be an integer between 0 and 2147483647")
	}
	return int(n), nil
}

// uploadChecksumType reads CreateMultipartUpload's x-amz-checksum-type in
// any case: COMPOSITE, FULL_OBJECT or absent ("").
func uploadChecksumType(v string) (string, error) {
	switch t := strings.ToUpper(strings.TrimSpace(v)); t {
	case "", checksum.Composite, checksum.FullObject:
		return t, nil
	}
	return "", apiErr("InvalidRequest", "Value for x-amz-checksum-type header is invalid.")
}
