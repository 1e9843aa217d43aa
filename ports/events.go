package ports

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Event is a state change a platform hears of by webhook, recorded in the
// same database transaction as the change (the outbox, the only one: the
// ledger keeps none of its own): for money changes inside the ledger's
// group-commit write (Records.Events; a transaction's status events are
// recorded by the store as the transaction is created or changes status,
// see TransactionEventType), for the rest in the unit of work
// (Tx.Events). Recording an event also queues its delivery (a job of kind
// EventDeliveryJob keyed by the event id) when its platform has a webhook
// endpoint, so an event is delivered if and only if its change committed.
type Event struct {
	ID         string // "Webhook:<uuid>": the envelope's id
	PlatformID string
	// Type is the reference's webhook type: OUTGOING_PAYMENT.COMPLETED,
	// CUSTOMER.KYC_APPROVED, TEST…
	Type       string
	ResourceID string
	// Resource is the changed resource as it was at the change: the JSON
	// of its port value (ports.Transaction, ports.Customer…), which the
	// sender renders as the API would (empty for TEST, and when Decoded
	// holds it).
	Resource json.RawMessage
	// Decoded is the resource's port value when the store read it decoded
	// (the PostgreSQL store's transaction and balance snapshots: a
	// Transaction, an InternalAccountBalance), so the sender renders it
	// without a JSON round trip (SnapshotOf); Resource is then empty. Nil
	// otherwise.
	Decoded   any
	CreatedAt time.Time
	// Seq is the order of recording, assigned by the store (rising with
	// each event it records): the events about one resource are delivered
	// in Seq order, which holds where CreatedAt ties (two changes in one
	// microsecond, one batch).
	Seq int64

	// Delivery state.
	Status        string // EventPending, EventDelivered, EventFailed
	Attempts      int
	LastAttemptAt *time.Time
	DeliveredAt   *time.Time
	// AttemptsBefore is how many of Attempts were made before the event
	// was last queued again (a redelivery, or an endpoint set after its
	// backlog waited): the retry schedule starts over after them.
	AttemptsBefore int
}

// ResourceKey is the key of an event's platform and resource
// (PendingHeads).
func ResourceKey(platformID, resourceID string) string { return platformID + "\n" + resourceID }

// Event delivery statuses.
const (
	EventPending   = "PENDING"
	EventDelivered = "DELIVERED"
	EventFailed    = "FAILED"
)

// EventDeliveryJob is the job kind that delivers events: one (keyed by the
// event id) or several of one platform (EventsDeliveryJob).
const EventDeliveryJob = "webhook.deliver"

// EventDeliveryJobFor is the delivery job of e, queued with it.
func EventDeliveryJobFor(e Event) Job { return EventDeliveryJobAt(e.PlatformID, e.ID, e.CreatedAt) }

// EventDeliveryJobAt is the delivery job of one event of a platform, due
// at runAt (a retry, a redelivery, an event handed on from a job of
// several): its payload is the platform id and the event id, a line each.
func EventDeliveryJobAt(platformID, eventID string, runAt time.Time) Job {
	return Job{ID: "Job:" + eventID, Kind: EventDeliveryJob, Key: eventID, Payload: []byte(platformID + "\n" + eventID), RunAt: runAt}
}

// EventDeliveryRefs reads the platform and event ids of a delivery job:
// one event (EventDeliveryJobFor), or several events of one platform in
// the order they were recorded (EventsDeliveryJob; the PostgreSQL store
// queues one such job per platform for the events one statement records,
// and for a backlog queued again, up to EventsPerDeliveryJob each).
func EventDeliveryRefs(j Job) (platformID string, eventIDs []string, err error) {
	parts := strings.Split(string(j.Payload), "\n")
	if len(parts) < 2 || parts[0] == "" || slices.Contains(parts[1:], "") {
		return "", nil, fmt.Errorf("webhook job %s: payload is not a platform id and event ids", j.ID)
	}
	return parts[0], parts[1:], nil
}

