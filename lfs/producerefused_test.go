package lfs

import (
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/s3seal/s3seal/lfs/brokers"
)

// A broker that answers the Produce request itself with a refusal that
// means it appended nothing (the topic deleted between Metadata and
// Produce, an ACL on write, a record it will not take): no envelope can
// point at the blob, so the blob is removed and no orphan is left, with
// the status of the same refusal at Metadata time.
func TestProduceRefusalRemovesBlob(t *testing.T) {
	for _, tc := range []struct {
		code   int16
		status int
		api    string
	}{
		{kerr.UnknownTopicOrPartition.Code, 404, "unknown_topic"},
		{kerr.TopicAuthorizationFailed.Code, 403, "topic_not_authorized"},
		{kerr.InvalidTopicException.Code, 400, "invalid_topic"},
		{kerr.MessageTooLarge.Code, 502, "backend_error"},
		{kerr.CorruptMessage.Code, 502, "backend_error"},
		{kerr.InvalidRecord.Code, 502, "backend_error"},
		{kerr.NotEnoughReplicas.Code, 502, "backend_error"},
	} {
		c := autoCluster(t, kfake.SeedTopics(1, "doomed"))
		c.ControlKey(kmsg.Produce.Int16(), func(req kmsg.Request) (kmsg.Response, error, bool) {
			return itProduceError(req, tc.code), nil, true
		})
		d := itDiscovery(t, brokers.Config{Static: c.ListenAddrs()})
		e := newEnv(t)
		h, url := e.itServe(d, nil)
		a := produce(t, url, "doomed", randBytes(2000, 7), nil)
		wantError(t, a, tc.status, tc.api)
		if tc.status != 502 && !strings.Contains(string(a.body), "doomed") {
			t.Fatalf("%s: message does not name the topic: %s", kerr.ErrorForCode(tc.code), a.body)
		}
		e.checkStorage(h, 0)
	}
}
