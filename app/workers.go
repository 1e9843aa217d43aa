package main

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/corridorpay/corridor/core/jobs"
	"github.com/corridorpay/corridor/ports"
)

// workers are the background loops of one instance. Each is safe to run on
// several instances at once (the stores arbitrate).
type workers struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func startWorkers(ctx context.Context, b *backend, runner, webhooks *jobs.Runner, cfg Config, clock ports.Clock, log *slog.Logger) *workers {
	ctx, cancel := context.WithCancel(ctx)
	w := &workers{cancel: cancel}
	if webhooks != nil {
		w.deliver(ctx, webhooks, cfg, log)
	}
	// Run due jobs (rail submissions and outcomes…) batch after batch until
	// none is due, in jobLoops loops ticking on their own, each running up
	// to jobConcurrency handlers at once: a handler mostly waits for its
	// ledger group commit, so handlers run together share commits instead
	// of waiting for one each. Each loop claims its own batches (the queue
	// never hands a job to two claimers), as several instances do.
	runner.SetConcurrency(jobConcurrency)
	for range jobLoops {
		w.every(ctx, cfg.JobInterval, func(ctx context.Context) {
			for range maxJobBatchesPerTick {
				n, err := runner.RunDue(ctx)
				if err != nil && ctx.Err() == nil {
					log.Error("jobs", "err", err)
				}
				if n == 0 || ctx.Err() != nil {
					return
				}
			}
		})
	}
	w.every(ctx, cfg.ExpiryInterval, func(ctx context.Context) {
		// Release holds whose timeout passed, in bounded batches.
		for {
			n, err := b.ledger.ExpireDue(ctx, clock.Now(), 500)
			if err != nil {
				if ctx.Err() == nil {
					log.Error("hold expiry", "err", err)
				}
				return
			}
			if n > 0 {
				log.Info("holds expired", "count", n)
			}
			if n < 500 {
				return
			}
		}
	})
	w.every(ctx, time.Hour, func(ctx context.Context) {
		n, err := b.idem.Purge(ctx, clock.Now())
		if err != nil {
			if ctx.Err() == nil {
				log.Error("idempotency purge", "err", err)
			}
			return
		}
		if n > 0 {
			log.Info("idempotency keys purged", "count", n)
		}
	})
	return w
}

// deliver starts the webhook delivery loops, on their own runner: an
// endpoint that takes its 10 s to time out holds one of these handlers,
// never a rail job's (and a platform whose endpoint is slow holds at most
// events.SlowPerPlatform of them).
func (w *workers) deliver(ctx context.Context, webhooks *jobs.Runner, cfg Config, log *slog.Logger) {
	webhooks.SetConcurrency(webhookConcurrency)
	for range webhookLoops {
		w.every(ctx, min(cfg.JobInterval, webhookInterval), func(ctx context.Context) {
			for range maxJobBatchesPerTick {
				n, err := webhooks.RunDue(ctx)
				if err != nil && ctx.Err() == nil {
					log.Error("webhook deliveries", "err", err)
				}
				if n == 0 || ctx.Err() != nil {
					return
				}
			}
		})
	}
}

// webhookLoops and webhookConcurrency shape the delivery loop of one
// instance: up to 2 × 32 deliveries in flight (each loop's claim is one
// batch, see events.Deliverer.HandleBatch). The loops look for due
// deliveries every webhookInterval (or CORRIDOR_JOB_INTERVAL when shorter):
// the wait is most of an event's lag, and a look that finds nothing is a
// cheap read of the deliveries' due-index.
const (
	webhookLoops       = 2
	webhookConcurrency = 32
	webhookInterval    = 50 * time.Millisecond
)

// maxJobBatchesPerTick bounds one tick of a job loop, so a queue that
// never empties still lets the loop notice a shutdown.
const maxJobBatchesPerTick = 1000

// jobLoops and jobConcurrency shape the job loop of one instance (see
// startWorkers): up to jobLoops × jobConcurrency handlers at once.
const (
	jobLoops       = 4
	jobConcurrency = 32
)

func (w *workers) every(ctx context.Context, d time.Duration, fn func(context.Context)) {
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				fn(ctx)
			}
		}
	}()
}

func (w *workers) stop() {
	w.cancel()
	w.wg.Wait()
}
