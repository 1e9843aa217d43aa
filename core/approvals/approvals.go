// Package approvals decides incoming payments on approval-capable rails
// (UMA receives, and deposits: quotes crediting an internal account, whose
// quote follows the decision through a Follower): the platform approves
// or rejects each one, by its answer
// to the INCOMING_PAYMENT.PENDING webhook or, after a 202, by POST
// /transactions/{id}/approve or /reject within Window.
//
// Money. The payment's credit is a ledger hold (pending transfers) from
// the moment it arrives: balances never show it. Approval posts the holds
// (the receiver is credited); rejection, a timeout or a webhook error voids
// them. The ledger decides races: a hold is posted or voided once, and the
// transaction's status change is written with that entry only
// (LedgerStore.PostWith), so the status always tells what the money did.
//
// A platform with no webhook endpoint when the payment arrives cannot be
// asked: the payment is approved at once (core/uma credits it COMPLETED,
// the reference's informational default).
package approvals

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/corridorpay/corridor/core/events"
	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/core/jobs"
	"github.com/corridorpay/corridor/core/posting"
	"github.com/corridorpay/corridor/core/transactions"
	"github.com/corridorpay/corridor/ledger"
	"github.com/corridorpay/corridor/ports"
)

// Window is how long the platform has to decide, counted from the
// payment's arrival (the INCOMING_PAYMENT.PENDING event's creation): the
// reference's 5 seconds.
const Window = 5 * time.Second

// KindTimeout is the job that fails a payment still undecided at the end
// of its window.
const KindTimeout = "approval.timeout"

// Error codes.
const (
	CodeNotPending = "TRANSACTION_NOT_PENDING_PLATFORM_APPROVAL"
	CodeNotFound   = "TRANSACTION_NOT_FOUND"
)

// Ledger transfer codes and entry id prefixes (the rest is the
// transaction id).
const (
	CodeApproved = "approval_credit"
	CodeReleased = "approval_release"

	approvePrefix = "approval-credit:"
	releasePrefix = "approval-release:"
)

// Hold turns the credit e of the incoming payment t (created with it) into
// holds waiting for the platform: t is PENDING with its approval, e's
// single transfers are pending transfers. It returns the timeout job to
// queue with them.
func Hold(t *ports.Transaction, e *ledger.Entry, requested []ports.CounterpartyField, now time.Time) ports.Job {
	var holds []string
	for i := range e.Transfers {
		if e.Transfers[i].Kind == ledger.Single {
			e.Transfers[i].Kind = ledger.Pending
			holds = append(holds, e.Transfers[i].ID)
		}
	}
	a, job := Await(t.PlatformID, t.ID, holds, requested, now)
	t.Status = transactions.StatusPending
	t.SettledAt = nil
	t.Details.Approval = a
	return job
}

// Await is the approval of the incoming payment txID of platformID whose
// credit is the ledger holds holdIDs, placed at now: the window starts
// now. It returns the approval to record with the payment's PENDING (its
// details) and the timeout job to queue with them.
func Await(platformID, txID string, holdIDs []string, requested []ports.CounterpartyField, now time.Time) (*ports.Approval, ports.Job) {
	a := &ports.Approval{Deadline: now.Add(Window), HoldIDs: holdIDs, RequestedFields: requested}
	return a, timeoutJob(platformID, txID, a.Deadline)
}

func timeoutJob(platformID, txID string, at time.Time) ports.Job {
	return ports.Job{ID: "Job:" + KindTimeout + ":" + txID, Kind: KindTimeout, Key: KindTimeout + ":" + txID,
		Payload: []byte(platformID + "\n" + txID), RunAt: at}
}

// Endpoints tells whether a platform has a webhook endpoint.
type Endpoints interface {
	WebhookEndpoint(ctx context.Context, platformID string) (string, error)
}

// Follower adds to a decision's records what follows from it beyond the
// payment's own status and refund: for a payment made through a quote
// (core/quotes), the quote's status. They are written with the decision's
// ledger entry, so a crash never leaves one without the other.
type Follower interface {
	FollowDecision(t ports.Transaction, approved bool, change *ports.TransactionStatusChange, recs *ports.Records)
}

// Service decides payments.
type Service struct {
	store     ports.Store
	ledger    ports.LedgerStore
	clock     ports.Clock
	endpoints Endpoints
	follower  Follower
}

// SetFollower makes every decision also write what f adds to it.
func (s *Service) SetFollower(f Follower) { s.follower = f }

// New returns a Service.
func New(store ports.Store, led ports.LedgerStore, clock ports.Clock, endpoints Endpoints) *Service {
	return &Service{store: store, ledger: led, clock: clock, endpoints: endpoints}
}

