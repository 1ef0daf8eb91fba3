package lfs

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the module's Prometheus collectors, on a registry of their
// own that the /metrics endpoint can gather from (Registry) or that can be
// registered elsewhere (Collectors).
type Metrics struct {
	reg            *prometheus.Registry
	requests       *prometheus.CounterVec
	uploads        *prometheus.CounterVec
	uploadBytes    prometheus.Counter
	uploadDuration prometheus.Histogram
	storageErrors  prometheus.Counter
	orphans        prometheus.Counter

	// topics holds the topics a broker accepted a record for: only those
	// name a series of their own (topicLabel), so that topic names a
	// client invents, whose requests fail, cannot grow the series without
	// bound. At most maxTopicLabels of them; later ones count as
	// otherTopics too.
	mu     sync.Mutex
	topics map[string]bool
}

// otherTopics is the topic label of requests for a topic no broker has
// accepted a record for (yet), and of requests without a topic.
const otherTopics = "_other"

// maxTopicLabels bounds the topics with a series of their own.
const maxTopicLabels = 1000

func newMetrics() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "s3seal_lfs_requests_total",
			Help: "LFS API requests by topic, status (ok, error) and type.",
		}, []string{"topic", "status", "type"}),
		uploads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "s3seal_lfs_uploads_total",
			Help: "Blobs stored and produced, by topic.",
		}, []string{"topic"}),
		uploadBytes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "s3seal_lfs_upload_bytes_total",
			Help: "Plaintext bytes of the blobs stored and produced.",
		}),
		uploadDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "s3seal_lfs_upload_duration_seconds",
			Help:    "Time from request to produced envelope.",
			Buckets: prometheus.ExponentialBuckets(0.01, 4, 10),
		}),
		storageErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "s3seal_lfs_storage_errors_total",
			Help: "Failed storage operations (store, read, delete, abort).",
		}),
		orphans: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "s3seal_lfs_orphan_objects_total",
			Help: "Blobs left in storage without a known envelope: produce failed after sending, or delete failed.",
		}),
	}
	m.topics = map[string]bool{}
	m.reg.MustRegister(m.Collectors()...)
	return m
}

// accepted records that a broker accepted a record for topic.
func (m *Metrics) accepted(topic string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.topics) < maxTopicLabels {
		m.topics[topic] = true
	}
}

// topicLabel is the label requests for topic are counted under: the topic
// once a broker has accepted a record for it, else otherTopics.
func (m *Metrics) topicLabel(topic string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.topics[topic] {
		return topic
	}
	return otherTopics
}

// Registry is a registry holding the collectors.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Collectors returns every collector.
func (m *Metrics) Collectors() []prometheus.Collector {
	return []prometheus.Collector{m.requests, m.uploads, m.uploadBytes, m.uploadDuration, m.storageErrors, m.orphans}
}

// TopicLabel is the label a topic is counted under (the topic once a
// broker accepted a record for it, within the cap; else "_other").
func (m *Metrics) TopicLabel(topic string) string { return m.topicLabel(topic) }
