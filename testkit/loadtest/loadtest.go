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
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	return result(lat, int(errs.Load()), elapsed)
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
		lat     []time.Duration
		errs    int
		elapsed time.Duration
	)
	for _, r := range rs {
		lat, errs, elapsed = append(lat, r.lat...), errs+r.Errors, elapsed+r.Elapsed
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	return result(lat, errs, elapsed)
}

// Report attaches r to a benchmark as custom metrics (ops/s, p50_ms,
// p99_ms) so `go test -bench` prints them.
func Report(b *testing.B, r Result) {
	b.ReportMetric(r.TPS, "ops/s")
	b.ReportMetric(float64(r.P50.Microseconds())/1000, "p50_ms")
	b.ReportMetric(float64(r.P99.Microseconds())/1000, "p99_ms")
	b.ReportMetric(float64(r.Errors), "errors")
	b.ReportMetric(0, "ns/op")
}
