package lfs

import (
	"fmt"
	"testing"
)

// requestSeries lists the topic label of every s3seal_lfs_requests_total
// series.
func requestSeries(t *testing.T, h *Handler) map[string]bool {
	t.Helper()
	mfs, err := h.metrics.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	topics := map[string]bool{}
	for _, mf := range mfs {
		if mf.GetName() != "s3seal_lfs_requests_total" {
			continue
		}
		for _, m := range mf.Metric {
			for _, l := range m.Label {
				if l.GetName() == "topic" {
					topics[l.GetValue()] = true
				}
			}
		}
	}
	return topics
}

// Topic names a client invents cannot grow the series: a request for a
// topic no broker has accepted a record for counts under one fixed label;
// once a broker accepted one, the topic has series of its own, for its
// failures too.
func TestRequestSeriesOnlyForAcceptedTopics(t *testing.T) {
	e := newEnv(t)
	h, srv := e.replica(nil)
	for i := range 200 {
		a := produce(t, srv.URL, fmt.Sprintf("invented-%d", i), randBytes(100, uint64(i)), map[string]string{"X-Kafka-Partition": "x"})
		if a.status != 400 {
			t.Fatalf("produce with a bad partition: %d", a.status)
		}
	}
	if got := requestSeries(t, h); len(got) != 1 || !got[otherTopics] {
		t.Fatalf("200 failed produces to invented topics left the topic labels %v, want only %q", got, otherTopics)
	}
	if a := produce(t, srv.URL, "orders", randBytes(1000, 9), nil); a.status != 200 {
		t.Fatalf("produce to orders: %d %s", a.status, a.body)
	}
	produce(t, srv.URL, "orders", randBytes(100, 10), map[string]string{"X-Kafka-Partition": "x"})
	if got := requestSeries(t, h); len(got) != 2 || !got["orders"] || !got[otherTopics] {
		t.Fatalf("after a record accepted for orders: topic labels %v, want orders and %q", got, otherTopics)
	}
}
