// Package metrics defines Tablo's Prometheus metrics on a registry the caller owns (no
// global registry). Every storage service (table, queue, blob) registers its requests under
// the same metric names with its own "service" label, through Metrics.Service.
//
// The request path costs a few atomic adds: each service resolves the metric children of an
// operation and status class once, on their first request (so only series that occur are
// exported), and recording a request then looks nothing up.
package metrics

import (
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics holds the request metrics shared by every service.
type Metrics struct {
	reg      prometheus.Registerer
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	bytesIn  *prometheus.CounterVec
	bytesOut *prometheus.CounterVec
}

// New registers the request metrics on reg.
func New(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		reg: reg,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tablo_requests_total",
			Help: "Requests answered, by service, operation and status class (2xx, 3xx, 4xx, 5xx).",
		}, []string{"service", "operation", "status_class"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "tablo_request_duration_seconds",
			Help: "Time from reading a request to handing its reply to the connection, by service, operation and status class.",
			// 100 µs to ~6.5 s: point operations take well under a millisecond, a query page
			// at most 5 s.
			Buckets: prometheus.ExponentialBuckets(0.0001, 4, 9),
		}, []string{"service", "operation", "status_class"}),
		bytesIn: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tablo_request_body_bytes_total",
			Help: "Request body bytes received, by service.",
		}, []string{"service"}),
		bytesOut: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tablo_response_body_bytes_total",
			Help: "Response body bytes sent, by service.",
		}, []string{"service"}),
	}
	reg.MustRegister(m.requests, m.duration, m.bytesIn, m.bytesOut)
	return m
}

// statusClasses are the status_class label values; index status/100 (1-5).
var statusClasses = [...]string{"", "1xx", "2xx", "3xx", "4xx", "5xx"}

// Service is one service's request recorder.
type Service struct {
	m        *Metrics
	service  string
	opNames  []string
	children [][len(statusClasses)]atomic.Pointer[child]
	in, out  prometheus.Counter
}

type child struct {
	count prometheus.Counter
	dur   prometheus.Observer
}

// Service returns the recorder of service (e.g. "table"), whose operations are numbered by
// their index in operations. Index 0 should name requests refused before an operation was
// known (e.g. "unknown").
func (m *Metrics) Service(service string, operations []string) *Service {
	return &Service{
		m: m, service: service, opNames: operations,
		children: make([][len(statusClasses)]atomic.Pointer[child], len(operations)),
		in:       m.bytesIn.WithLabelValues(service),
		out:      m.bytesOut.WithLabelValues(service),
	}
}

// Observe records one request: its operation index, status, duration and body sizes.
func (s *Service) Observe(op int, status int, d time.Duration, in, out int) {
	if s == nil {
		return
	}
	if op < 0 || op >= len(s.children) {
		op = 0
	}
	c := status / 100
	if c < 1 || c >= len(statusClasses) {
		c = 5
	}
	ch := s.children[op][c].Load()
	if ch == nil {
		// First request of this operation and class: resolve its series (a racing
		// resolution gets the same children from the vectors).
		l := prometheus.Labels{"service": s.service, "operation": s.opNames[op], "status_class": statusClasses[c]}
		ch = &child{count: s.m.requests.With(l), dur: s.m.duration.With(l)}
		s.children[op][c].Store(ch)
	}
	ch.count.Inc()
	ch.dur.Observe(d.Seconds())
	if in > 0 {
		s.in.Add(float64(in))
	}
	if out > 0 {
		s.out.Add(float64(out))
	}
}

// Connections registers a gauge of service's open client connections, read from open at
// each scrape.
func (m *Metrics) Connections(service string, open func() int) {
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name:        "tablo_open_connections",
		Help:        "Client connections open, by service.",
		ConstLabels: prometheus.Labels{"service": service},
	}, func() float64 { return float64(open()) }))
}
