package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/corridorpay/corridor/core/events"
	"github.com/corridorpay/corridor/ports"
)

// ---- wire models ----

// WebhookEvent is an event of the outbox and its delivery (an extension:
// the reference has no such resource).
type WebhookEvent struct {
	ID            string     `json:"id" doc:"Webhook:<uuid>, the envelope's id"`
	Type          string     `json:"type" doc:"The webhook type"`
	ResourceID    string     `json:"resourceId,omitempty" doc:"The resource the event is about (none for TEST)"`
	Status        string     `json:"status" enum:"PENDING,DELIVERED,FAILED" doc:"PENDING until the endpoint takes it (2xx); FAILED after the retries"`
	Attempts      int        `json:"attempts" doc:"Delivery attempts so far"`
	CreatedAt     time.Time  `json:"createdAt" doc:"When the change happened"`
	LastAttemptAt *time.Time `json:"lastAttemptAt,omitempty"`
	DeliveredAt   *time.Time `json:"deliveredAt,omitempty"`
}

// WebhookAttempt is one delivery attempt.
type WebhookAttempt struct {
	At         time.Time `json:"at"`
	StatusCode int       `json:"statusCode" doc:"The endpoint's HTTP status; 0 when it did not answer"`
	LatencyMs  float64   `json:"latencyMs"`
	Error      string    `json:"error,omitempty"`
}

// WebhookEventDetail is an event with its data and its attempts.
type WebhookEventDetail struct {
	WebhookEvent
	Data         any              `json:"data,omitempty" doc:"The resource as the webhook carries it"`
	AttemptsList []WebhookAttempt `json:"attemptsList" doc:"Every attempt, oldest first"`
}

// WebhookEventList is one page of events.
type WebhookEventList struct {
	Data       []WebhookEvent `json:"data"`
	HasMore    bool           `json:"hasMore"`
	NextCursor string         `json:"nextCursor,omitempty"`
	TotalCount int            `json:"totalCount"`
}

// TestWebhookResponse is what the endpoint answered the test webhook.
type TestWebhookResponse struct {
	URL            string `json:"url,omitempty"`
	ResponseStatus int    `json:"response_status"`
	ResponseBody   string `json:"response_body,omitempty"`
}

type listWebhookEventsInput struct {
	Type       string `query:"type" maxLength:"64" doc:"Only events of this webhook type"`
	ResourceID string `query:"resourceId" maxLength:"255" doc:"Only events about this resource"`
	Status     string `query:"status" enum:"PENDING,DELIVERED,FAILED" doc:"Only events in this delivery status"`
	Limit      int    `query:"limit" minimum:"1" maximum:"100" default:"20" doc:"Page size"`
	Cursor     string `query:"cursor" maxLength:"1024" doc:"nextCursor of the previous page"`
}

type webhookEventIDInput struct {
	EventID string `path:"eventId" maxLength:"255" doc:"Webhook:<uuid>"`
}

type webhookEventListOutput struct{ Body WebhookEventList }
type webhookEventOutput struct{ Body WebhookEventDetail }
type testWebhookOutput struct{ Body TestWebhookResponse }

// webhooksAPI handles the webhook operations.
type webhooksAPI struct{ d Deps }

func registerWebhooks(api huma.API, d Deps) {
	h := webhooksAPI{d}
	registerAll(api,
		func(api huma.API) { huma.Register(api, h.listWebhookEventsOp(), h.listWebhookEvents) },
		func(api huma.API) { huma.Register(api, h.getWebhookEventOp(), h.getWebhookEvent) },
		func(api huma.API) { huma.Register(api, h.redeliverWebhookEventOp(), h.redeliverWebhookEvent) },
		func(api huma.API) { huma.Register(api, h.sendTestWebhookOp(), h.sendTestWebhook) },
		func(api huma.API) { huma.Register(api, h.getWebhookPublicKeyOp(), h.getWebhookPublicKey) },
	)
}

// WebhookPublicKey is the key webhooks are signed with.
type WebhookPublicKey struct {
	PublicKeyPEM string `json:"publicKeyPem" doc:"PKIX PEM of the P-256 public key: verify X-Service-Signature (base64 of a DER ECDSA signature over SHA-256 of the raw body) with it"`
	Algorithm    string `json:"algorithm" enum:"ES256" doc:"ECDSA on P-256 with SHA-256"`
}

type webhookPublicKeyOutput struct{ Body WebhookPublicKey }

