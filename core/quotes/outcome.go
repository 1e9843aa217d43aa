package quotes

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/corridorpay/corridor/core/agents"
	"github.com/corridorpay/corridor/core/jobs"
	"github.com/corridorpay/corridor/core/posting"
	"github.com/corridorpay/corridor/core/transactions"
	"github.com/corridorpay/corridor/core/transfers"
	"github.com/corridorpay/corridor/ledger"
	"github.com/corridorpay/corridor/ports"
)

// jobPayload is what quote jobs carry. Submit and check jobs carry the
// payout's rail request (snapshotted at execution).
type jobPayload struct {
	PlatformID string            `json:"platformId"`
	QuoteID    string            `json:"quoteId"`
	Request    ports.RailRequest `json:"request,omitzero"`
	// ExternalRef is the rail's reference of the submission (checks only).
	ExternalRef string `json:"externalRef,omitempty"`
	// Check numbers the status checks (1 for the first).
	Check int `json:"check,omitempty"`
}

func jobPayloadOf(q ports.Quote) []byte {
	b, err := json.Marshal(jobPayload{PlatformID: q.PlatformID, QuoteID: q.ID})
	if err != nil {
		panic("quotes: job payload: " + err.Error()) // strings always marshal
	}
	return b
}

// Register installs the quote job handlers on a runner.
func (s *Service) Register(r *jobs.Runner) {
	jobs.HandleJSON(r, KindSubmit, s.handleSubmit)
	jobs.HandleJSON(r, KindCheck, s.handleCheck)
	jobs.HandleJSON(r, KindExpire, s.handleExpire)
	jobs.HandleJSON(r, KindRefund, s.handleRefund)
}

// handleExpire runs at a quote's expiresAt: a quote still PENDING expires
// with its transaction (and, with the ledger's records, this job's
// removal).
func (s *Service) handleExpire(ctx context.Context, j ports.Job, p jobPayload) error {
	q, err := s.store.Read().Quotes().Get(ctx, p.PlatformID, p.QuoteID)
	if err != nil {
		return fmt.Errorf("expire %s: %w", p.QuoteID, err)
	}
	now := s.clock.Now().UTC()
	if q.Status != StatusPending || now.Before(q.ExpiresAt) {
		return nil
	}
	recorded, err := s.expire(ctx, q, now, j.ID)
	if err != nil {
		return err
	}
	if recorded {
		jobs.Completed(ctx)
	}
	return nil
}

// handleSubmit submits an executed quote's payout and applies the first
// answer. A quote no longer PROCESSING is left alone.
func (s *Service) handleSubmit(ctx context.Context, j ports.Job, p jobPayload) error {
	q, err := s.store.Read().Quotes().Get(ctx, p.PlatformID, p.QuoteID)
	if err != nil {
		return fmt.Errorf("submit %s: %w", p.QuoteID, err)
	}
	if q.Status != StatusProcessing {
		return nil
	}
	rail, err := s.rail(p.Request)
	if err != nil {
		return err
	}
	res, err := rail.Submit(ctx, p.Request)
	if err != nil {
		return fmt.Errorf("submit %s to %s: %w", q.ID, p.Request.Rail, err)
	}
	return s.apply(ctx, j, q, p, res)
}

// handleCheck asks the rail where a payout stands and applies the answer.
// A COMPLETED quote is still checked: its rail may report it returned.
func (s *Service) handleCheck(ctx context.Context, j ports.Job, p jobPayload) error {
	q, err := s.store.Read().Quotes().Get(ctx, p.PlatformID, p.QuoteID)
	if err != nil {
		return fmt.Errorf("check %s: %w", p.QuoteID, err)
	}
	if q.Status != StatusProcessing && q.Status != StatusCompleted {
		return nil
	}
	rail, err := s.rail(p.Request)
	if err != nil {
		return err
	}
	res, err := rail.Status(ctx, p.Request, p.ExternalRef)
	if err != nil {
		return fmt.Errorf("check %s on %s: %w", q.ID, p.Request.Rail, err)
	}
	return s.apply(ctx, j, q, p, res)
}

func (s *Service) rail(req ports.RailRequest) (ports.Rail, error) {
	r, ok := s.rails.Rail(req.Rail, req.Currency)
	if !ok {
		return nil, fmt.Errorf("quote payout %s: rail %s/%s is not configured", req.Ref, req.Rail, req.Currency)
	}
	return r, nil
}

