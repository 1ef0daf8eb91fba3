package lfs

import (
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/s3seal/s3seal/lfs/brokers"
)

// A broker refusal answered 502 names the Kafka error for the client, not
// the broker's address inside the cluster (which stays in the log).
func TestBrokerRefusalBodyNamesNoBroker(t *testing.T) {
	c := autoCluster(t, kfake.SeedTopics(1, "big"))
	c.ControlKey(kmsg.Produce.Int16(), func(req kmsg.Request) (kmsg.Response, error, bool) {
		return itProduceError(req, kerr.MessageTooLarge.Code), nil, true
	})
	d := itDiscovery(t, brokers.Config{Static: c.ListenAddrs()})
	e := newEnv(t)
	_, url := e.itServe(d, nil)
	a := produce(t, url, "big", randBytes(500, 13), nil)
	wantError(t, a, 502, "backend_error")
	body := string(a.body)
	if !strings.Contains(body, "MESSAGE_TOO_LARGE") {
		t.Fatalf("body does not name the Kafka error: %s", body)
	}
	if strings.Contains(body, c.ListenAddrs()[0]) || strings.Contains(body, "127.0.0.1") {
		t.Fatalf("body names the broker: %s", body)
	}
}