func (webhooksAPI) getWebhookPublicKeyOp() huma.Operation {
	return huma.Operation{
		OperationID: "getWebhookPublicKey", Method: http.MethodGet, Path: "/webhooks/public-key",
		Summary:     "Get the webhook signing key",
		Description: "The public key every webhook's X-Service-Signature verifies with (an extension of the reference).",
		Tags:        []string{webhooksTag}, Errors: []int{http.StatusUnauthorized},
	}
}

func (h webhooksAPI) getWebhookPublicKey(context.Context, *struct{}) (*webhookPublicKeyOutput, error) {
	return &webhookPublicKeyOutput{Body: WebhookPublicKey{PublicKeyPEM: h.d.WebhookKey, Algorithm: "ES256"}}, nil
}

const webhooksTag = "Webhooks"

func webhookEventOut(e ports.Event) WebhookEvent {
	return WebhookEvent{ID: e.ID, Type: e.Type, ResourceID: e.ResourceID, Status: e.Status, Attempts: e.Attempts,
		CreatedAt: e.CreatedAt, LastAttemptAt: e.LastAttemptAt, DeliveredAt: e.DeliveredAt}
}

func (webhooksAPI) listWebhookEventsOp() huma.Operation {
	return huma.Operation{
		OperationID: "listWebhookEvents", Method: http.MethodGet, Path: "/webhooks/events",
		Summary:     "List webhook events",
		Description: "The platform's events, oldest first, with their delivery status (an extension of the reference).",
		Tags:        []string{webhooksTag}, Errors: []int{http.StatusBadRequest, http.StatusUnauthorized},
	}
}

func (h webhooksAPI) listWebhookEvents(ctx context.Context, in *listWebhookEventsInput) (*webhookEventListOutput, error) {
	cursors := cursorsOf(h.d, "webhook-events")
	page, err := cursors.page(in.Limit, in.Cursor)
	if err != nil {
		return nil, err
	}
	res, err := h.d.Events.List(ctx, ports.EventFilter{PlatformID: principal(ctx).PlatformID, Type: in.Type,
		ResourceID: in.ResourceID, Status: in.Status}, page)
	if err != nil {
		return nil, apiError(err)
	}
	out := WebhookEventList{Data: make([]WebhookEvent, len(res.Rows)), HasMore: res.Next != nil, TotalCount: res.Total,
		NextCursor: cursors.next(res.Next != nil, res.Next)}
	for i, e := range res.Rows {
		out.Data[i] = webhookEventOut(e)
	}
	return &webhookEventListOutput{Body: out}, nil
}

func (webhooksAPI) getWebhookEventOp() huma.Operation {
	return huma.Operation{
		OperationID: "getWebhookEvent", Method: http.MethodGet, Path: "/webhooks/events/{eventId}",
		Summary: "Get a webhook event", Description: "An event with its data and every delivery attempt (time, status code, latency, error).",
		Tags: []string{webhooksTag}, Errors: []int{http.StatusUnauthorized, http.StatusNotFound},
	}
}

func (h webhooksAPI) getWebhookEvent(ctx context.Context, in *webhookEventIDInput) (*webhookEventOutput, error) {
	e, attempts, err := h.d.Events.Get(ctx, principal(ctx).PlatformID, in.EventID)
	if err != nil {
		return nil, apiError(err)
	}
	out, err := h.detail(ctx, e, attempts)
	if err != nil {
		return nil, apiError(err)
	}
	return &webhookEventOutput{Body: out}, nil
}

func (h webhooksAPI) detail(ctx context.Context, e ports.Event, attempts []ports.EventAttempt) (WebhookEventDetail, error) {
	out := WebhookEventDetail{WebhookEvent: webhookEventOut(e), AttemptsList: make([]WebhookAttempt, len(attempts))}
	for i, a := range attempts {
		out.AttemptsList[i] = WebhookAttempt{At: a.At, StatusCode: a.StatusCode, LatencyMs: float64(a.Latency.Microseconds()) / 1000,
			Error: a.Error}
	}
	if e.Type != events.TypeTest {
		data, err := EventRenderer(h).Render(ctx, e)
		if err != nil {
			return WebhookEventDetail{}, err
		}
		out.Data = data
	}
	return out, nil
}

func (webhooksAPI) redeliverWebhookEventOp() huma.Operation {
	return huma.Operation{
		OperationID: "redeliverWebhookEvent", Method: http.MethodPost, Path: "/webhooks/events/{eventId}/redeliver",
		Summary:     "Redeliver a webhook event",
		Description: "Sends the event again from now (PENDING, its retry schedule starting over), whatever its status.",
		Tags:        []string{webhooksTag}, Errors: []int{http.StatusUnauthorized, http.StatusNotFound},
	}
}

