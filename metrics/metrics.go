// Package metrics holds s3seal's Prometheus collectors. Metrics implements
// the Observer interfaces of s3api, sealstore and retry, so those packages
// count without depending on Prometheus; Handler serves the registry in the
// Prometheus text format.
package metrics

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics are the collectors, registered on a registry of their own.
type Metrics struct {
	reg *prometheus.Registry

	requests        *prometheus.CounterVec
	requestTime     *prometheus.HistogramVec
	bytesIn         *prometheus.CounterVec
	bytesOut        *prometheus.CounterVec
	inFlight        prometheus.Gauge
	slotWaits       prometheus.Counter
	integrity       prometheus.Counter
	backendRequests *prometheus.CounterVec
	backendTime     *prometheus.HistogramVec
	retries         *prometheus.CounterVec
	giveUps         *prometheus.CounterVec
	spoolBytes      prometheus.Gauge
	listCache       *prometheus.CounterVec
	copies          *prometheus.CounterVec
	kmsRequests     *prometheus.CounterVec
	kmsTime         *prometheus.HistogramVec
}

// durationBuckets are the upper bounds, in seconds, of the buckets of the
// duration histograms: 1 ms to 5 minutes, from a HEAD answered at once to
// a large part copied slowly.
var durationBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300}

// New returns the collectors, registered with the Go runtime's and the
// process's collectors and s3seal_build_info{version} set to 1.
func New(version string) *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "s3seal_requests_total",
			Help: "S3 requests answered, by operation and HTTP status."}, []string{"operation", "status"}),
		requestTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "s3seal_request_duration_seconds",
			Help:    "Time from an S3 request's arrival to the end of its response, by operation.",
			Buckets: durationBuckets}, []string{"operation"}),
		bytesIn: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "s3seal_request_bytes_total",
			Help: "Bytes of S3 request bodies read, by operation."}, []string{"operation"}),
		bytesOut: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "s3seal_response_bytes_total",
			Help: "Bytes of S3 response bodies written, by operation."}, []string{"operation"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{Name: "s3seal_requests_in_flight",
			Help: "S3 requests holding a slot (--max-requests)."}),
		slotWaits: prometheus.NewCounter(prometheus.CounterOpts{Name: "s3seal_slot_waits_total",
			Help: "S3 requests that found no free slot (overall or of their access key) and waited."}),
		integrity: prometheus.NewCounter(prometheus.CounterOpts{Name: "s3seal_integrity_failures_total",
			Help: "S3 requests refused or cut because stored data failed authentication."}),
		backendRequests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "s3seal_backend_requests_total",
			Help: "Backend calls, each attempt counted, by operation and outcome (ok, not_found, condition_failed, error, canceled, or the cause of a transient failure)."},
			[]string{"operation", "outcome"}),
		backendTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "s3seal_backend_request_duration_seconds",
			Help:    "Time of each backend attempt, until the store's answer (for a GET, its headers), by operation.",
			Buckets: durationBuckets}, []string{"operation"}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "s3seal_backend_retries_total",
			Help: "Backend calls retried after a transient failure, by operation and cause."}, []string{"operation", "cause"}),
		giveUps: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "s3seal_backend_giveups_total",
			Help: "Backend calls given up on a transient failure (attempts spent, or canceled), by operation and cause."},
			[]string{"operation", "cause"}),
		spoolBytes: prometheus.NewGauge(prometheus.GaugeOpts{Name: "s3seal_spool_bytes",
			Help: "Bytes of sealed bodies in spool files."}),
		listCache: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "s3seal_list_cache_lookups_total",
			Help: "Lookups of listing entries in the cache of resolved sizes and ETags, by result (hit, miss)."},
			[]string{"result"}),
		copies: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "s3seal_copies_total",
			Help: "Server-side copies (CopyObject: object, UploadPartCopy: part) by who moved the bytes: the store (copied the ciphertext) or s3seal (read the source and sealed it again)."},
			[]string{"kind", "made_by"}),
		kmsRequests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "s3seal_kms_requests_total",
			Help: "Calls to the KMS or HSM holding master keys, each try counted, by operation (generate, decrypt, rewrap, check) and outcome (ok, unavailable, disabled, not_found, access_denied, invalid_ciphertext, failed)."},
			[]string{"operation", "outcome"}),
		kmsTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "s3seal_kms_request_duration_seconds",
			Help:    "Time of each call to the KMS or HSM, by operation.",
			Buckets: durationBuckets}, []string{"operation"}),
	}
	build := prometheus.NewGauge(prometheus.GaugeOpts{Name: "s3seal_build_info",
		Help: "Always 1; the version label names the running build.", ConstLabels: prometheus.Labels{"version": version}})
	build.Set(1)
	m.reg.MustRegister(m.requests, m.requestTime, m.bytesIn, m.bytesOut, m.inFlight, m.slotWaits, m.integrity,
		m.backendRequests, m.backendTime, m.retries, m.giveUps, m.spoolBytes, m.listCache, m.copies, m.kmsRequests, m.kmsTime, build,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Register adds more collectors (such as the LFS module's) to the registry.
func (m *Metrics) Register(cs ...prometheus.Collector) error {
	for _, c := range cs {
		if err := m.reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}

// Registry is the registry holding every collector.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the registry in the Prometheus exposition format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// Request implements s3api.Observer.
func (m *Metrics) Request(op string, status int, in, out int64, d time.Duration) {
	m.requests.WithLabelValues(op, strconv.Itoa(status)).Inc()
	m.requestTime.WithLabelValues(op).Observe(d.Seconds())
	if in > 0 {
		m.bytesIn.WithLabelValues(op).Add(float64(in))
	}
	if out > 0 {
		m.bytesOut.WithLabelValues(op).Add(float64(out))
	}
}

// InFlight implements s3api.Observer.
func (m *Metrics) InFlight(delta int) { m.inFlight.Add(float64(delta)) }

// SlotWait implements s3api.Observer.
func (m *Metrics) SlotWait() { m.slotWaits.Inc() }

// IntegrityFailure implements s3api.Observer.
func (m *Metrics) IntegrityFailure() { m.integrity.Inc() }

// Attempt implements retry.Observer.
func (m *Metrics) Attempt(op, outcome string, d time.Duration) {
	m.backendRequests.WithLabelValues(op, outcome).Inc()
	m.backendTime.WithLabelValues(op).Observe(d.Seconds())
}

// KMSRequest implements kms.Observer.
func (m *Metrics) KMSRequest(op, outcome string, d time.Duration) {
	m.kmsRequests.WithLabelValues(op, outcome).Inc()
	m.kmsTime.WithLabelValues(op).Observe(d.Seconds())
}

// Retry implements retry.Observer.
func (m *Metrics) Retry(op, cause string) { m.retries.WithLabelValues(op, cause).Inc() }

// GiveUp implements retry.Observer.
func (m *Metrics) GiveUp(op, cause string) { m.giveUps.WithLabelValues(op, cause).Inc() }

// SpoolBytes implements sealstore.Observer.
func (m *Metrics) SpoolBytes(delta int64) { m.spoolBytes.Add(float64(delta)) }

// Copy implements sealstore.Observer.
func (m *Metrics) Copy(part, byStore bool) {
	kind, by := "object", "s3seal"
	if part {
		kind = "part"
	}
	if byStore {
		by = "store"
	}
	m.copies.WithLabelValues(kind, by).Inc()
}

// ListCache implements sealstore.Observer.
func (m *Metrics) ListCache(hit bool) {
	if hit {
		m.listCache.WithLabelValues("hit").Inc()
	} else {
		m.listCache.WithLabelValues("miss").Inc()
	}
}
