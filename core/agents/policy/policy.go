// Package policy is an agent's spending policy as the reference shapes it
// (AgentPolicy): what the agent may do (permissions), whether its actions
// run at once or wait for the platform (execution modes, approval
// thresholds), and how much it may spend (spending limits, per-account
// rules). It validates a policy, merges a partial update into one, and
// evaluates an agent's request against a policy and the agent's usage.
//
// The policy is a JSON document stored and returned as it is, so its types
// carry the reference's JSON names (and the schema tags an HTTP adapter
// documents them with); a null limit means unlimited.
package policy

import (
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/core/money"
)

// Permission is one thing an agent may be allowed to do (AgentPermission).
type Permission string

// The permissions of the reference, and the operations each allows.
const (
	// ViewTransactions: list and read transactions and account balances.
	ViewTransactions Permission = "VIEW_TRANSACTIONS"
	// CreateTransfers: POST /agents/me/transfer-in and /transfer-out.
	CreateTransfers Permission = "CREATE_TRANSFERS"
	// CreateQuotes: POST /agents/me/quotes.
	CreateQuotes Permission = "CREATE_QUOTES"
	// ExecuteQuotes: POST /agents/me/quotes/{quoteId}/execute.
	ExecuteQuotes Permission = "EXECUTE_QUOTES"
	// ManageExternalAccounts: every /agents/me/external-accounts operation.
	ManageExternalAccounts Permission = "MANAGE_EXTERNAL_ACCOUNTS"
)

// Permissions lists every permission, in the reference's order.
var Permissions = []Permission{ViewTransactions, CreateTransfers, CreateQuotes, ExecuteQuotes, ManageExternalAccounts}

// ExecutionMode says whether an agent's action runs at once or waits for
// the platform's approval (AgentExecutionMode).
type ExecutionMode string

// The execution modes.
const (
	Auto             ExecutionMode = "AUTO"
	ApprovalRequired ExecutionMode = "APPROVAL_REQUIRED"
)

// ExecutionModes lists every execution mode.
var ExecutionModes = []ExecutionMode{Auto, ApprovalRequired}

// MaxAccounts bounds allowedAccountIds and accountRules.
const MaxAccounts = 100

// SpendingLimits caps the agent's amounts and frequency, in minor units of
// Currency (AgentSpendingLimits).
type SpendingLimits struct {
	Currency            string `json:"currency" minLength:"1" maxLength:"16" doc:"Currency code every amount limit is in"`
	PerTransactionLimit int64  `json:"perTransactionLimit" minimum:"0" doc:"Largest amount of one transaction, in minor units"`
	// DailyLimit and MonthlyLimit: nil (null) is no limit.
	DailyLimit *int64 `json:"dailyLimit" required:"false" minimum:"0" doc:"Largest total a day (UTC), in minor units; null is no limit"`
	// DailyTransactionLimit: nil (omitted) is no limit; the reference types
	// it as a plain integer, so it is omitted rather than null.
	DailyTransactionLimit *int64 `json:"dailyTransactionLimit,omitempty" minimum:"0" doc:"Most transactions a day (UTC); omitted is no limit"`
	MonthlyLimit          *int64 `json:"monthlyLimit" required:"false" minimum:"0" doc:"Largest total a month (UTC), in minor units; null is no limit"`
}

// AccountRule overrides the policy for one internal account
// (AgentAccountRule).
type AccountRule struct {
	AccountID string `json:"accountId" doc:"Internal account the rule is for"`
	// ExecutionMode: empty inherits defaultExecutionMode.
	ExecutionMode ExecutionMode `json:"executionMode,omitempty" enum:"AUTO,APPROVAL_REQUIRED" doc:"Overrides defaultExecutionMode on this account"`
	// PerTransactionLimit: nil (null) inherits the spending limits' value.
	PerTransactionLimit *int64 `json:"perTransactionLimit" required:"false" minimum:"0" doc:"Overrides the per-transaction limit on this account; null inherits it"`
}

// AccountRestrictions limits the accounts the agent may use
// (AgentAccountRestrictions).
type AccountRestrictions struct {
	// AllowedAccountIDs: nil (null) allows every account of the customer;
	// an empty list allows none.
	AllowedAccountIDs []string      `json:"allowedAccountIds" required:"false" nullable:"true" doc:"The only internal accounts the agent may use; null allows all"`
	AccountRules      []AccountRule `json:"accountRules" required:"false" doc:"Per-account overrides"`
}

// ApprovalThresholds forces approval of an action above Amount, even in
// AUTO (AgentApprovalThresholds).
type ApprovalThresholds struct {
	Currency string `json:"currency,omitempty" doc:"Currency of amount; required when amount is set"`
	// Amount: nil (null) is no threshold.
	Amount *int64 `json:"amount" required:"false" minimum:"0" doc:"Actions above this amount wait for approval even in AUTO; null is no threshold"`
}

