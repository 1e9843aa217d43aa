package events

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/ports"
)

// Types are the webhook types the outbox records: the reference's
// webhooks' (testkit/apischema checks each has one), less the
// out-of-scope card and bulk ones and INTERNAL_ACCOUNT.FUNDING_INSTRUCTIONS_UPDATED
// (funding instructions never change here).
var Types = []string{
	"OUTGOING_PAYMENT.PENDING", "OUTGOING_PAYMENT.PENDING_AUTHORIZATION", "OUTGOING_PAYMENT.PROCESSING",
	"OUTGOING_PAYMENT.COMPLETED", "OUTGOING_PAYMENT.FAILED", "OUTGOING_PAYMENT.EXPIRED",
	"OUTGOING_PAYMENT.REFUND_PENDING", "OUTGOING_PAYMENT.REFUND_COMPLETED", "OUTGOING_PAYMENT.REFUND_FAILED",
	"INCOMING_PAYMENT.PENDING", "INCOMING_PAYMENT.COMPLETED", "INCOMING_PAYMENT.FAILED",
	"INCOMING_PAYMENT.REFUND_PENDING", "INCOMING_PAYMENT.REFUND_COMPLETED", "INCOMING_PAYMENT.REFUND_FAILED",
	"CUSTOMER.KYC_APPROVED", "CUSTOMER.KYC_REJECTED", "CUSTOMER.KYC_PENDING",
	"CUSTOMER.KYB_APPROVED", "CUSTOMER.KYB_REJECTED", "CUSTOMER.KYB_PENDING",
	"VERIFICATION.APPROVED", "VERIFICATION.REJECTED", "VERIFICATION.RESOLVE_ERRORS", "VERIFICATION.IN_PROGRESS",
	"VERIFICATION.PENDING_MANUAL_REVIEW",
	"INTERNAL_ACCOUNT.BALANCE_UPDATED", "INTERNAL_ACCOUNT.STATUS_UPDATED", "EXTERNAL_ACCOUNT.STATUS_UPDATED",
	"INVITATION.CLAIMED", "AGENT_ACTION.PENDING_APPROVAL", TypeTest,
}

// typeAliases are the spec's names of types the reference (and so the
// webhooks) spell with a dot: a filter takes either.
var typeAliases = map[string]string{"INVITATION_CLAIMED": "INVITATION.CLAIMED"}

// Statuses are the delivery statuses.
var Statuses = []string{ports.EventPending, ports.EventDelivered, ports.EventFailed}

// Service answers the webhook operations: the platform's events and
// their attempts, redelivery, and the sandbox's test webhook.
type Service struct {
	store   ports.Store
	clock   ports.Clock
	ids     ports.IDs
	deliver *Deliverer
}

// NewService returns the service over store, delivering with d.
func NewService(store ports.Store, clock ports.Clock, ids ports.IDs, d *Deliverer) *Service {
	return &Service{store: store, clock: clock, ids: ids, deliver: d}
}

// Page is one page of events.
type Page struct {
	Rows []ports.Event
	// Next is the position after the last row, when there are more.
	Next  *ports.Position
	Total int
}

// MaxLimit bounds a page.
const MaxLimit = 100

// List pages the platform's events, oldest first.
func (s *Service) List(ctx context.Context, f ports.EventFilter, page ports.Page) (Page, error) {
	if t, ok := typeAliases[f.Type]; ok {
		f.Type = t
	}
	if f.Type != "" && !slices.Contains(Types, f.Type) {
		return Page{}, fault.Invalid("type", "unknown webhook type "+f.Type)
	}
	if f.Status != "" && !slices.Contains(Statuses, f.Status) {
		return Page{}, fault.Invalid("status", "status must be one of PENDING, DELIVERED, FAILED")
	}
	if page.Limit == 0 {
		page.Limit = 20
	}
	if page.Limit < 1 || page.Limit > MaxLimit {
		return Page{}, fault.Invalid("limit", fmt.Sprintf("must be between 1 and %d", MaxLimit))
	}
	rows, total, err := s.store.Read().Events().List(ctx, f, page)
	if err != nil {
		return Page{}, fmt.Errorf("list events: %w", err)
	}
	out := Page{Total: total}
	out.Rows, out.Next = ports.TrimPage(rows, page.Limit, func(e ports.Event) ports.Position {
		return ports.Position{CreatedAt: e.CreatedAt, ID: e.ID}
	})
	if out.Rows == nil {
		out.Rows = []ports.Event{}
	}
	return out, nil
}

// Get is one event with its attempts, oldest first.
func (s *Service) Get(ctx context.Context, platformID, id string) (ports.Event, []ports.EventAttempt, error) {
	e, err := s.store.Read().Events().Get(ctx, platformID, id)
	if errors.Is(err, ports.ErrNotFound) {
		return ports.Event{}, nil, fault.NotFound("NOT_FOUND", "webhook event "+id+" not found")
	}
	if err != nil {
		return ports.Event{}, nil, fmt.Errorf("get event %s: %w", id, err)
	}
	attempts, err := s.store.Read().Events().Attempts(ctx, platformID, id)
	if err != nil {
		return ports.Event{}, nil, fmt.Errorf("attempts of %s: %w", id, err)
	}
	return e, attempts, nil
}