// EventsPerDeliveryJob bounds the events of one EventsDeliveryJob.
const EventsPerDeliveryJob = 8

// EventsDeliveryJob is one delivery job for events of one platform (at
// most EventsPerDeliveryJob), in the order they were recorded. Its events
// that are not delivered at its first attempt go on as jobs of their own
// (EventDeliveryJobFor), each on its own schedule.
func EventsDeliveryJob(id, platformID string, eventIDs []string, runAt time.Time) Job {
	return Job{ID: id, Kind: EventDeliveryJob, Payload: []byte(platformID + "\n" + strings.Join(eventIDs, "\n")), RunAt: runAt}
}

// EventAttempt is one delivery attempt of an event.
type EventAttempt struct {
	EventID    string
	At         time.Time
	StatusCode int // 0 when no answer came (timeout, refused connection)
	Latency    time.Duration
	Error      string
}

// AttemptRecord is an attempt to record, with the status it moves its
// event to.
type AttemptRecord struct {
	PlatformID string
	Attempt    EventAttempt
	Status     string
}

type EventFilter struct {
	PlatformID string // always set
	ResourceID string
	Type       string
	Status     string
}

// EventRepo is the outbox.
type EventRepo interface {
	// Append records e (Status EventPending) and, when its platform has a
	// webhook endpoint, queues its delivery job (without one the event
	// waits: setting an endpoint queues the backlog).
	Append(ctx context.Context, e Event) error
	Get(ctx context.Context, platformID, id string) (Event, error)
	// GetMany reads the events of ids (any platform's: the delivery
	// worker's batch read), in no order; unknown ids are left out.
	GetMany(ctx context.Context, ids []string) ([]Event, error)
	// List pages events by (CreatedAt, ID), oldest first.
	List(ctx context.Context, f EventFilter, page Page) (rows []Event, total int, err error)
	// RecordAttempts stores attempts, each moving its event to its status
	// (EventDelivered sets DeliveredAt), in one step; ErrNotFound when an
	// event is not its platform's.
	RecordAttempts(ctx context.Context, rs []AttemptRecord) error
	// EndDeliveries ends a delivery batch in one step, all or nothing:
	// records the attempts rs (as RecordAttempts), queues the jobs next
	// (one whose ID or Key is queued is skipped, as Enqueue) and removes
	// the jobs of done still queued (as CompleteAll). It works outside a
	// unit of work (Store.Read()) as in one, committed asynchronously
	// like RecordAttempts: a crash may forget it, and the events are then
	// sent again. ErrNotFound, and nothing written, when an event of rs
	// is not its platform's.
	EndDeliveries(ctx context.Context, rs []AttemptRecord, next []Job, done []string) error
	// Attempts are an event's attempts, oldest first.
	Attempts(ctx context.Context, platformID, eventID string) ([]EventAttempt, error)
	// PendingHeads is, for each platform and resource of es, the ids of
	// its first n pending events in the order of recording, keyed by
	// ResourceKey, in one read: what comes next for each resource. Its
	// cost follows n, not the resource's backlog.
	PendingHeads(ctx context.Context, es []Event, n int) (map[string][]string, error)
	// Requeue sets a delivered or failed event pending again, its retry
	// schedule from the start (AttemptsBefore = Attempts), and queues its
	// delivery job at runAt (redelivery).
	Requeue(ctx context.Context, platformID, id string, runAt time.Time) error
	// RequeuePending queues again, for runAt, the delivery of every
	// pending event of the platform (its backlog, once it has an
	// endpoint), each with its retry schedule from the start, and returns
	// how many. It is one step whatever the backlog's size.
	RequeuePending(ctx context.Context, platformID string, runAt time.Time) (int, error)
}