// Policy is an agent's policy (AgentPolicy).
type Policy struct {
	Permissions          []Permission         `json:"permissions" enum:"VIEW_TRANSACTIONS,CREATE_TRANSFERS,CREATE_QUOTES,EXECUTE_QUOTES,MANAGE_EXTERNAL_ACCOUNTS" doc:"What the agent may do"`
	DefaultExecutionMode ExecutionMode        `json:"defaultExecutionMode" enum:"AUTO,APPROVAL_REQUIRED" doc:"Whether actions run at once or wait for approval"`
	SpendingLimits       SpendingLimits       `json:"spendingLimits"`
	AccountRestrictions  *AccountRestrictions `json:"accountRestrictions,omitempty"`
	ApprovalThresholds   *ApprovalThresholds  `json:"approvalThresholds,omitempty"`
}

// Default is the policy of an agent whose creator leaves everything but
// the currency to corridor: it may read, quote and move money, every
// action waits for the platform's approval, and it spends at most 1 000
// major units per transaction, 10 000 a day, 20 transactions a day and
// 50 000 a month. Creating an agent through the API needs a full policy;
// this is the starting point for tools and tests.
func Default(currency string) Policy {
	unit := int64(1)
	if c, ok := money.Lookup(currency); ok {
		for range c.Decimals {
			unit *= 10
		}
	}
	return Policy{
		Permissions:          []Permission{ViewTransactions, CreateTransfers, CreateQuotes, ExecuteQuotes},
		DefaultExecutionMode: ApprovalRequired,
		SpendingLimits: SpendingLimits{Currency: currency, PerTransactionLimit: 1_000 * unit,
			DailyLimit: Int(10_000 * unit), DailyTransactionLimit: Int(20), MonthlyLimit: Int(50_000 * unit)},
	}
}

// Int returns a pointer to v: a set limit.
func Int(v int64) *int64 { return &v }

// Has reports whether the policy grants perm.
func (p Policy) Has(perm Permission) bool { return slices.Contains(p.Permissions, perm) }

// Clone returns a deep copy of p, so a merge never aliases the original.
func (p Policy) Clone() Policy {
	out := p
	out.Permissions = slices.Clone(p.Permissions)
	out.SpendingLimits.DailyLimit = cloneInt(p.SpendingLimits.DailyLimit)
	out.SpendingLimits.DailyTransactionLimit = cloneInt(p.SpendingLimits.DailyTransactionLimit)
	out.SpendingLimits.MonthlyLimit = cloneInt(p.SpendingLimits.MonthlyLimit)
	if r := p.AccountRestrictions; r != nil {
		c := AccountRestrictions{AllowedAccountIDs: slices.Clone(r.AllowedAccountIDs), AccountRules: make([]AccountRule, len(r.AccountRules))}
		for i, rule := range r.AccountRules {
			rule.PerTransactionLimit = cloneInt(rule.PerTransactionLimit)
			c.AccountRules[i] = rule
		}
		out.AccountRestrictions = &c
	}
	if t := p.ApprovalThresholds; t != nil {
		c := ApprovalThresholds{Currency: t.Currency, Amount: cloneInt(t.Amount)}
		out.ApprovalThresholds = &c
	}
	return out
}

func cloneInt(v *int64) *int64 {
	if v == nil {
		return nil
	}
	return Int(*v)
}

// Normalize gives the optional parts their canonical form, so a stored and
// rendered policy always has the same shape: accountRules is a list (never
// null) when accountRestrictions is present.
func (p *Policy) Normalize() {
	if p.Permissions == nil {
		p.Permissions = []Permission{}
	}
	if r := p.AccountRestrictions; r != nil && r.AccountRules == nil {
		r.AccountRules = []AccountRule{}
	}
}

// Validate checks a whole policy; field names are dot paths under prefix
// ("policy" in a create request, empty in a policy update). Every bad field
// is reported, as a 400 INVALID_INPUT.
func (p Policy) Validate(prefix string) error {
	c := &fault.Collector{}
	p.check(c, prefix)
	return c.Err()
}

func (p Policy) check(c *fault.Collector, prefix string) {
	at := func(name string) string {
		if prefix == "" {
			return name
		}
		return prefix + "." + name
	}
	if p.Permissions == nil {
		c.Add(at("permissions"), "is required")
	}
	if len(p.Permissions) > len(Permissions) {
		c.Add(at("permissions"), fmt.Sprintf("must have at most %d items", len(Permissions)))
	}
	for i, perm := range p.Permissions {
		f := fmt.Sprintf("%s[%d]", at("permissions"), i)
		switch {
		case !slices.Contains(Permissions, perm):
			c.Add(f, "must be one of "+joined(Permissions))
		case slices.Index(p.Permissions, perm) < i:
			c.Add(f, "is listed twice")
		}
	}
	checkMode(c, at("defaultExecutionMode"), p.DefaultExecutionMode, true)
	l := p.SpendingLimits
	checkCurrency(c, at("spendingLimits.currency"), l.Currency, true)
	checkAmount(c, at("spendingLimits.perTransactionLimit"), &l.PerTransactionLimit)
	checkAmount(c, at("spendingLimits.dailyLimit"), l.DailyLimit)
	checkAmount(c, at("spendingLimits.dailyTransactionLimit"), l.DailyTransactionLimit)
	checkAmount(c, at("spendingLimits.monthlyLimit"), l.MonthlyLimit)
	if r := p.AccountRestrictions; r != nil {
		checkAccounts(c, at("accountRestrictions"), r)
	}
	if t := p.ApprovalThresholds; t != nil {
		checkCurrency(c, at("approvalThresholds.currency"), t.Currency, t.Amount != nil)
		checkAmount(c, at("approvalThresholds.amount"), t.Amount)
	}
}

