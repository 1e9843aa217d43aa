package platforms

import "context"

// EndpointChanged is told, after the change has committed, that a
// platform's webhook endpoint was set to a new URL, so that the webhook
// system sends that endpoint the reference's TEST event. It is a port for
// the event and webhook work, which owns delivery (signing, retries); until
// it is wired, NoEndpointHook stands in. An error is logged by the caller
// and does not undo the change.
type EndpointChanged interface {
	WebhookEndpointChanged(ctx context.Context, platformID, endpoint string) error
}

// NoEndpointHook is the EndpointChanged that does nothing.
type NoEndpointHook struct{}

// WebhookEndpointChanged does nothing.
func (NoEndpointHook) WebhookEndpointChanged(context.Context, string, string) error { return nil }
