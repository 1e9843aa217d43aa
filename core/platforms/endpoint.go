package platforms

import (
	"context"

	"github.com/corridorpay/corridor/ports"
)

// EndpointChanged is told, inside the unit of work tx that sets it, that a
// platform's webhook endpoint was set to a new URL, so that the webhook
// system can queue, in the same commit, the reference's TEST event for
// that endpoint and the platform's backlog. It is a port for the event
// and webhook work, which owns delivery (signing, retries); until it is
// wired, NoEndpointHook stands in. An error fails the change.
type EndpointChanged interface {
	WebhookEndpointChanged(ctx context.Context, tx ports.Tx, platformID, endpoint string) error
}

// NoEndpointHook is the EndpointChanged that does nothing.
type NoEndpointHook struct{}

// WebhookEndpointChanged does nothing.
func (NoEndpointHook) WebhookEndpointChanged(context.Context, ports.Tx, string, string) error {
	return nil
}
