package s3api

import "net/http"

// checkExpectedOwner answers x-amz-expected-bucket-owner and
// x-amz-source-expected-bucket-owner as S3 does, against the owner s3seal
// shows of every bucket: the caller (its access key, as ListBuckets and
// GET ?acl show it). Another value is 403 AccessDenied before anything
// is read or changed; the caller's own key passes. s3seal cannot check
// the store's account ID, which it never shows.
func checkExpectedOwner(h http.Header, caller string) error {
	for _, name := range []string{"X-Amz-Expected-Bucket-Owner", "X-Amz-Source-Expected-Bucket-Owner"} {
		if v, ok := h[name]; ok && (len(v) != 1 || v[0] != caller) {
			return apiErr("AccessDenied", "")
		}
	}
	return nil
}
