package transfers

import (
	"context"
	"fmt"
	"time"

	"github.com/corridorpay/corridor/core/jobs"
	"github.com/corridorpay/corridor/ports"
)

// ReapInterval is how often the orphan-hold reaper runs.
const ReapInterval = time.Minute

// Register installs the transfer job handlers on a runner.
func (s *Service) Register(r *jobs.Runner) {
	r.Handle(KindSubmit, s.HandleSubmit)
	r.Handle(KindCheck, s.HandleCheck)
	r.Handle(KindReapOrphanHolds, s.HandleReapOrphanHolds)
}

// ScheduleReaper enqueues the orphan-hold reaper's run at `at`. Its key
// names the ReapInterval slot of `at`, so scheduling the same slot twice
// (several instances starting, a run re-scheduling itself) queues one job.
// Call it once at start-up; every run schedules the next.
func (s *Service) ScheduleReaper(ctx context.Context, q ports.JobQueue, at time.Time) error {
	at = at.UTC()
	slot := at.Truncate(ReapInterval).Format(time.RFC3339)
	if err := q.Enqueue(ctx, ports.Job{Kind: KindReapOrphanHolds, Key: KindReapOrphanHolds + ":" + slot, RunAt: at}); err != nil {
		return fmt.Errorf("schedule orphan-hold reaper: %w", err)
	}
	return nil
}

// HandleReapOrphanHolds runs a transfer.reap_orphan_holds job and
// schedules the next run.
func (s *Service) HandleReapOrphanHolds(ctx context.Context, _ ports.Job) error {
	if _, err := s.ReapOrphanHolds(ctx); err != nil {
		return err
	}
	return s.ScheduleReaper(ctx, s.store.Read().Jobs(), s.clock.Now().Add(ReapInterval))
}
