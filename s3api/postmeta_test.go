package s3api

import (
	"context"
	"maps"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// TestPostMetaReadsBack: a browser form can name metadata that no header
// carries: a field name that is no HTTP token (x-amz-meta-ä,
// x-amz-meta-a b) or a value with a line break. Each is either refused
// (400, nothing stored) or read back exactly by HEAD; none is taken and
// then silently lost (net/http drops a header name it cannot send and
// turns line breaks into spaces) or made unreadable (a NUL in a value
// breaks every client's HEAD and GET).
func TestPostMetaReadsBack(t *testing.T) {
	url, c := newPostServer(t)
	p := postSigner{ak: postAK, sk: postSK, now: time.Now()}
	for i, meta := range []map[string]string{{"ä": "umlaut"}, {"a b": "space"}, {"crlf": "a\r\nX-Injected: 1"}, {"nul": "a\x00b"}} {
		key := "k" + string(rune('0'+i))
		conds := []any{map[string]string{"bucket": postBucket}, []any{"eq", "$key", key}}
		fields := [][2]string{{"key", key}}
		for k, v := range meta {
			conds = append(conds, []any{"starts-with", "$x-amz-meta-" + k, ""})
			fields = append(fields, [2]string{"x-amz-meta-" + k, v})
		}
		b64, sig := p.policy(t, time.Now().Add(time.Hour), conds...)
		ct, body := formBody(t, append(p.fields(b64, sig), fields...), "", []byte("bar"))
		res := sendPost(t, url, ct, body)
		if res.status == http.StatusBadRequest {
			assertNotStored(t, c, key)
			continue
		}
		if res.status != http.StatusNoContent {
			t.Fatalf("%v: POST answered %d %s", meta, res.status, res.body)
		}
		out, err := c.HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: aws.String(postBucket), Key: aws.String(key)})
		if err != nil {
			t.Errorf("POST took metadata %q; HEAD fails: %v", meta, err)
			continue
		}
		if !maps.Equal(out.Metadata, meta) {
			t.Errorf("POST took metadata %q; HEAD gives %q", meta, out.Metadata)
		}
	}
}
