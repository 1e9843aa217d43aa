// Package loadtest drives an operation at a fixed concurrency and reports
// throughput and latency percentiles, for the benchmarks behind `make bench`.
package loadtest

import (
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Result is one load run.
type Result struct {
	Ops      int
	Errors   int
	Elapsed  time.Duration
	TPS      float64
	P50, P99 time.Duration
	// CPU is the CPU time this process (the service and its load client)
	// used during the run; PGCPU the local PostgreSQL server's, when
	// PGMeasured (it runs on this machine and /proc shows it).
	CPU, PGCPU time.Duration
	PGMeasured bool
	// lat is every call's latency, sorted (for Merge).
	lat []time.Duration
}

func (r Result) String() string {
	return fmt.Sprintf("ops=%d errors=%d tps=%.0f p50=%s p99=%s", r.Ops, r.Errors, r.TPS, r.P50, r.P99)
}

// Run calls op total times from concurrency goroutines (op gets a global
// sequence number) and measures each call. An error from op counts as an
// error, not a stop.
func Run(total, concurrency int, op func(i int) error) Result {
	if concurrency < 1 {
		concurrency = 1
	}
	lat := make([]time.Duration, total)
	var next, errs atomic.Int64
	var wg sync.WaitGroup
	cpu0 := readCPU()
	start := time.Now()
	for g := 0; g < concurrency; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= total {
					return
				}
				t0 := time.Now()
				if err := op(i); err != nil {
					errs.Add(1)
				}
				lat[i] = time.Since(t0)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	cpu1 := readCPU()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	r := result(lat, int(errs.Load()), elapsed)
	r.CPU = cpu1.proc - cpu0.proc
	if cpu0.pgOK && cpu1.pgOK {
		r.PGCPU, r.PGMeasured = cpu1.pg-cpu0.pg, true
	}
	return r
}

// result is the Result of sorted latencies lat over elapsed.
func result(lat []time.Duration, errs int, elapsed time.Duration) Result {
	r := Result{Ops: len(lat), Errors: errs, Elapsed: elapsed, lat: lat}
	if total := len(lat); total > 0 {
		r.TPS = float64(total) / elapsed.Seconds()
		r.P50 = lat[total*50/100]
		r.P99 = lat[min(total-1, total*99/100)]
	}
	return r
}

// Merge is the runs rs taken as one: their calls and their elapsed times
// added up (for a figure measured in several rounds).
func Merge(rs ...Result) Result {
	var (
		lat        []time.Duration
		errs       int
		elapsed    time.Duration
		cpu, pgCPU time.Duration
	)
	pgMeasured := len(rs) > 0
	for _, r := range rs {
		lat, errs, elapsed = append(lat, r.lat...), errs+r.Errors, elapsed+r.Elapsed
		cpu, pgCPU, pgMeasured = cpu+r.CPU, pgCPU+r.PGCPU, pgMeasured && r.PGMeasured
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	m := result(lat, errs, elapsed)
	m.CPU = cpu
	if pgMeasured {
		m.PGCPU, m.PGMeasured = pgCPU, true
	}
	return m
}

// Report attaches r to a benchmark as custom metrics (ops/s, p50_ms,
// p99_ms, and the CPU per operation: cpu_ms/op of this process,
// pg_cpu_ms/op of a local PostgreSQL) so `go test -bench` prints them.
func Report(b *testing.B, r Result) {
	b.ReportMetric(r.TPS, "ops/s")
	b.ReportMetric(float64(r.P50.Microseconds())/1000, "p50_ms")
	b.ReportMetric(float64(r.P99.Microseconds())/1000, "p99_ms")
	b.ReportMetric(float64(r.Errors), "errors")
	if per, ok := r.perOp(r.CPU); ok {
		b.ReportMetric(per, "cpu_ms/op")
	}
	if per, ok := r.perOp(r.PGCPU); ok && r.PGMeasured {
		b.ReportMetric(per, "pg_cpu_ms/op")
	}
	b.ReportMetric(0, "ns/op")
}

// perOp is d per operation of r, in milliseconds.
func (r Result) perOp(d time.Duration) (float64, bool) {
	if r.Ops == 0 {
		return 0, false
	}
	return float64(d.Microseconds()) / 1000 / float64(r.Ops), true
}