func checkAccounts(c *fault.Collector, field string, r *AccountRestrictions) {
	if len(r.AllowedAccountIDs) > MaxAccounts {
		c.Add(field+".allowedAccountIds", fmt.Sprintf("must have at most %d items", MaxAccounts))
	} else {
		for i, id := range r.AllowedAccountIDs {
			f := fmt.Sprintf("%s.allowedAccountIds[%d]", field, i)
			if !validAccountID(id) {
				c.Add(f, "must be an internal account id (InternalAccount:<uuid>)")
			} else if slices.IndexFunc(r.AllowedAccountIDs[:i], func(o string) bool { return SameAccount(o, id) }) >= 0 {
				c.Add(f, "is listed twice")
			}
		}
	}
	if len(r.AccountRules) > MaxAccounts {
		c.Add(field+".accountRules", fmt.Sprintf("must have at most %d items", MaxAccounts))
		return
	}
	for i, rule := range r.AccountRules {
		f := fmt.Sprintf("%s.accountRules[%d]", field, i)
		switch {
		case rule.AccountID == "":
			c.Add(f+".accountId", "is required")
		case !validAccountID(rule.AccountID):
			c.Add(f+".accountId", "must be an internal account id (InternalAccount:<uuid>)")
		case slices.IndexFunc(r.AccountRules[:i], func(o AccountRule) bool { return SameAccount(o.AccountID, rule.AccountID) }) >= 0:
			c.Add(f+".accountId", "has a rule already")
		}
		checkMode(c, f+".executionMode", rule.ExecutionMode, false)
		checkAmount(c, f+".perTransactionLimit", rule.PerTransactionLimit)
	}
}

func checkMode(c *fault.Collector, field string, m ExecutionMode, required bool) {
	switch {
	case m == "" && required:
		c.Add(field, "is required")
	case m != "" && !slices.Contains(ExecutionModes, m):
		c.Add(field, "must be one of "+joined(ExecutionModes))
	}
}

func checkCurrency(c *fault.Collector, field, code string, required bool) {
	if code == "" {
		if required {
			c.Add(field, "is required")
		}
		return
	}
	if _, ok := money.Lookup(code); !ok {
		c.Add(field, "unknown currency code; supported: "+strings.Join(money.Codes(), ", "))
	}
}

func checkAmount(c *fault.Collector, field string, v *int64) {
	if v != nil && (*v < 0 || *v > money.MaxAmount) {
		c.Add(field, fmt.Sprintf("must be between 0 and %d", money.MaxAmount))
	}
}

// AccountRef is an internal account a policy names, by its service id
// (InternalAccount:<uuid>), and the field that names it.
type AccountRef struct{ Field, AccountID string }

// Accounts lists the internal accounts p names (allowedAccountIds, then
// accountRules), each with its field under prefix, leaving out a malformed
// id (Validate's to report).
func (p Policy) Accounts(prefix string) []AccountRef {
	r := p.AccountRestrictions
	if r == nil {
		return nil
	}
	var out []AccountRef
	add := func(field, id string) {
		if u, ok := accountUUID(id); ok {
			out = append(out, AccountRef{Field: field, AccountID: accountPrefixes[0] + u})
		}
	}
	for i, id := range r.AllowedAccountIDs {
		add(fmt.Sprintf("%s.accountRestrictions.allowedAccountIds[%d]", prefix, i), id)
	}
	for i, rule := range r.AccountRules {
		add(fmt.Sprintf("%s.accountRestrictions.accountRules[%d].accountId", prefix, i), rule.AccountID)
	}
	return out
}

// The account id forms a policy may name: the service's own
// (InternalAccount:<uuid>) and the reference's (Account:<uuid>), which name
// the same account when their uuids are equal.
var accountPrefixes = []string{"InternalAccount:", "Account:"}

func accountUUID(id string) (string, bool) {
	for _, p := range accountPrefixes {
		if rest, ok := strings.CutPrefix(id, p); ok {
			u, err := uuid.Parse(rest)
			if err != nil || len(rest) != 36 {
				return "", false
			}
			return u.String(), true
		}
	}
	return "", false
}

func validAccountID(id string) bool {
	_, ok := accountUUID(id)
	return ok
}

// SameAccount reports whether two account ids name the same internal
// account (InternalAccount:<uuid> and Account:<uuid> alike).
func SameAccount(a, b string) bool {
	ua, okA := accountUUID(a)
	ub, okB := accountUUID(b)
	return okA && okB && ua == ub
}

func joined[T ~string](vs []T) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = string(v)
	}
	return strings.Join(s, ", ")
}
