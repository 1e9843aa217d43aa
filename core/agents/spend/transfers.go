package spend

import (
	"context"
	"fmt"

	"github.com/corridorpay/corridor/core/agents"
	"github.com/corridorpay/corridor/core/agents/policy"
	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/core/platforms"
	"github.com/corridorpay/corridor/core/transfers"
	"github.com/corridorpay/corridor/ports"
)

// TransferOut is POST /agents/me/transfer-out: the TRANSFER_OUT action of
// a payout from one of the customer's internal accounts to one of its
// external accounts, in the accounts' currency (converted to the policy
// currency at the current rate).
func (s *Service) TransferOut(ctx context.Context, a ports.Agent, r transfers.OutRequest) (ports.AgentAction, error) {
	if err := checkTransfer(r.SourceAccountID, "InternalAccount:", r.DestinationAccountID, "ExternalAccount:", r.Amount); err != nil {
		return ports.AgentAction{}, err
	}
	src, err := s.ownInternal(ctx, a, "source.accountId", r.SourceAccountID)
	if err != nil {
		return ports.AgentAction{}, err
	}
	if err := transfers.CheckPayoutSource(src, "source.accountId"); err != nil {
		return ports.AgentAction{}, err
	}
	if _, err := s.ownExternal(ctx, a, "destination.accountId", r.DestinationAccountID); err != nil {
		return ports.AgentAction{}, err
	}
	// The platform's range for the currency, now rather than when an
	// approval would run the transfer.
	setting, err := platforms.ReadSetting(ctx, s.store.Read(), a.PlatformID, src.Currency)
	if err != nil {
		return ports.AgentAction{}, fmt.Errorf("agent %s: %w", a.ID, err)
	}
	if err := platforms.CheckSend(setting, "amount", r.Amount); err != nil {
		return ports.AgentAction{}, err
	}
	key := r.IdempotencyKey
	return s.submit(ctx, a, request{
		op: policy.OpTransferOut, typ: agents.ActionTransferOut, key: key,
		pol:       policy.Request{Operation: policy.OpTransferOut, AccountID: src.ID, Amount: r.Amount, Currency: src.Currency},
		conv:      s.currentRates(ctx),
		fill:      transferDetails(r.SourceAccountID, r.DestinationAccountID, r.Amount, src.Currency),
		holdUntil: s.clock.Now().UTC().Add(orphanAge),
		run: func(ctx context.Context, actionID, release string) (string, error) {
			out := r
			// The transaction's id derives from the action's, so a re-run
			// finds the transfer its first run created.
			out.IdempotencyKey, out.AgentID, out.ReleaseHold = "agent-action|"+actionID, a.ID, release
			t, err := s.transfers.TransferOut(ctx, a.PlatformID, out)
			return t.ID, err
		},
	})
}

// TransferIn is POST /agents/me/transfer-in: the TRANSFER_IN action of a
// pull from one of the customer's external accounts into one of its
// internal accounts. Nothing is held while it waits for approval: the
// money is not in the ledger until the pull succeeds.
func (s *Service) TransferIn(ctx context.Context, a ports.Agent, r transfers.InRequest) (ports.AgentAction, error) {
	if err := checkTransfer(r.SourceAccountID, "ExternalAccount:", r.DestinationAccountID, "InternalAccount:", r.Amount); err != nil {
		return ports.AgentAction{}, err
	}
	if _, err := s.ownExternal(ctx, a, "source.accountId", r.SourceAccountID); err != nil {
		return ports.AgentAction{}, err
	}
	dst, err := s.ownInternal(ctx, a, "destination.accountId", r.DestinationAccountID)
	if err != nil {
		return ports.AgentAction{}, err
	}
	setting, err := platforms.ReadSetting(ctx, s.store.Read(), a.PlatformID, dst.Currency)
	if err != nil {
		return ports.AgentAction{}, fmt.Errorf("agent %s: %w", a.ID, err)
	}
	if err := platforms.CheckReceive(setting, "destination.accountId"); err != nil {
		return ports.AgentAction{}, err
	}
	return s.submit(ctx, a, request{
		op: policy.OpTransferIn, typ: agents.ActionTransferIn, key: r.IdempotencyKey,
		pol:  policy.Request{Operation: policy.OpTransferIn, AccountID: dst.ID, Amount: r.Amount, Currency: dst.Currency},
		conv: s.currentRates(ctx),
		fill: transferDetails(r.SourceAccountID, r.DestinationAccountID, r.Amount, dst.Currency),
		run: func(ctx context.Context, actionID, _ string) (string, error) {
			in := r
			in.IdempotencyKey, in.AgentID = "agent-action|"+actionID, a.ID
			t, err := s.transfers.TransferIn(ctx, a.PlatformID, in)
			return t.ID, err
		},
	})
}

// checkTransfer refuses, as the platform's transfer operations do (400
// naming the field), a missing account id or one of the wrong kind
// (sourcePrefix, destinationPrefix), and an amount out of range.
func checkTransfer(source, sourcePrefix, destination, destinationPrefix string, amount int64) error {
	var errs fault.Collector
	transfers.CheckID(&errs, "source.accountId", source, sourcePrefix)
	transfers.CheckID(&errs, "destination.accountId", destination, destinationPrefix)
	transfers.CheckAmount(&errs, amount)
	return errs.Err()
}

func transferDetails(source, destination string, amount int64, currency string) func(*ports.AgentAction) {
	return func(act *ports.AgentAction) {
		act.SourceAccountID, act.DestinationAccountID, act.Amount, act.Currency = source, destination, amount, currency
	}
}
