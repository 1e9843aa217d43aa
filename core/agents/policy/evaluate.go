package policy

import (
	"fmt"
	"slices"

	"github.com/shopspring/decimal"

	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/core/money"
)

// Operation is what an agent asks to do.
type Operation string

// The agent operations a policy governs.
const (
	OpCreateQuote            Operation = "CREATE_QUOTE"
	OpExecuteQuote           Operation = "EXECUTE_QUOTE"
	OpTransferIn             Operation = "TRANSFER_IN"
	OpTransferOut            Operation = "TRANSFER_OUT"
	OpViewTransactions       Operation = "VIEW_TRANSACTIONS"
	OpManageExternalAccounts Operation = "MANAGE_EXTERNAL_ACCOUNTS"
)

// permissionOf maps each operation to the permission that allows it, as
// the reference describes the permissions.
var permissionOf = map[Operation]Permission{
	OpCreateQuote:            CreateQuotes,
	OpExecuteQuote:           ExecuteQuotes,
	OpTransferIn:             CreateTransfers,
	OpTransferOut:            CreateTransfers,
	OpViewTransactions:       ViewTransactions,
	OpManageExternalAccounts: ManageExternalAccounts,
}

// Moves reports whether op moves money: only those are limited, counted
// and may need approval.
func (op Operation) Moves() bool {
	return op == OpExecuteQuote || op == OpTransferIn || op == OpTransferOut
}

// CodeForbidden is the code of every policy refusal (403; the reference's
// Error403 codes have none more specific for an agent's own policy). The
// error's details say which rule refused and with what numbers.
const CodeForbidden = "FORBIDDEN"

// The reasons of a refusal, in details.reason.
const (
	ReasonPermission     = "PERMISSION_MISSING"
	ReasonAccount        = "ACCOUNT_NOT_ALLOWED"
	ReasonPerTransaction = "PER_TRANSACTION_LIMIT_EXCEEDED"
	ReasonDailyCount     = "DAILY_TRANSACTION_LIMIT_EXCEEDED"
	ReasonDaily          = "DAILY_LIMIT_EXCEEDED"
	ReasonMonthly        = "MONTHLY_LIMIT_EXCEEDED"
	ReasonNoRate         = "NO_EXCHANGE_RATE"
)

// Permit checks that the policy grants the permission op needs: a 403
// naming it otherwise.
func (p Policy) Permit(op Operation) error {
	perm, ok := permissionOf[op]
	if !ok {
		return fmt.Errorf("policy: unknown operation %q", op)
	}
	if p.Has(perm) {
		return nil
	}
	e := fault.New(fault.KindForbidden, CodeForbidden, fmt.Sprintf("the agent's policy does not grant %s", perm))
	e.Details = map[string]any{"reason": ReasonPermission, "permission": string(perm)}
	return e
}

// Allows reports whether the policy lets the agent use the internal
// account (allowedAccountIds; null allows all).
func (p Policy) Allows(accountID string) bool {
	r := p.AccountRestrictions
	if r == nil || r.AllowedAccountIDs == nil {
		return true
	}
	return slices.ContainsFunc(r.AllowedAccountIDs, func(id string) bool { return SameAccount(id, accountID) })
}

func (p Policy) rule(accountID string) (AccountRule, bool) {
	if p.AccountRestrictions == nil {
		return AccountRule{}, false
	}
	i := slices.IndexFunc(p.AccountRestrictions.AccountRules, func(r AccountRule) bool { return SameAccount(r.AccountID, accountID) })
	if i < 0 {
		return AccountRule{}, false
	}
	return p.AccountRestrictions.AccountRules[i], true
}

// Request is an agent's request as the policy sees it.
type Request struct {
	Operation Operation
	// AccountID is the customer's internal account the action uses: the
	// source of a quote or transfer-out, the destination of a transfer-in.
	AccountID string
	// Amount, in minor units of Currency, is what the action takes from
	// (or, for a transfer-in, pulls into) the account.
	Amount   int64
	Currency string
}

// Converter gives exchange rates: how many major units of to one major
// unit of from buys (the reading of ports.Rate). The caller decides which
// rate applies: a quote's own rate for its pair, the current rate
// otherwise.
type Converter interface {
	Rate(from, to string) (decimal.Decimal, error)
}

// RateFunc adapts a function to Converter.
type RateFunc func(from, to string) (decimal.Decimal, error)

// Rate implements Converter.
func (f RateFunc) Rate(from, to string) (decimal.Decimal, error) { return f(from, to) }