// apply turns a rail answer to job j into ledger entries and statuses.
// Every step is idempotent (entry ids from the quote id, conditional
// status changes), so a job that runs twice changes nothing the second
// time.
func (s *Service) apply(ctx context.Context, j ports.Job, q ports.Quote, p jobPayload, res ports.RailResult) error {
	switch res.State {
	case ports.RailPending:
		return s.schedule(ctx, j, q, p, res, true)
	case ports.RailSucceeded:
		return s.succeed(ctx, j, q, p, res)
	case ports.RailFailed:
		if posted, err := s.void(ctx, q); err != nil || posted {
			return s.paidAnyway(ctx, q, res, err)
		}
		return s.finish(ctx, q, outcome{quote: StatusFailed, txn: transactions.StatusFailed,
			reason: transactions.OutgoingFailureReason(res.FailureReason),
			refund: transactions.RefundCompleted, refundReason: transactions.RefundTransactionFailed, detail: res.FailureDetail})
	case ports.RailRejected:
		// Refused by the receiving institution: nothing was delivered and
		// the funds are back (the spec's REJECTED, without failureReason).
		if posted, err := s.void(ctx, q); err != nil || posted {
			return s.paidAnyway(ctx, q, res, err)
		}
		return s.finish(ctx, q, outcome{quote: StatusFailed, txn: transactions.StatusRejected,
			refund: transactions.RefundCompleted, refundReason: transactions.RefundTransactionFailed, detail: res.FailureDetail})
	case ports.RailCancelled:
		if posted, err := s.void(ctx, q); err != nil || posted {
			return s.paidAnyway(ctx, q, res, err)
		}
		return s.finish(ctx, q, outcome{quote: StatusFailed, txn: transactions.StatusRefunded,
			refund: transactions.RefundCompleted, refundReason: transactions.RefundUserCancellation, detail: res.FailureDetail})
	case ports.RailReturned:
		if err := s.settle(ctx, q); err != nil {
			return err
		}
		returned := outcome{quote: StatusFailed, txn: transactions.StatusFailed,
			reason: transactions.OutgoingFailureReason(res.FailureReason), afterCompleted: true,
			refund: transactions.RefundCompleted, refundReason: transactions.RefundTransactionFailed, detail: res.FailureDetail}
		if res.CheckAt.After(s.clock.Now()) {
			// The funds are on their way back: the refund is PENDING
			// until they arrive (handleRefund, queued with the outcome).
			back := refundJob(q, res.CheckAt)
			returned.refund, returned.then = transactions.RefundPending, &back
			return s.finish(ctx, q, returned)
		}
		if err := s.refundBack(ctx, q); err != nil {
			return err
		}
		return s.finish(ctx, q, returned)
	case ports.RailFailedUnreturned:
		// The funds left with the payout and did not come back: they stay
		// in the rail's settlement account until resolved out of band.
		if err := s.settle(ctx, q); err != nil {
			return err
		}
		s.log.ErrorContext(ctx, "quote payout failed and its refund failed: funds held at the rail",
			"quote", q.ID, "rail", q.PaymentRail, "amount", q.TotalReceivingAmount, "currency", q.ReceivingCurrency)
		return s.finish(ctx, q, outcome{quote: StatusFailed, txn: transactions.StatusFailed,
			reason: transactions.OutgoingFailureReason(res.FailureReason),
			refund: transactions.RefundFailed, refundReason: transactions.RefundTransactionFailed, detail: res.FailureDetail})
	}
	return fmt.Errorf("quote %s: rail %s answered unknown state %q", q.ID, p.Request.Rail, res.State)
}

// succeed settles a paid-out quote: the entry posting every hold carries
// the quote's and the transaction's COMPLETED, the check at the end of the
// rail's return window (when it has one) and the removal of job j, so
// they are recorded together or not at all.
func (s *Service) succeed(ctx context.Context, j ports.Job, q ports.Quote, p jobPayload, res ports.RailResult) error {
	now := s.clock.Now().UTC()
	txn := transactions.StatusChange(q.PlatformID, q.TransactionID, transactions.StatusCompleted, now)
	txn.SettledAt = &now
	recs := ports.Records{
		QuoteChanges:  []ports.QuoteStatusChange{StatusChange(q.PlatformID, q.ID, StatusCompleted, now)},
		StatusChanges: []ports.TransactionStatusChange{txn},
	}
	if !res.CheckAt.IsZero() {
		// The rail's return window: ask again when it closes.
		check, err := s.nextCheck(q, p, res, false, now)
		if err != nil {
			return err
		}
		recs.Jobs = []ports.Job{check}
	}
	_, err := s.post(ctx, resolveEntry(q, settlePrefix, ledger.PostPending), posting.WithJob(recs, j))
	switch ledger.CodeOf(err) {
	case ledger.CodeOK:
		if err != nil {
			return fmt.Errorf("quote %s: settle: %w", q.ID, err)
		}
		jobs.Completed(ctx)
		s.log.InfoContext(ctx, "quote payout finished", "quote", q.ID, "status", StatusCompleted,
			"transaction", transactions.StatusCompleted)
		return nil
	case ledger.CodeExists:
		// Settled already, by an earlier run or another answer of the
		// rail: the statuses move (once) without the entry's records.
	default:
		return fmt.Errorf("quote %s: settle: %w", q.ID, err)
	}
	if err := s.finish(ctx, q, outcome{quote: StatusCompleted, txn: transactions.StatusCompleted}); err != nil {
		return err
	}
	if !res.CheckAt.IsZero() {
		return s.schedule(ctx, ports.Job{}, q, p, res, false)
	}
	return nil
}

