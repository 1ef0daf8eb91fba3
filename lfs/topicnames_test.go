package lfs

import (
	"net/http"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/s3seal/s3seal/lfs/brokers"
)

// Topic names at the edges: 249 characters (Kafka's longest) is produced
// and its envelope's key holds it; 250, unicode, a space, "." and ".."
// are refused before any broker or storage is touched.
func TestTopicNameEdges(t *testing.T) {
	c := autoCluster(t, kfake.AllowAutoTopicCreation())
	d := itDiscovery(t, brokers.Config{Static: c.ListenAddrs()})
	e := newEnv(t)
	h, url := e.itServe(d, nil)
	long := strings.Repeat("t", 249)
	a := produce(t, url, long, randBytes(500, 12), nil)
	if a.status != 200 {
		t.Fatalf("249-character topic: %d %s", a.status, a.body)
	}
	env := envelopeOf(t, a)
	if !strings.Contains(env.Key, "/"+long+"/lfs/") {
		t.Fatalf("key %s does not hold the topic", env.Key)
	}
	for _, bad := range []string{strings.Repeat("t", 250), "tōpic", "a b", ".", "..", "a/b", "a\tb"} {
		req, _ := http.NewRequest("POST", url+"/lfs/produce", strings.NewReader("x"))
		req.Header["X-Kafka-Topic"] = []string{bad}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 400 {
			t.Errorf("topic %q: %d, want 400", bad, resp.StatusCode)
		}
	}
	e.checkStorage(h, 0, env.Key)
}
