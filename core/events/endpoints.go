package events

import (
	"context"
	"fmt"

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

// WebhookEndpointChanged is the platforms' hook on a new endpoint: a TEST
// event goes to it (as the reference says), and the platform's pending
// events are queued again so its backlog follows.
func (s *Service) WebhookEndpointChanged(ctx context.Context, platformID, endpoint string) error {
	if endpoint == "" {
		return nil
	}
	if _, err := s.Resume(ctx, platformID); err != nil {
		return err
	}
	_, err := s.Record(ctx, platformID, TypeTest, "", nil)
	return err
}
