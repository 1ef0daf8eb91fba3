package lfs

import (
	"fmt"
	"testing"
)

// A broker that creates every topic it is asked for (auto-create) accepts
// records for topics a client invents: past maxTopicLabels accepted
// topics, neither the request series nor the upload series grow.
func TestSeriesBoundedWithAutoCreatedTopics(t *testing.T) {
	e := newEnv(t)
	h, srv := e.replica(nil)
	for i := range maxTopicLabels + 20 {
		if a := produce(t, srv.URL, fmt.Sprintf("invented-%d", i), []byte("x"), nil); a.status != 200 {
			t.Fatalf("produce %d: %d %s", i, a.status, a.body)
		}
	}
	mfs, err := h.metrics.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if n := len(mf.Metric); n > maxTopicLabels+1 {
			t.Errorf("%s has %d series after %d invented topics, want at most %d", mf.GetName(), n, maxTopicLabels+20, maxTopicLabels+1)
		}
	}
}
