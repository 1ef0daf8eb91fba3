package s3api

// Review i10a (fresh-eye attack on the backup-grade features). The tests
// in this file PROVE findings: they FAIL against the current code on
// purpose.

import (
	"fmt"
	"testing"
	"time"
)

// FINDING (expected to FAIL): a POST form with both an "acl" and an
// "x-amz-acl" field (both covered by the policy) is decided by Go map
// order: objectHeader sets both on the one X-Amz-Acl header while ranging
// over a map. For a non-admin credential asking "acl=public-read" with
// "x-amz-acl=private", some uploads are refused (AccessDenied, as the fix
// 31a6b07 intends) and others are stored with the public-read request
// silently dropped. Expected: the same answer every time (refused).
func TestReviewI10aPostAclFieldsNondeterministic(t *testing.T) {
	url, _ := newPostServer(t)
	p := postSigner{ak: postAK, sk: postSK, now: time.Now()}
	b64, sig := p.policy(t, time.Now().Add(time.Hour),
		map[string]string{"bucket": postBucket}, []any{"starts-with", "$key", "up/"},
		[]any{"starts-with", "$acl", ""}, []any{"starts-with", "$x-amz-acl", ""})
	statuses := map[int]int{}
	for i := range 40 {
		fields := append(p.fields(b64, sig), [2]string{"key", fmt.Sprintf("up/acl-%d", i)},
			[2]string{"acl", "public-read"}, [2]string{"x-amz-acl", "private"})
		ct, body := formBody(t, fields, "f.txt", []byte("data"))
		statuses[sendPost(t, url, ct, body).status]++
	}
	if len(statuses) != 1 || statuses[403] != 40 {
		t.Fatalf("EXPECTED every upload asking acl=public-read from a non-admin to be refused (403); got status counts %v "+
			"(204 = stored, the ACL request silently dropped)", statuses)
	}
}
