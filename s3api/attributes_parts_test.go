package s3api

import (
	"reflect"
	"testing"
)

// ObjectParts shows one checksum per part, as S3 does: the object's
// algorithm's when the object has a checksum; else (parts recorded by an
// s3seal from before the default CRC64NVME) the client's alone, without
// s3seal's own CRC64NVME beside it.
func TestObjectPartChecksums(t *testing.T) {
	both := map[string]string{"crc32": "AAAAAA==", "crc64nvme": "BBBBBBBBBBB="}
	for _, tc := range []struct {
		name         string
		object, part map[string]string
		want         map[string]string
	}{
		{"default object", map[string]string{"crc64nvme": "X"}, both, map[string]string{"crc64nvme": "BBBBBBBBBBB="}},
		{"composite object", map[string]string{"crc32": "Y-2"}, both, map[string]string{"crc32": "AAAAAA=="}},
		{"no object checksum, part with two", nil, both, map[string]string{"crc32": "AAAAAA=="}},
		{"no object checksum, old record", nil, map[string]string{"crc32": "AAAAAA=="}, map[string]string{"crc32": "AAAAAA=="}},
		{"no object checksum, part with s3seal's alone", nil, map[string]string{"crc64nvme": "BBBBBBBBBBB="}, map[string]string{"crc64nvme": "BBBBBBBBBBB="}},
		{"no object checksum, part without", nil, nil, nil},
	} {
		if got := objectPartChecksums(tc.object, tc.part); len(got)+len(tc.want) > 0 && !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
