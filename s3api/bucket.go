package s3api

import (
	"net"
	"net/http"
	"regexp"
	"strings"

	"github.com/s3seal/s3seal/s3api/s3err"
)

var bucketNameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$`)

// Prefixes and suffixes S3 reserves for its own bucket kinds (access point
// aliases, Object Lambda, Multi-Region Access Points, directory and table
// buckets, the console's examples).
var (
	reservedBucketPrefixes = []string{"xn--", "sthree-", "amzn-s3-demo-"}
	reservedBucketSuffixes = []string{"-s3alias", "--ol-s3", ".mrap", "--x-s3", "--table-s3"}
)

// checkBucketName applies S3's rules for general purpose bucket names, so
// that the answer does not depend on how lax the backend is: 3 to 63
// characters, lower-case letters, digits, dots and hyphens, beginning and
// ending with a letter or digit, no two adjacent dots, not an IPv4
// address, none of the reserved prefixes and suffixes.
func checkBucketName(name string) error {
	bad := !bucketNameRE.MatchString(name) || strings.Contains(name, "..") || net.ParseIP(name) != nil
	for _, p := range reservedBucketPrefixes {
		bad = bad || strings.HasPrefix(name, p)
	}
	for _, sfx := range reservedBucketSuffixes {
		bad = bad || strings.HasSuffix(name, sfx)
	}
	if bad {
		return s3err.New(s3err.InvalidBucketName, "")
	}
	return nil
}

func (s *Server) headBucket(req *request) error {
	if err := s.store.HeadBucket(req.r.Context(), req.bucket); err != nil {
		return bucketErr(err)
	}
	req.w.Header().Set("x-amz-bucket-region", s.region())
	req.w.WriteHeader(http.StatusOK)
	return nil
}

func (s *Server) deleteBucket(req *request) error {
	if err := s.store.DeleteBucket(req.r.Context(), req.bucket); err != nil {
		return bucketErr(err)
	}
	req.w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) getBucketLocation(req *request) error {
	region, err := s.store.BucketRegion(req.r.Context(), req.bucket)
	if err != nil {
		return bucketErr(err)
	}
	if region == "us-east-1" {
		region = ""
	}
	writeXML(req.w, http.StatusOK, locationConstraint{Xmlns: s3ns, Region: region})
	return nil
}

// bucketErr turns a bodiless 404 on a bucket into NoSuchBucket.
func bucketErr(err error) error {
	if toAPIError(err).Code == s3err.NoSuchKey {
		return s3err.New(s3err.NoSuchBucket, "")
	}
	return err
}