// Redeliver sends an event again from now (its schedule starts over for
// a FAILED one): PENDING again, delivered by the job queue, and with it
// the other pending events of its resource, which wait for it in order.
func (s *Service) Redeliver(ctx context.Context, platformID, id string) (ports.Event, error) {
	err := s.store.InTx(ctx, func(tx ports.Tx) error {
		now := s.clock.Now()
		if err := tx.Events().Requeue(ctx, platformID, id, now); err != nil {
			return err
		}
		// The resource's other pending events, which wait for it in
		// order, go now too rather than at the retry they were given
		// (their schedules start over with its own).
		e, err := tx.Events().Get(ctx, platformID, id)
		if err != nil {
			return err
		}
		heads, err := tx.Events().PendingHeads(ctx, []ports.Event{e}, chainMax)
		if err != nil {
			return err
		}
		for _, other := range heads[ports.ResourceKey(platformID, e.ResourceID)] {
			if other == id {
				continue
			}
			if err := tx.Events().Requeue(ctx, platformID, other, now); err != nil {
				return err
			}
		}
		return nil
	})
	if errors.Is(err, ports.ErrNotFound) {
		return ports.Event{}, fault.NotFound("NOT_FOUND", "webhook event "+id+" not found")
	}
	if err != nil {
		return ports.Event{}, fmt.Errorf("redeliver %s: %w", id, err)
	}
	e, _, err := s.Get(ctx, platformID, id)
	return e, err
}

// resume queues again, in the unit of work tx, the deliveries of the
// platform's pending events (after it sets a webhook endpoint: its
// backlog is sent, oldest first per resource), and says how many.
func (s *Service) resume(ctx context.Context, tx ports.Tx, platformID string) (int, error) {
	n, err := tx.Events().RequeuePending(ctx, platformID, s.clock.Now())
	if err != nil {
		return 0, fmt.Errorf("resume webhooks of %s: %w", platformID, err)
	}
	return n, nil
}

// TestResult is what the endpoint answered a test webhook.
type TestResult struct {
	URL        string
	StatusCode int
	Body       string
}

// The test webhook's 400 codes (the reference's): no endpoint is set; the
// endpoint did not answer.
const (
	CodeEndpointNotSet = "WEBHOOK_ENDPOINT_NOT_SET"
	CodeDeliveryError  = "WEBHOOK_DELIVERY_ERROR"
)

// Test sends a TEST event at once (the sandbox's test webhook): a
// platform without an endpoint, or an endpoint that does not answer, is
// 400 and records nothing; any answer is the result, and the event is
// recorded with that attempt (a test not taken is retried like any event).
func (s *Service) Test(ctx context.Context, platformID string) (TestResult, error) {
	url, err := s.deliver.endpoints.WebhookEndpoint(ctx, platformID)
	if err != nil {
		return TestResult{}, fmt.Errorf("test webhook: endpoint of %s: %w", platformID, err)
	}
	if url == "" {
		return TestResult{}, fault.InvalidCode(CodeEndpointNotSet, "webhookEndpoint", "the platform has no webhook endpoint: set one with PATCH /config")
	}
	e, err := New(s.ids, platformID, TypeTest, "", nil, s.clock.Now())
	if err != nil {
		return TestResult{}, err
	}
	a, ans, err := s.deliver.attempt(ctx, e, url)
	if err != nil {
		return TestResult{}, err
	}
	if a.StatusCode == 0 {
		return TestResult{}, fault.InvalidCode(CodeDeliveryError, "webhookEndpoint", "the webhook endpoint did not answer: "+a.Error)
	}
	status := ports.EventPending
	if a.Error == "" {
		status = ports.EventDelivered
	}
	err = s.store.InTx(ctx, func(tx ports.Tx) error {
		if err := tx.Events().Append(ctx, e); err != nil {
			return err
		}
		return recordAttempt(ctx, tx, platformID, a, status)
	})
	if err != nil {
		return TestResult{}, fmt.Errorf("record the test webhook: %w", err)
	}
	return TestResult{URL: url, StatusCode: ans.StatusCode, Body: string(ans.Body)}, nil
}

// record appends an event in the unit of work tx (a new endpoint's TEST
// event; changes record theirs in the unit that makes them).
func (s *Service) record(ctx context.Context, tx ports.Tx, platformID, typ, resourceID string, resource any) (ports.Event, error) {
	e, err := New(s.ids, platformID, typ, resourceID, resource, s.clock.Now())
	if err != nil {
		return ports.Event{}, err
	}
	if err := tx.Events().Append(ctx, e); err != nil {
		return ports.Event{}, fmt.Errorf("record %s event: %w", typ, err)
	}
	return e, nil
}