// nextCheck is the next status check of a payout, due at res.CheckAt
// (pending: not sooner than the retry pause after the first check).
func (s *Service) nextCheck(q ports.Quote, p jobPayload, res ports.RailResult, pending bool, now time.Time) (ports.Job, error) {
	next := p
	next.Check++
	if res.ExternalRef != "" {
		next.ExternalRef = res.ExternalRef
	}
	var pause time.Duration // a return window's end needs no retry pause
	if pending {
		pause = s.retry
	}
	runAt := transfers.CheckAt(res.CheckAt, now, next.Check, pause)
	payload, err := json.Marshal(next)
	if err != nil {
		return ports.Job{}, fmt.Errorf("quote %s: check payload: %w", q.ID, err)
	}
	return ports.Job{Kind: KindCheck, Key: KindCheck + ":" + q.ID + ":" + strconv.Itoa(next.Check),
		Payload: payload, RunAt: runAt}, nil
}

// schedule enqueues the next status check, with the removal of job j (when
// set), in the ledger's group commit.
func (s *Service) schedule(ctx context.Context, j ports.Job, q ports.Quote, p jobPayload, res ports.RailResult, pending bool) error {
	check, err := s.nextCheck(q, p, res, pending, s.clock.Now().UTC())
	if err != nil {
		return err
	}
	if err := posting.Finish(ctx, s.ledger, j, ports.Records{Jobs: []ports.Job{check}}); err != nil {
		return fmt.Errorf("quote %s: schedule check: %w", q.ID, err)
	}
	return nil
}

// settle posts every hold (idempotent), without records: the failure
// answers that settle (a return, a failed refund) finish in a unit of
// work.
func (s *Service) settle(ctx context.Context, q ports.Quote) error {
	_, err := s.post(ctx, resolveEntry(q, settlePrefix, ledger.PostPending), ports.Records{})
	switch ledger.CodeOf(err) {
	case ledger.CodeOK:
		if err != nil {
			return fmt.Errorf("quote %s: settle: %w", q.ID, err)
		}
	case ledger.CodeExists:
	default:
		return fmt.Errorf("quote %s: settle: %w", q.ID, err)
	}
	return nil
}

// void releases every hold (idempotent); posted reports holds an earlier
// answer of the rail already settled.
func (s *Service) void(ctx context.Context, q ports.Quote) (posted bool, err error) {
	_, err = s.post(ctx, resolveEntry(q, voidPrefix, ledger.VoidPending), ports.Records{})
	switch ledger.CodeOf(err) {
	case ledger.CodeOK:
		if err != nil {
			return false, fmt.Errorf("quote %s: void: %w", q.ID, err)
		}
	case ledger.CodeExists, ledger.CodePendingAlreadyVoided:
	case ledger.CodePendingAlreadyPosted:
		return true, nil
	default:
		return false, fmt.Errorf("quote %s: void: %w", q.ID, err)
	}
	return false, nil
}

// paidAnyway handles a failure answer for a payout the ledger already
// settled (an earlier answer said it succeeded): the ledger is the truth.
func (s *Service) paidAnyway(ctx context.Context, q ports.Quote, res ports.RailResult, err error) error {
	if err != nil {
		return err
	}
	s.log.ErrorContext(ctx, "rail reported a settled quote payout as failed", "quote", q.ID,
		"rail", q.PaymentRail, "state", res.State, "detail", res.FailureDetail)
	return s.finish(ctx, q, outcome{quote: StatusCompleted, txn: transactions.StatusCompleted})
}

// refundJob completes, at at, the refund of q's returned payout.
func refundJob(q ports.Quote, at time.Time) ports.Job {
	return ports.Job{ID: "Job:" + KindRefund + ":" + q.ID, Kind: KindRefund, Key: KindRefund + ":" + q.ID,
		Payload: jobPayloadOf(q), RunAt: at}
}