func (h webhooksAPI) redeliverWebhookEvent(ctx context.Context, in *webhookEventIDInput) (*webhookEventOutput, error) {
	pid := principal(ctx).PlatformID
	if _, err := h.d.Events.Redeliver(ctx, pid, in.EventID); err != nil {
		return nil, apiError(err)
	}
	return h.getWebhookEvent(ctx, in)
}

func (webhooksAPI) sendTestWebhookOp() huma.Operation {
	return huma.Operation{
		OperationID: "sendTestWebhook", Method: http.MethodPost, Path: "/sandbox/webhooks/test",
		Summary:     "Send a test webhook",
		Description: "Records a TEST event and sends it, signed, to the configured endpoint at once; the response tells what the endpoint answered. 400 when no endpoint is set or it does not answer.",
		Tags:        []string{"Sandbox"}, Errors: []int{http.StatusBadRequest, http.StatusUnauthorized},
	}
}

func (h webhooksAPI) sendTestWebhook(ctx context.Context, _ *struct{}) (*testWebhookOutput, error) {
	res, err := h.d.Events.Test(ctx, principal(ctx).PlatformID)
	if err != nil {
		return nil, apiError(err)
	}
	return &testWebhookOutput{Body: TestWebhookResponse{URL: res.URL, ResponseStatus: res.StatusCode, ResponseBody: res.Body}}, nil
}

// IncomingPaymentWebhookData is the data of an INCOMING_PAYMENT.PENDING
// webhook whose payment waits for approval: the transaction, and the
// receiver fields the sender asks for (the answer's receiverCustomerInfo
// must carry every mandatory one).
type IncomingPaymentWebhookData struct {
	Transaction
	RequestedReceiverCustomerInfoFields []CounterpartyFieldDefinition `json:"requestedReceiverCustomerInfoFields,omitempty"`
}

// EventRenderer renders an event's data as the API returns its resource
// (core/events' Renderer).
type EventRenderer struct{ d Deps }

// NewEventRenderer is the renderer of the API built on d.
func NewEventRenderer(d Deps) EventRenderer { return EventRenderer{d} }

// Render is e's resource, as it was at the change, in its wire form.
func (r EventRenderer) Render(ctx context.Context, e ports.Event) (json.RawMessage, error) {
	kind, _, _ := strings.Cut(e.Type, ".")
	var (
		out any
		err error
	)
	switch kind {
	case "INCOMING_PAYMENT", "OUTGOING_PAYMENT":
		var t ports.Transaction
		if t, err = ports.SnapshotOf[ports.Transaction](e); err != nil {
			return nil, err
		}
		out = transactionOut(r.d, e.PlatformID, t)
		if a := t.Details.Approval; e.Type == "INCOMING_PAYMENT.PENDING" && a != nil && len(a.RequestedFields) > 0 {
			out = IncomingPaymentWebhookData{Transaction: out.(Transaction),
				RequestedReceiverCustomerInfoFields: counterpartyDefinitions(a.RequestedFields)}
		}
	case "CUSTOMER":
		out, err = rendered(e, customerOut)
	case "VERIFICATION":
		out, err = rendered(e, verificationOut)
	case "INVITATION":
		out, err = rendered(e, invitationOut)
	case "INTERNAL_ACCOUNT":
		out, err = rendered(e, internalAccountOut)
	case "EXTERNAL_ACCOUNT":
		out, err = rendered(e, externalAccountOut)
	case "AGENT_ACTION":
		var a ports.AgentAction
		if a, err = ports.SnapshotOf[ports.AgentAction](e); err != nil {
			return nil, err
		}
		if out, err = agentActionOut(ctx, r.d, a); err != nil {
			return nil, fmt.Errorf("event %s: %w", e.ID, err)
		}
	default:
		// Resources recorded in their wire form already, compacted (a
		// store may give them back spaced, as PostgreSQL's jsonb does).
		if len(e.Resource) == 0 {
			return nil, nil
		}
		var b bytes.Buffer
		if err := json.Compact(&b, e.Resource); err != nil {
			return nil, fmt.Errorf("event %s: %w", e.ID, err)
		}
		return b.Bytes(), nil
	}
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("event %s: %w", e.ID, err)
	}
	return b, nil
}

// rendered is e's resource, its port value T, in its wire form (out).
func rendered[T, W any](e ports.Event, out func(T) W) (any, error) {
	v, err := ports.SnapshotOf[T](e)
	if err != nil {
		return nil, err
	}
	return out(v), nil
}
