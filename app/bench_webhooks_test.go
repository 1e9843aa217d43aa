package main

import (
	"context"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/corridorpay/corridor/testkit/loadtest"
)

// BenchmarkWebhookDrain measures the delivery path alone: b.N
// transfer-outs are made first with no job loop (each records its
// OUTGOING_PAYMENT.PENDING and its account's INTERNAL_ACCOUNT.BALANCE_UPDATED
// for the hold, with a delivery job for the platform's endpoint), then the
// delivery loops of one instance (the server's own: workers.deliver)
// send the backlog to a local
// receiver until every event has arrived. It reports events delivered per
// second and the CPU per event (this process, receiver included, and the
// local PostgreSQL server): what one delivery costs, apart from the
// payments that record its events.
func BenchmarkWebhookDrain(b *testing.B) {
	for _, backendName := range []string{"memory", "postgres"} {
		b.Run(backendName, func(b *testing.B) { benchWebhookDrain(b, backendName) })
	}
}

func benchWebhookDrain(b *testing.B, backendName string) {
	s := newBenchPayers(b, backendName, false, func(env benchEnv, accountID string, i int) string {
		return benchExternalAccount(b, env.be, env.platform.ID, accountID, i)
	})
	ctx := context.Background()
	hooks := &benchHooks{}
	srv := httptest.NewServer(hooks)
	b.Cleanup(srv.Close)
	if _, err := s.svc.platforms.UpdateConfig(ctx, s.platform.ID, benchEndpoint(srv.URL)); err != nil {
		b.Fatal(err)
	}
	run := benchRunName(fmt.Sprintf("drain-%s-%d", backendName, b.N))
	r := loadtest.Run(b.N, 64, func(i int) error { return s.transferOut(run, i) })
	if r.Errors > 0 {
		b.Fatalf("%d of %d transfer-outs failed", r.Errors, r.Ops)
	}
	// The endpoint's TEST event (sent when it was set) and the backlog:
	// two events per transfer-out.
	want := 2 * b.N
	hooks.take()
	// One op: the whole drain, by the server's own delivery loops
	// (workers.deliver), timed until the receiver has every event.
	drain := loadtest.Run(1, 1, func(int) error {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
		defer cancel()
		w := &workers{cancel: cancel}
		w.deliver(ctx, s.svc.webhooks, s.cfg, s.log)
		defer w.stop()
		got := 0
		for got < want && ctx.Err() == nil {
			time.Sleep(2 * time.Millisecond)
			_, n := hooks.take()
			got += n
		}
		if got < want {
			return fmt.Errorf("%d of %d events delivered", got, want)
		}
		return nil
	})
	if drain.Errors > 0 {
		b.Fatalf("the backlog did not drain in 10 minutes")
	}
	events := float64(want)
	b.ReportMetric(events/drain.Elapsed.Seconds(), "events/s")
	b.ReportMetric(float64(drain.CPU.Microseconds())/events, "cpu_us/event")
	if drain.PGMeasured {
		b.ReportMetric(float64(drain.PGCPU.Microseconds())/events, "pg_cpu_us/event")
	}
	b.ReportMetric(0, "ns/op")
}