// Asks reports whether a payment arriving now for platformID waits for
// its decision (the platform has a webhook endpoint to ask).
func (s *Service) Asks(ctx context.Context, platformID string) (bool, error) {
	if s == nil || s.endpoints == nil {
		return false, nil
	}
	url, err := s.endpoints.WebhookEndpoint(ctx, platformID)
	if err != nil {
		return false, fmt.Errorf("approval: endpoint of %s: %w", platformID, err)
	}
	return url != "", nil
}

// Register installs the timeout job's handler.
func (s *Service) Register(r *jobs.Runner) { r.Handle(KindTimeout, s.HandleTimeout) }

// decision is where a payment goes.
type decision struct {
	status transactions.Status
	reason string
}

var (
	approved   = decision{status: transactions.StatusCompleted}
	rejected   = decision{status: transactions.StatusRejected}
	missing    = decision{status: transactions.StatusFailed, reason: transactions.ReasonMissingPayeeData}
	timedOut   = decision{status: transactions.StatusFailed, reason: transactions.ReasonApprovalTimedOut}
	webhookErr = decision{status: transactions.StatusFailed, reason: transactions.ReasonApprovalWebhookError}
)

// Reply applies the endpoint's answer to the INCOMING_PAYMENT.PENDING
// event e (events.ApprovalReplies): 200 approves when its
// receiverCustomerInfo holds every mandatory requested field (else the
// payment fails with MISSING_MANDATORY_PAYEE_DATA), 403 rejects,
// 422 (data asked for) fails the payment with MISSING_MANDATORY_PAYEE_DATA,
// 202 defers to approve/reject within the window, anything else (no
// answer included) fails it with PAYMENT_APPROVAL_WEBHOOK_ERROR. An answer
// after the window is a timeout. decided is false when e's payment takes
// no approval (a bank-rail payment: the answer only acknowledges).
func (s *Service) Reply(ctx context.Context, e ports.Event, a events.Answer) (decided bool, err error) {
	t, err := s.store.Read().Transactions().Get(ctx, e.PlatformID, e.ResourceID)
	if errors.Is(err, ports.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("approval reply for %s: %w", e.ResourceID, err)
	}
	if t.Details.Approval == nil {
		return false, nil
	}
	if !transactions.AwaitsApproval(t) {
		return true, nil // decided already: the answer changes nothing
	}
	var d decision
	switch a.StatusCode {
	case 200:
		d = approved
		if !hasFields(a.Body, t.Details.Approval.RequestedFields) {
			// Not an approval the sender can take: the receiver data
			// it made mandatory is missing.
			d = missing
		}
	case 202:
		return true, nil // the timeout job waits at the deadline
	case 403:
		d = rejected
	case 422:
		d = missing
	default:
		d = webhookErr
	}
	_, err = s.decide(ctx, t, d)
	return true, err
}

// hasFields reports whether body's receiverCustomerInfo holds every
// mandatory field of requested (non-empty).
func hasFields(body []byte, requested []ports.CounterpartyField) bool {
	need := 0
	for _, f := range requested {
		if f.Mandatory {
			need++
		}
	}
	if need == 0 {
		return true
	}
	var reply struct {
		ReceiverCustomerInfo map[string]any `json:"receiverCustomerInfo"`
	}
	if json.Unmarshal(body, &reply) != nil {
		return false
	}
	return infoHolds(reply.ReceiverCustomerInfo, requested)
}

// infoHolds reports whether info gives every mandatory field of requested
// as text that is not blank (a number, an object, true or "  " tells the
// sender nothing).
func infoHolds(info map[string]any, requested []ports.CounterpartyField) bool {
	for _, f := range requested {
		if !f.Mandatory {
			continue
		}
		v, ok := info[f.Name].(string)
		if !ok || strings.TrimSpace(v) == "" {
			return false
		}
	}
	return true
}

// Approve approves a payment the platform deferred (POST …/approve):
// info must hold the mandatory requested receiver fields.
func (s *Service) Approve(ctx context.Context, platformID, id string, info map[string]any) (ports.Transaction, error) {
	t, err := s.pending(ctx, platformID, id)
	if err != nil {
		return t, err
	}
	var missingFields []string
	for _, f := range t.Details.Approval.RequestedFields {
		if f.Mandatory && !infoHolds(info, []ports.CounterpartyField{f}) {
			missingFields = append(missingFields, f.Name)
		}
	}
	if len(missingFields) > 0 {
		return t, fault.Invalid("receiverCustomerInfo", "must hold "+strings.Join(missingFields, ", ")+" as text that is not blank")
	}
	return s.decideOr409(ctx, t, approved)
}

// Reject rejects a payment the platform deferred (POST …/reject).
func (s *Service) Reject(ctx context.Context, platformID, id string) (ports.Transaction, error) {
	t, err := s.pending(ctx, platformID, id)
	if err != nil {
		return t, err
	}
	return s.decideOr409(ctx, t, rejected)
}

