package kafkaproxy

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the Kafka listener's collectors. Blobs stored, their bytes,
// per-topic counts and orphans are the LFS module's own
// (s3seal_lfs_uploads_total, s3seal_lfs_orphan_objects_total), shared
// with the HTTP API.
type Metrics struct {
	requests     *prometheus.CounterVec
	duration     *prometheus.HistogramVec
	records      *prometheus.CounterVec
	refused      *prometheus.CounterVec
	brokerErrors prometheus.Counter
	abortedBlobs prometheus.Counter
	swept        prometheus.Counter
	connections  prometheus.Gauge
}

func newMetrics() *Metrics {
	return &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "s3seal_lfs_kafka_requests_total",
			Help: "Kafka listener requests by API.",
		}, []string{"api"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "s3seal_lfs_kafka_request_duration_seconds",
			Help:    "Time to answer a Kafka listener request, by API.",
			Buckets: prometheus.ExponentialBuckets(0.001, 4, 10),
		}, []string{"api"}),
		records: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "s3seal_lfs_kafka_blob_records_total",
			Help: "Records whose LFS_BLOB value was stored and replaced by its envelope, by topic (topics beyond the cap as _other).",
		}, []string{"topic"}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "s3seal_lfs_kafka_refused_total",
			Help: "Kafka listener refusals by reason (too_large, busy, unauthenticated, authentication, batch).",
		}, []string{"reason"}),
		brokerErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "s3seal_lfs_kafka_broker_errors_total",
			Help: "Forwarded requests no broker answered.",
		}),
		abortedBlobs: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "s3seal_lfs_kafka_aborted_blobs_total",
			Help: "Blobs deleted because their transaction was aborted.",
		}),
		swept: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "s3seal_lfs_kafka_swept_blobs_total",
			Help: "Blobs the sweep deleted: older than its grace, named by no committed record.",
		}),
		connections: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "s3seal_lfs_kafka_connections",
			Help: "Open client connections to the Kafka listener.",
		}),
	}
}

// Collectors returns every collector.
func (m *Metrics) Collectors() []prometheus.Collector {
	return []prometheus.Collector{m.requests, m.duration, m.records, m.refused, m.brokerErrors, m.abortedBlobs, m.swept, m.connections}
}
