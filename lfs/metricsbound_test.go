package lfs

import (
	"bytes"
	"fmt"
	"strings"
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

// TestDownloadKeysDoNotGrowMetrics: /lfs/download of keys that do not
// exist must not put the key's second segment into the "topic" label of
// s3seal_lfs_requests_total, or any client (there is no API key by
// default) grows the process's memory without limit, a new series per
// request with a label of up to ~1 MiB: labels come only from validated
// topics.
func TestDownloadKeysDoNotGrowMetrics(t *testing.T) {
	e := newEnv(t)
	h, srv := e.replica(nil)
	const n = 20
	for i := 0; i < n; i++ {
		seg := fmt.Sprintf("%d-%s", i, strings.Repeat("x", 256<<10))
		a := doJSON(t, "POST", srv.URL+"/lfs/download", map[string]any{"bucket": testBucket, "key": "default/" + seg + "/obj", "mode": "stream"})
		if a.status == 200 {
			t.Fatalf("download of a missing key: 200")
		}
	}
	series := 0
	var buf bytes.Buffer
	mfs, _ := h.metrics.Registry().Gather()
	for _, mf := range mfs {
		for _, m := range mf.Metric {
			if mf.GetName() == "s3seal_lfs_requests_total" {
				series++
			}
			for _, l := range m.Label {
				buf.WriteString(l.GetValue())
			}
		}
	}
	t.Logf("%d request series, %d bytes of label values retained", series, buf.Len())
	if series >= n || buf.Len() > 1<<20 {
		t.Fatalf("%d failed downloads of made-up keys left %d series and %d bytes of label values in memory for good",
			n, series, buf.Len())
	}
}
