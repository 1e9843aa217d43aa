package events

import (
	"context"
	"fmt"

	"github.com/corridorpay/corridor/core/jobs"
	"github.com/corridorpay/corridor/ports"
)

// PlatformEndpoints are the webhook endpoints of the platforms' stored
// configuration (PATCH /config).
type PlatformEndpoints struct{ Store ports.Store }

// WebhookEndpoint is the platform's endpoint, "" when none.
func (p PlatformEndpoints) WebhookEndpoint(ctx context.Context, platformID string) (string, error) {
	pl, err := p.Store.Read().Platforms().Get(ctx, platformID)
	if err != nil {
		return "", fmt.Errorf("platform %s: %w", platformID, err)
	}
	return pl.WebhookEndpoint, nil
}

// DisableWebhookEndpoint removes the platform's endpoint if it is still
// url (one set since is left alone).
func (p PlatformEndpoints) DisableWebhookEndpoint(ctx context.Context, platformID, url string) error {
	return p.Store.InTx(ctx, func(tx ports.Tx) error {
		pl, err := tx.Platforms().GetForUpdate(ctx, platformID)
		if err != nil {
			return fmt.Errorf("platform %s: %w", platformID, err)
		}
		if pl.WebhookEndpoint != url {
			return nil
		}
		pl.WebhookEndpoint = ""
		return tx.Platforms().Update(ctx, pl)
	})
}

// KindEndpointSet is the job a new webhook endpoint queues: the
// platform's backlog queued again for it, and the reference's TEST event.
const KindEndpointSet = "webhook.endpoint_set"

// endpointSet is a KindEndpointSet job's payload.
type endpointSet struct {
	PlatformID string `json:"platformId"`
	Endpoint   string `json:"endpoint"`
}

// Register installs the events' job handlers on a runner (deliveries
// have their own runner: see Deliverer.HandleBatch).
func (s *Service) Register(r *jobs.Runner) {
	jobs.HandleJSON(r, KindEndpointSet, s.handleEndpointSet)
}

// WebhookEndpointChanged is the platforms' hook on a new endpoint, told
// in the unit of work tx that sets it: it queues a KindEndpointSet job
// there, so the endpoint and the promise of its TEST event and backlog
// commit together (a crash right after the change loses neither), and
// the request that sets the endpoint does not wait for its backlog.
func (s *Service) WebhookEndpointChanged(ctx context.Context, tx ports.Tx, platformID, endpoint string) error {
	if endpoint == "" {
		return nil
	}
	return jobs.Enqueue(ctx, tx.Jobs(), KindEndpointSet, "", s.clock.Now(),
		endpointSet{PlatformID: platformID, Endpoint: endpoint})
}

// handleEndpointSet runs a KindEndpointSet job, in one unit of work with
// the job's removal: while the platform's endpoint is still the job's,
// its pending events are queued again (resume) and a TEST event is
// recorded. An endpoint changed again since has its own job; one removed
// since (a 410) waits for the next.
func (s *Service) handleEndpointSet(ctx context.Context, j ports.Job, p endpointSet) error {
	err := s.store.InTx(ctx, func(tx ports.Tx) error {
		pl, err := tx.Platforms().Get(ctx, p.PlatformID)
		if err != nil {
			return fmt.Errorf("platform %s: %w", p.PlatformID, err)
		}
		if pl.WebhookEndpoint == p.Endpoint {
			if _, err := s.resume(ctx, tx, p.PlatformID); err != nil {
				return err
			}
			if _, err := s.record(ctx, tx, p.PlatformID, TypeTest, "", nil); err != nil {
				return err
			}
		}
		return tx.Jobs().Complete(ctx, j.ID)
	})
	if err != nil {
		return fmt.Errorf("webhook endpoint of %s set: %w", p.PlatformID, err)
	}
	jobs.Completed(ctx)
	return nil
}