// refundBack posts the return of q's settled payout (its legs flow back,
// the source gets its full payment back); idempotent.
func (s *Service) refundBack(ctx context.Context, q ports.Quote) error {
	rev, err := returnEntry(q)
	if err != nil {
		return fmt.Errorf("quote %s: return entry: %w", q.ID, err)
	}
	_, err = s.ledger.Post(ctx, rev)
	switch ledger.CodeOf(err) {
	case ledger.CodeOK:
		if err != nil {
			return fmt.Errorf("quote %s: return: %w", q.ID, err)
		}
	case ledger.CodeExists, ledger.CodeAlreadyReversed:
		// Refunded by an earlier run.
	default:
		return fmt.Errorf("quote %s: return: %w", q.ID, err)
	}
	return nil
}

// handleRefund runs when a returned payout's funds are back: the return
// is posted, then the transaction's PENDING refund becomes COMPLETED
// (once; OUTGOING_PAYMENT.REFUND_COMPLETED follows from the change). A
// crash between the two is finished by the job's next run.
func (s *Service) handleRefund(ctx context.Context, _ ports.Job, p jobPayload) error {
	q, err := s.store.Read().Quotes().Get(ctx, p.PlatformID, p.QuoteID)
	if err != nil {
		return fmt.Errorf("refund %s: %w", p.QuoteID, err)
	}
	if err := s.refundBack(ctx, q); err != nil {
		return err
	}
	now := s.clock.Now().UTC()
	return s.store.InTx(ctx, func(tx ports.Tx) error {
		t, err := tx.Transactions().GetForUpdate(ctx, q.PlatformID, q.TransactionID)
		if err != nil {
			return fmt.Errorf("refund %s: transaction %s: %w", q.ID, q.TransactionID, err)
		}
		r := t.Details.Refund
		if r == nil || r.Status != transactions.RefundPending {
			return nil
		}
		r.Status, r.SettledAt = transactions.RefundCompleted, &now
		t.UpdatedAt = now
		return tx.Transactions().Update(ctx, t)
	})
}

// outcome is where a payout ends.
type outcome struct {
	quote  Status
	txn    transactions.Status
	reason string
	// refund, when set, records the refund's status and reason.
	refund, refundReason string
	// afterCompleted allows the move from COMPLETED (a returned payout).
	afterCompleted bool
	detail         string
	// then, when set, is queued with the outcome (in its unit of work).
	then *ports.Job
}

// finish moves the quote and its transaction to the outcome, once, in a
// unit of work: the failure outcomes write the transaction's refund with
// its status, which ledger records (ports.TransactionStatusChange) do not
// carry.
func (s *Service) finish(ctx context.Context, q ports.Quote, o outcome) error {
	now := s.clock.Now().UTC()
	moved := false
	err := s.store.InTx(ctx, func(tx ports.Tx) error {
		moved = false
		cur, err := tx.Quotes().GetForUpdate(ctx, q.PlatformID, q.ID)
		if err != nil {
			return fmt.Errorf("quote %s: %w", q.ID, err)
		}
		switch {
		case cur.Status == StatusProcessing:
		case cur.Status == StatusCompleted && o.afterCompleted:
		default:
			return nil
		}
		t, err := tx.Transactions().GetForUpdate(ctx, q.PlatformID, q.TransactionID)
		if err != nil {
			return fmt.Errorf("quote %s: transaction %s: %w", q.ID, q.TransactionID, err)
		}
		if err := Move(&cur, o.quote, now); err != nil {
			return err
		}
		if err := transactions.Move(&t, o.txn, now); err != nil {
			return err
		}
		t.FailureReason = o.reason
		if o.txn == transactions.StatusCompleted {
			t.SettledAt = &now
		}
		if o.refund != "" {
			r := &ports.Refund{Reference: transactions.RefundReference(t), InitiatedAt: now, Status: o.refund, Reason: o.refundReason}
			if o.refund == transactions.RefundCompleted {
				r.SettledAt = &now
			}
			t.Details.Refund = r
		}
		var then []ports.Job
		if o.then != nil {
			then = append(then, *o.then)
		}
		// An agent's usage counts what left its customer's account: a
		// payment whose funds come back gives it back; one whose refund
		// failed (the funds held at the rail) does not.
		if transactions.NotPaid(o.txn) && o.refund != transactions.RefundFailed {
			if j, ok := agents.GiveBackJob(t.PlatformID, t.AgentID, t.ID, now); ok {
				then = append(then, j)
			}
		}
		for _, j := range then {
			if err := tx.Jobs().Enqueue(ctx, j); err != nil {
				return fmt.Errorf("quote %s: queue %s: %w", q.ID, j.Kind, err)
			}
		}
		moved = true
		return s.save(ctx, tx, cur, t)
	})
	if err == nil && moved {
		s.log.InfoContext(ctx, "quote payout finished", "quote", q.ID, "status", o.quote,
			"transaction", o.txn, "reason", o.reason, "detail", o.detail)
	}
	return err
}