// Convert expresses amount (minor units of from) in minor units of to at
// rate (major units of to per major unit of from):
//
//	amount × rate × 10^(decimals(to) − decimals(from)), rounded up.
//
// Rounding up is against the agent: a converted amount is never smaller
// than the exact one, so no limit can be passed, and no threshold slipped
// under, by a fraction of a minor unit. The same currency converts to
// itself without a rate. A result beyond int64 is refused.
func Convert(amount int64, from, to string, rate decimal.Decimal) (int64, error) {
	if from == to {
		return amount, nil
	}
	cf, okF := money.Lookup(from)
	ct, okT := money.Lookup(to)
	if !okF || !okT {
		return 0, fmt.Errorf("policy: convert %s to %s: unknown currency", from, to)
	}
	if !rate.IsPositive() {
		return 0, fmt.Errorf("policy: convert %s to %s: rate %s is not positive", from, to, rate)
	}
	v := decimal.NewFromInt(amount).Mul(rate).Shift(int32(ct.Decimals - cf.Decimals)).Ceil()
	if v.GreaterThan(decimal.NewFromInt(money.MaxAmount)) {
		return 0, fmt.Errorf("policy: convert %d %s to %s: out of range", amount, from, to)
	}
	return v.IntPart(), nil
}

// Decision is the policy's answer to a money-moving request it admits.
type Decision struct {
	// Mode is AUTO (run now) or APPROVAL_REQUIRED (wait for the platform).
	Mode ExecutionMode
	// Amount is the request's amount in minor units of the policy currency
	// (what the usage counters count).
	Amount int64
}

// Decide checks a request against everything but the usage counters: the
// permission, the account, the per-transaction limit (the account rule's
// when it has one), and decides the execution mode (the account rule's
// mode, else defaultExecutionMode; an amount above the approval threshold
// needs approval in any mode). Amounts in another currency are converted
// with conv (Convert's rule). A refusal is a 403 naming the rule and its
// numbers.
func (p Policy) Decide(req Request, conv Converter) (Decision, error) {
	if err := p.Permit(req.Operation); err != nil {
		return Decision{}, err
	}
	if !p.Allows(req.AccountID) {
		e := fault.New(fault.KindForbidden, CodeForbidden, fmt.Sprintf("the agent's policy does not allow account %s (accountRestrictions.allowedAccountIds)", req.AccountID))
		e.Details = map[string]any{"reason": ReasonAccount, "accountId": req.AccountID}
		return Decision{}, e
	}
	if !req.Operation.Moves() {
		return Decision{Mode: Auto}, nil
	}
	cur := p.SpendingLimits.Currency
	amount, err := convert(req, cur, conv)
	if err != nil {
		return Decision{}, err
	}
	limit, field := p.SpendingLimits.PerTransactionLimit, "spendingLimits.perTransactionLimit"
	mode := p.DefaultExecutionMode
	if r, ok := p.rule(req.AccountID); ok {
		if r.PerTransactionLimit != nil {
			limit, field = *r.PerTransactionLimit, "accountRestrictions.accountRules.perTransactionLimit"
		}
		if r.ExecutionMode != "" {
			mode = r.ExecutionMode
		}
	}
	if amount > limit {
		return Decision{}, Exceeded(ReasonPerTransaction, field, cur, limit, 0, amount)
	}
	if t := p.ApprovalThresholds; t != nil && t.Amount != nil && mode == Auto {
		over, err := convert(req, t.Currency, conv)
		if err != nil {
			return Decision{}, err
		}
		if over > *t.Amount {
			mode = ApprovalRequired
		}
	}
	return Decision{Mode: mode, Amount: amount}, nil
}

func convert(req Request, to string, conv Converter) (int64, error) {
	if req.Currency == to {
		return req.Amount, nil
	}
	noRate := func(cause error) error {
		e := fault.New(fault.KindForbidden, CodeForbidden,
			fmt.Sprintf("the agent's policy is in %s and no %s/%s exchange rate is available to evaluate the request", to, req.Currency, to))
		e.Details = map[string]any{"reason": ReasonNoRate, "currency": req.Currency, "policyCurrency": to}
		return fmt.Errorf("%w (%v)", e, cause)
	}
	if conv == nil {
		return 0, noRate(fmt.Errorf("no converter"))
	}
	rate, err := conv.Rate(req.Currency, to)
	if err != nil {
		return 0, noRate(err)
	}
	v, err := Convert(req.Amount, req.Currency, to, rate)
	if err != nil {
		return 0, noRate(err)
	}
	return v, nil
}

// Exceeded is the 403 of a limit an action would pass: the message and
// details name the limit (field), its value, what is already used and what
// was requested, in minor units of currency (the count limit counts
// actions).
func Exceeded(reason, field, currency string, limit, used, requested int64) *fault.Error {
	unit := " " + currency
	if reason == ReasonDailyCount {
		unit = " transactions"
	}
	e := fault.New(fault.KindForbidden, CodeForbidden,
		fmt.Sprintf("%s exceeded: limit %d%s, used %d, requested %d", field, limit, unit, used, requested))
	e.Details = map[string]any{"reason": reason, "limit": field, "limitAmount": limit, "used": used, "requested": requested}
	if reason != ReasonDailyCount {
		e.Details["currency"] = currency
	}
	return e
}