// BalanceUpdated is the webhook type of an internal account's balance
// change. The ledger stores record it themselves, in the group commit
// that moves the money: one per customer or platform internal account
// (an InternalAccounts row: never a system account) whose balance or
// total balance a batch changed, with the account as it is at the end of
// the batch (InternalAccountBalance), so a burst of postings on one
// account costs one event per batch.
const BalanceUpdated = "INTERNAL_ACCOUNT.BALANCE_UPDATED"

// TransactionEventType is the webhook type a transaction of type txType
// (INCOMING or OUTGOING) entering status records, or "" for none (a
// CREATED transaction; statuses the reference has no type for). The
// PostgreSQL store's triggers have the same table (transaction_event_type,
// and transaction_event_types for TransactionEventTypes, migrations 0028
// and 0039); tests in the PostgreSQL adapter check both against these.
func TransactionEventType(txType, status string) string {
	prefix := transactionEventPrefix(txType)
	switch status {
	case "PENDING", "COMPLETED", "FAILED":
		return prefix + status
	case "REJECTED":
		return prefix + "FAILED"
	case "REFUNDED":
		return prefix + "REFUND_COMPLETED"
	case "PENDING_AUTHORIZATION", "PROCESSING", "EXPIRED":
		if txType == "OUTGOING" {
			return prefix + status
		}
	}
	return ""
}

// TransactionRefundEventType is the webhook type a transaction's refund
// entering refundStatus (Refund.Status: PENDING, COMPLETED, FAILED)
// records, or "" for none: the reference keeps a refund's progress in
// refund.status, not in the transaction's status.
func TransactionRefundEventType(txType, refundStatus string) string {
	switch refundStatus {
	case "PENDING", "COMPLETED", "FAILED":
		return transactionEventPrefix(txType) + "REFUND_" + refundStatus
	}
	return ""
}

func transactionEventPrefix(txType string) string {
	if txType == "INCOMING" {
		return "INCOMING_PAYMENT."
	}
	return "OUTGOING_PAYMENT."
}

// TransactionEventTypes are the webhook types, in order, that a
// transaction of type txType records when its status moves from
// prevStatus to status and its refund's status from prevRefund to refund
// (prevStatus and prevRefund "" for a new transaction; refund "" for
// none): the status's type when the status changed, then the refund's
// when the refund's status changed, unless it is the same type (a
// REFUNDED transaction whose refund COMPLETED records one
// REFUND_COMPLETED). Both stores record them; the second one a
// microsecond after the first, so the two keep their order.
func TransactionEventTypes(txType, prevStatus, status, prevRefund, refund string) []string {
	var out []string
	if status != prevStatus {
		if typ := TransactionEventType(txType, status); typ != "" {
			out = append(out, typ)
		}
	}
	if refund != prevRefund {
		if typ := TransactionRefundEventType(txType, refund); typ != "" && !slices.Contains(out, typ) {
			out = append(out, typ)
		}
	}
	return out
}

// SnapshotOf is e's resource as it was at the change, as its port value T
// (Transaction, Customer, InternalAccountBalance…): Decoded when the store
// read it decoded as a T, Resource decoded otherwise.
func SnapshotOf[T any](e Event) (T, error) {
	if v, ok := e.Decoded.(T); ok {
		return v, nil
	}
	var v T
	if err := json.Unmarshal(e.Resource, &v); err != nil {
		return v, fmt.Errorf("event %s: snapshot of %s: %w", e.ID, e.ResourceID, err)
	}
	return v, nil
}

// NewEvent is the event id of a change of type typ to the resource
// resourceID of platformID at at: resource is its port value after the
// change (its JSON is the snapshot), nil for none.
func NewEvent(id, platformID, typ, resourceID string, resource any, at time.Time) (Event, error) {
	e := Event{ID: id, PlatformID: platformID, Type: typ, ResourceID: resourceID, CreatedAt: at}
	if resource != nil {
		b, err := json.Marshal(resource)
		if err != nil {
			return Event{}, fmt.Errorf("event %s of %s: %w", typ, resourceID, err)
		}
		e.Resource = b
	}
	return e, nil
}
