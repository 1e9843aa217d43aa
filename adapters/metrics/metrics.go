// Package metrics exposes corridor's Prometheus metrics: one registry per
// process (no global state), the HTTP and idempotency observer the API
// adapter calls, the ledger writer's batch observer, a Redis hook, and
// collectors read at scrape time (job backlog, database pool, Go runtime
// and process).
package metrics

import (
	"context"
	"database/sql"
	"errors"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	goredis "github.com/redis/go-redis/v9"

	"github.com/corridorpay/corridor/ports"
)

// Metrics is the process's registry and the instruments it holds.
type Metrics struct {
	reg          *prometheus.Registry
	requests     *prometheus.CounterVec
	duration     *prometheus.HistogramVec
	idempotency  *prometheus.CounterVec
	ledgerBatch  prometheus.Histogram
	ledgerCommit prometheus.Histogram
	redisErrors  *prometheus.CounterVec
}

// New registers corridor's instruments and the Go and process collectors
// in a fresh registry.
func New() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "corridor_http_requests_total",
			Help: "HTTP requests answered, by operation (method and route pattern) and status code.",
		}, []string{"operation", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "corridor_http_request_duration_seconds",
			Help:    "Time to answer an HTTP request, by operation and status code.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"operation", "status"}),
		idempotency: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "corridor_idempotency_keys_total",
			Help: "Idempotency-Key outcomes other than a first run: replayed (the stored response), in_use (409), reused (422).",
		}, []string{"outcome"}),
		ledgerBatch: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "corridor_ledger_batch_entries",
			Help:    "Entries committed per ledger group-commit transaction.",
			Buckets: []float64{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1000},
		}),
		ledgerCommit: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "corridor_ledger_commit_duration_seconds",
			Help:    "Time to write and commit one ledger batch, retries included.",
			Buckets: []float64{.0005, .001, .002, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
		}),
		redisErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "corridor_redis_errors_total",
			Help: "Redis commands that failed (a missing key is not a failure), by command.",
		}, []string{"command"}),
	}
	m.reg.MustRegister(m.requests, m.duration, m.idempotency, m.ledgerBatch, m.ledgerCommit, m.redisErrors,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Registry is the registry the metrics live in.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the registry in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// Request records one answered HTTP request.
func (m *Metrics) Request(operation string, status int, took time.Duration) {
	s := strconv.Itoa(status)
	m.requests.WithLabelValues(operation, s).Inc()
	m.duration.WithLabelValues(operation, s).Observe(took.Seconds())
}

// Idempotency records an Idempotency-Key outcome (replayed, in_use, reused).
func (m *Metrics) Idempotency(outcome string) { m.idempotency.WithLabelValues(outcome).Inc() }

// LedgerBatch records one group-commit batch.
func (m *Metrics) LedgerBatch(entries int, took time.Duration) {
	m.ledgerBatch.Observe(float64(entries))
	m.ledgerCommit.Observe(took.Seconds())
}

// WatchDB reports the connection pool of db (in use, idle, waits and the
// time spent waiting) as go_sql_* series labelled db_name.
func (m *Metrics) WatchDB(db *sql.DB, name string) {
	m.reg.MustRegister(collectors.NewDBStatsCollector(db, name))
}

// WatchJobs reports the job queue's backlog by kind at each scrape.
func (m *Metrics) WatchJobs(r ports.JobBacklogReader, clock ports.Clock) {
	m.reg.MustRegister(&jobCollector{r: r, clock: clock})
}

var (
	jobsQueued = prometheus.NewDesc("corridor_jobs_queued", "Background jobs queued, by kind.", []string{"kind"}, nil)
	jobsDue    = prometheus.NewDesc("corridor_jobs_due", "Background jobs whose run time has come, by kind.", []string{"kind"}, nil)
	jobsOldest = prometheus.NewDesc("corridor_jobs_oldest_due_age_seconds",
		"Age of the oldest due job no worker holds, by kind (0 when none): how far behind the workers are.", []string{"kind"}, nil)
	jobsUp = prometheus.NewDesc("corridor_jobs_backlog_up", "1 when the job backlog could be read at this scrape.", nil, nil)
)

type jobCollector struct {
	r     ports.JobBacklogReader
	clock ports.Clock
}

func (c *jobCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- jobsQueued
	ch <- jobsDue
	ch <- jobsOldest
	ch <- jobsUp
}

func (c *jobCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	now := c.clock.Now()
	backlog, err := c.r.Backlog(ctx, now)
	if err != nil {
		ch <- prometheus.MustNewConstMetric(jobsUp, prometheus.GaugeValue, 0)
		return
	}
	ch <- prometheus.MustNewConstMetric(jobsUp, prometheus.GaugeValue, 1)
	for _, b := range backlog {
		age := 0.0
		if !b.OldestDue.IsZero() {
			age = max(now.Sub(b.OldestDue).Seconds(), 0)
		}
		ch <- prometheus.MustNewConstMetric(jobsQueued, prometheus.GaugeValue, float64(b.Queued), b.Kind)
		ch <- prometheus.MustNewConstMetric(jobsDue, prometheus.GaugeValue, float64(b.Due), b.Kind)
		ch <- prometheus.MustNewConstMetric(jobsOldest, prometheus.GaugeValue, age, b.Kind)
	}
}

// RedisHook counts failed Redis commands.
func (m *Metrics) RedisHook() goredis.Hook { return redisHook{m} }

type redisHook struct{ m *Metrics }

func (h redisHook) DialHook(next goredis.DialHook) goredis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := next(ctx, network, addr)
		if err != nil {
			h.m.redisErrors.WithLabelValues("dial").Inc()
		}
		return c, err
	}
}

func (h redisHook) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		err := next(ctx, cmd)
		h.count(cmd.Name(), err)
		return err
	}
}

func (h redisHook) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []goredis.Cmder) error {
		err := next(ctx, cmds)
		for _, c := range cmds {
			h.count(c.Name(), c.Err())
		}
		return err
	}
}

func (h redisHook) count(name string, err error) {
	if err != nil && !errors.Is(err, goredis.Nil) {
		h.m.redisErrors.WithLabelValues(name).Inc()
	}
}
