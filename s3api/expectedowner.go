package s3api

import "net/http"

// checkExpectedOwner answers x-amz-expected-bucket-owner and a copy's
// x-amz-source-expected-bucket-owner. s3seal has no bucket owners (see
// docs/DESIGN.md): the owner a client is shown of any bucket it may reach
// is itself, its access key id, as ListBuckets reports. So the header
// naming that id passes, any other value is AccessDenied, as S3 answers a
// bucket another account owns. The headers are removed once checked: no
// handler acts on them and the backend's account is not the client's.
func checkExpectedOwner(r *http.Request, accessKey string) error {
	for _, name := range []string{"X-Amz-Expected-Bucket-Owner", "X-Amz-Source-Expected-Bucket-Owner"} {
		vs, ok := r.Header[name]
		if !ok {
			continue
		}
		for _, v := range vs {
			if v != accessKey || accessKey == "" {
				return refusedBy(name + " names another owner than the access key")
			}
		}
		r.Header.Del(name)
	}
	return nil
}