func notPending(id string) error {
	return fault.Conflict(CodeNotPending, "transaction "+id+" is not pending platform approval")
}

// pending reads a payment awaiting approval; past its deadline it is timed
// out here (the timeout job may not have run yet) and the answer is 409.
func (s *Service) pending(ctx context.Context, platformID, id string) (ports.Transaction, error) {
	t, err := s.store.Read().Transactions().Get(ctx, platformID, id)
	if errors.Is(err, ports.ErrNotFound) {
		return t, fault.NotFound(CodeNotFound, "transaction "+id+" not found")
	}
	if err != nil {
		return t, fmt.Errorf("approval of %s: %w", id, err)
	}
	if !transactions.AwaitsApproval(t) {
		return t, notPending(id)
	}
	if !s.clock.Now().Before(t.Details.Approval.Deadline) {
		if _, err := s.decide(ctx, t, timedOut); err != nil {
			return t, err
		}
		return t, notPending(id)
	}
	return t, nil
}

func (s *Service) decideOr409(ctx context.Context, t ports.Transaction, d decision) (ports.Transaction, error) {
	ok, err := s.decide(ctx, t, d)
	if err != nil {
		return t, err
	}
	if !ok {
		return t, notPending(t.ID)
	}
	return s.store.Read().Transactions().Get(ctx, t.PlatformID, t.ID)
}

// HandleTimeout runs an approval.timeout job: a payment still undecided
// at its deadline fails with PAYMENT_APPROVAL_TIMED_OUT (its holds voided).
// Idempotent: a decided payment is left as it is.
func (s *Service) HandleTimeout(ctx context.Context, j ports.Job) error {
	platformID, id, ok := strings.Cut(string(j.Payload), "\n")
	if !ok {
		return fmt.Errorf("approval job %s: payload is not platform and transaction id", j.ID)
	}
	t, err := s.store.Read().Transactions().Get(ctx, platformID, id)
	if errors.Is(err, ports.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("approval timeout of %s: %w", id, err)
	}
	if !transactions.AwaitsApproval(t) {
		return nil
	}
	if now := s.clock.Now(); now.Before(t.Details.Approval.Deadline) {
		return jobs.RetryAt(t.Details.Approval.Deadline, fmt.Errorf("approval of %s: window open until %s", id, t.Details.Approval.Deadline))
	}
	decided, err := s.decide(ctx, t, timedOut)
	if decided {
		jobs.Completed(ctx) // removed with the decision's entry
	}
	return err
}

// decide posts (approved) or voids (otherwise) t's holds with its status
// change and the removal of its timeout job. ok is false when the holds
// were settled already (another decision won).
func (s *Service) decide(ctx context.Context, t ports.Transaction, d decision) (ok bool, err error) {
	now := s.clock.Now().UTC()
	c := transactions.StatusChange(t.PlatformID, t.ID, d.status, now)
	c.FailureReason = d.reason
	kind, prefix, code := ledger.VoidPending, releasePrefix, CodeReleased
	if d == approved {
		kind, prefix, code = ledger.PostPending, approvePrefix, CodeApproved
		c.SettledAt = &now
	} else {
		// The held funds go back to the sender as the holds are voided:
		// the refund is complete with the decision.
		reason := transactions.RefundTransactionFailed
		if d == timedOut {
			reason = transactions.RefundTimeout
		}
		c.Refund = &ports.Refund{Reference: transactions.RefundReference(t), InitiatedAt: now, SettledAt: &now,
			Status: transactions.RefundCompleted, Reason: reason}
	}
	e := ledger.Entry{ID: prefix + t.ID, Ref: t.ID}
	for i, h := range t.Details.Approval.HoldIDs {
		e.Transfers = append(e.Transfers, ledger.Transfer{ID: fmt.Sprintf("%s%s/%d", prefix, t.ID, i+1),
			Kind: kind, PendingID: h, Code: code})
	}
	recs := ports.Records{CompletedJobs: []string{timeoutJob(t.PlatformID, t.ID, time.Time{}).ID}}
	if s.follower != nil {
		s.follower.FollowDecision(t, d == approved, &c, &recs)
	}
	recs.StatusChanges = append(recs.StatusChanges, c)
	_, err = posting.Post(ctx, s.ledger, e, recs)
	switch ledger.CodeOf(err) {
	case ledger.CodeOK:
		if err != nil {
			return false, fmt.Errorf("approval of %s: %w", t.ID, err)
		}
		return true, nil
	case ledger.CodeExists, ledger.CodeExistsWithDifferentFields, ledger.CodePendingAlreadyPosted, ledger.CodePendingAlreadyVoided,
		ledger.CodePendingExpired:
		return false, nil
	}
	return false, fmt.Errorf("approval of %s: %w", t.ID, err)
}
