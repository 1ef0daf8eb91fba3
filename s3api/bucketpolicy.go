package s3api

import (
	s3policy "github.com/s3seal/s3seal/access/policy"
	"github.com/s3seal/s3seal/s3api/s3err"
)

// A bucket policy is judged by s3seal when it is put, as S3 judges it,
// and refused with S3's MalformedPolicy and words (policy.Check, the
// parser evaluation reads it with too: its grammar, the principals, the
// actions and resources it names). Then s3seal keeps it (policydoc.go)
// and evaluates it (package access): the store never sees it.

// maxPolicyBody is S3's limit on a bucket policy: 20 KB. A longer one is
// refused after reading one byte past it, before it is parsed.
const maxPolicyBody = 20 << 10

func malformedPolicy(msg string) *s3err.Error {
	return s3err.New(s3err.MalformedPolicy, msg)
}

// judgePolicy reads a PUT ?policy body once the bucket is known to exist
// (AWS answers NoSuchBucket before it reads the document). A name a
// principal may give besides "*", an account id and an ARN is one of
// s3seal's access keys.
func (s *Server) judgePolicy(req *request, body []byte) (*s3policy.Policy, error) {
	if err := s.store.HeadBucket(req.r.Context(), req.bucket); err != nil {
		return nil, bucketErr(err)
	}
	p, err := s3policy.Check(body, req.bucket, func(name string) bool {
		_, ok := s.cfg.Credentials[name]
		return ok
	})
	if err != nil {
		return nil, malformedPolicy(err.Error())
	}
	return p, nil
}
