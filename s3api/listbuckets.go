package s3api

import (
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/s3seal/s3seal/s3api/s3err"
)

// maxBuckets is S3's largest max-buckets.
const maxBuckets = 10000

// listBuckets answers ListBuckets with S3's parameters: prefix,
// max-buckets (1 to 10000) and continuation-token, over the buckets the
// caller may read, in name order. The continuation token is the last name
// of the page (opaque to clients, as S3's; versitygw's suite expects the
// name). Each bucket is in the store's region. The owner is the caller:
// its access key id as ID and DisplayName.
func (s *Server) listBuckets(req *request) error {
	q := req.r.URL.Query()
	prefix := q.Get("prefix")
	limit := maxBuckets
	if v, ok := q["max-buckets"]; ok {
		n, err := strconv.Atoi(v[0])
		if err != nil || n < 1 || n > maxBuckets {
			return s3err.New("InvalidArgument", "Argument max-buckets must be an integer between 1 and 10000.")
		}
		limit = n
	}
	after := ""
	if v, ok := q["continuation-token"]; ok {
		if v[0] == "" {
			return s3err.New("InvalidArgument", "The continuation token provided is incorrect.")
		}
		after = v[0]
	}
	buckets, err := s.store.Backend().ListBuckets(req.r.Context())
	if err != nil {
		return err
	}
	sort.Slice(buckets, func(i, j int) bool { return buckets[i].Name < buckets[j].Name })
	out := listAllMyBucketsResult{Xmlns: s3ns, Owner: owner{ID: req.auth.AccessKey, DisplayName: req.auth.AccessKey}, Prefix: prefix}
	for _, b := range buckets {
		if !req.cred.canRead(b.Name) || !strings.HasPrefix(b.Name, prefix) || b.Name <= after {
			continue
		}
		if len(out.Buckets) == limit {
			out.ContinuationToken = out.Buckets[limit-1].Name
			break
		}
		out.Buckets = append(out.Buckets, bucketInfo{Name: b.Name, CreationDate: s3Time(b.Created), BucketRegion: s.region()})
	}
	writeXML(req.w, http.StatusOK, out)
	return nil
}
