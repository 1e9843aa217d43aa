package policy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"

	"github.com/corridorpay/corridor/core/fault"
)

// Update documents the body of a partial policy update
// (AgentPolicyUpdateRequest): every field optional, nested ones too. It is
// the schema an HTTP adapter declares; the update itself is applied from
// the raw body by Merge, which alone can tell an omitted field (kept) from
// an explicit null (cleared).
type Update struct {
	Permissions          []Permission          `json:"permissions,omitempty" enum:"VIEW_TRANSACTIONS,CREATE_TRANSFERS,CREATE_QUOTES,EXECUTE_QUOTES,MANAGE_EXTERNAL_ACCOUNTS" doc:"Replaces the whole list"`
	DefaultExecutionMode ExecutionMode         `json:"defaultExecutionMode,omitempty" enum:"AUTO,APPROVAL_REQUIRED"`
	SpendingLimits       *SpendingLimitsUpdate `json:"spendingLimits,omitempty" doc:"Only the fields sent change; null on dailyLimit, dailyTransactionLimit or monthlyLimit removes that limit"`
	AccountRestrictions  *AccountRestrictions  `json:"accountRestrictions,omitempty" doc:"allowedAccountIds and accountRules each replace the current value when sent"`
	ApprovalThresholds   *ApprovalThresholds   `json:"approvalThresholds,omitempty" doc:"Only the fields sent change; amount null removes the threshold"`
}

// SpendingLimitsUpdate is the partial spendingLimits of an Update
// (AgentSpendingLimitsUpdate).
type SpendingLimitsUpdate struct {
	Currency              string `json:"currency,omitempty" doc:"Recasts the limits: their numbers stay and are read in the new currency"`
	PerTransactionLimit   *int64 `json:"perTransactionLimit,omitempty" minimum:"0"`
	DailyLimit            *int64 `json:"dailyLimit,omitempty" nullable:"true" minimum:"0"`
	DailyTransactionLimit *int64 `json:"dailyTransactionLimit,omitempty" nullable:"true" minimum:"0"`
	MonthlyLimit          *int64 `json:"monthlyLimit,omitempty" nullable:"true" minimum:"0"`
}

// Parse reads a whole policy (the policy of a create request) from JSON,
// checks it and returns it in its canonical form. Field names in errors are
// dot paths under prefix ("policy" for a create request's member).
func Parse(raw []byte, prefix string) (Policy, error) {
	d := &decoder{create: true, prefix: prefix}
	p := d.apply(Policy{}, raw)
	return d.finish(p)
}

// Merge applies a partial update (AgentPolicyUpdateRequest, as raw JSON)
// to cur and returns the checked result; cur is not changed. An omitted
// field keeps its value; nested objects (spendingLimits,
// accountRestrictions, approvalThresholds) merge field by field; a list
// (permissions, allowedAccountIds, accountRules) replaces the current one;
// an explicit null clears what may be cleared (dailyLimit,
// dailyTransactionLimit, monthlyLimit, allowedAccountIds, accountRules,
// approvalThresholds.amount, a rule's perTransactionLimit or
// executionMode, accountRestrictions and approvalThresholds as a whole)
// and is refused on a required field. Unknown fields and values outside an
// enum are 400 INVALID_INPUT naming the field.
func Merge(cur Policy, raw []byte) (Policy, error) {
	d := &decoder{}
	p := d.apply(cur.Clone(), raw)
	return d.finish(p)
}

// decoder applies JSON onto a policy, collecting every bad field.
type decoder struct {
	fault.Collector
	create bool
	prefix string
	bad    bool
}

func (d *decoder) add(field, msg string) {
	d.bad = true
	d.Add(field, msg)
}

func (d *decoder) finish(p Policy) (Policy, error) {
	if d.bad {
		return Policy{}, d.Err()
	}
	p.Normalize()
	if err := p.Validate(d.prefix); err != nil {
		return Policy{}, err
	}
	return p, nil
}

func (d *decoder) at(name string) string {
	if d.prefix == "" {
		return name
	}
	return d.prefix + "." + name
}

func isNull(raw json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(raw), []byte("null")) }

// object decodes a JSON object into its members, checking that only known
// ones are present; ok is false (and the field reported) otherwise.
func (d *decoder) object(field string, raw []byte, known ...string) (map[string]json.RawMessage, bool) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		name := field
		if name == "" {
			name = "body"
		}
		d.add(name, "must be an object")
		return nil, false
	}
	unknown := []string{}
	for k := range m {
		if !slices.Contains(known, k) {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	for _, k := range unknown {
		d.add(join(field, k), "is not a known field")
	}
	return m, len(unknown) == 0
}

func join(field, name string) string {
	if field == "" {
		return name
	}
	return field + "." + name
}

func (d *decoder) str(field string, raw json.RawMessage) (string, bool) {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil || isNull(raw) {
		d.add(field, "must be a string")
		return "", false
	}
	return s, true
}

// integer reads a JSON integer that fits int64 (no fraction, no exponent).
func (d *decoder) integer(field string, raw json.RawMessage) (int64, bool) {
	v, err := strconv.ParseInt(string(bytes.TrimSpace(raw)), 10, 64)
	if err != nil {
		d.add(field, "must be an integer")
		return 0, false
	}
	return v, true
}

// limit reads a nullable integer: nil for null.
func (d *decoder) limit(field string, raw json.RawMessage) (*int64, bool) {
	if isNull(raw) {
		return nil, true
	}
	v, ok := d.integer(field, raw)
	if !ok {
		return nil, false
	}
	return Int(v), true
}

func (d *decoder) notNull(field string, raw json.RawMessage) bool {
	if isNull(raw) {
		d.add(field, "must not be null")
		return false
	}
	return true
}

func (d *decoder) require(field string, m map[string]json.RawMessage, name string) {
	if _, ok := m[name]; !ok {
		d.add(join(field, name), "is required")
	}
}

func (d *decoder) apply(p Policy, raw []byte) Policy {
	root := d.prefix
	if d.create && (len(bytes.TrimSpace(raw)) == 0 || isNull(raw)) {
		name := d.prefix
		if name == "" {
			name = "body"
		}
		d.add(name, "is required")
		return p
	}
	m, _ := d.object(root, raw, "permissions", "defaultExecutionMode", "spendingLimits", "accountRestrictions", "approvalThresholds")
	if m == nil {
		return p
	}
	if d.create {
		for _, k := range []string{"permissions", "defaultExecutionMode", "spendingLimits"} {
			d.require(root, m, k)
		}
	}
	if v, ok := m["permissions"]; ok && d.notNull(d.at("permissions"), v) {
		var list []string
		if err := json.Unmarshal(v, &list); err != nil {
			d.add(d.at("permissions"), "must be an array of strings")
		} else {
			p.Permissions = make([]Permission, len(list))
			for i, s := range list {
				p.Permissions[i] = Permission(s)
			}
		}
	}
	if v, ok := m["defaultExecutionMode"]; ok && d.notNull(d.at("defaultExecutionMode"), v) {
		if s, ok := d.str(d.at("defaultExecutionMode"), v); ok {
			p.DefaultExecutionMode = ExecutionMode(s)
		}
	}
	if v, ok := m["spendingLimits"]; ok && d.notNull(d.at("spendingLimits"), v) {
		p.SpendingLimits = d.limits(p.SpendingLimits, v)
	}
	if v, ok := m["accountRestrictions"]; ok {
		p.AccountRestrictions = d.restrictions(p.AccountRestrictions, v)
	}
	if v, ok := m["approvalThresholds"]; ok {
		p.ApprovalThresholds = d.thresholds(p.ApprovalThresholds, v)
	}
	return p
}

func (d *decoder) limits(l SpendingLimits, raw json.RawMessage) SpendingLimits {
	field := d.at("spendingLimits")
	m, _ := d.object(field, raw, "currency", "perTransactionLimit", "dailyLimit", "dailyTransactionLimit", "monthlyLimit")
	if m == nil {
		return l
	}
	if d.create {
		d.require(field, m, "currency")
		d.require(field, m, "perTransactionLimit")
	}
	if v, ok := m["currency"]; ok && d.notNull(field+".currency", v) {
		if s, ok := d.str(field+".currency", v); ok {
			l.Currency = s
		}
	}
	if v, ok := m["perTransactionLimit"]; ok && d.notNull(field+".perTransactionLimit", v) {
		if n, ok := d.integer(field+".perTransactionLimit", v); ok {
			l.PerTransactionLimit = n
		}
	}
	for _, o := range []struct {
		name string
		dst  **int64
	}{{"dailyLimit", &l.DailyLimit}, {"dailyTransactionLimit", &l.DailyTransactionLimit}, {"monthlyLimit", &l.MonthlyLimit}} {
		name, dst := o.name, o.dst
		if v, ok := m[name]; ok {
			if n, ok := d.limit(field+"."+name, v); ok {
				*dst = n
			}
		}
	}
	return l
}

// nested reads an optional object member that null removes (cleared); m
// is nil when the member is not an object (reported).
func (d *decoder) nested(name string, raw json.RawMessage, known ...string) (m map[string]json.RawMessage, field string, cleared bool) {
	if isNull(raw) {
		return nil, "", true
	}
	field = d.at(name)
	m, _ = d.object(field, raw, known...)
	return m, field, false
}

func (d *decoder) restrictions(cur *AccountRestrictions, raw json.RawMessage) *AccountRestrictions {
	m, field, cleared := d.nested("accountRestrictions", raw, "allowedAccountIds", "accountRules")
	if cleared {
		return nil
	}
	if m == nil {
		return cur
	}
	r := AccountRestrictions{AccountRules: []AccountRule{}}
	if cur != nil {
		r = *cur
	}
	if v, ok := m["allowedAccountIds"]; ok {
		if isNull(v) {
			r.AllowedAccountIDs = nil
		} else {
			var ids []string
			if err := json.Unmarshal(v, &ids); err != nil {
				d.add(field+".allowedAccountIds", "must be an array of strings or null")
			} else {
				r.AllowedAccountIDs = ids
			}
		}
	}
	if v, ok := m["accountRules"]; ok {
		r.AccountRules = d.rules(field+".accountRules", v)
	}
	return &r
}

func (d *decoder) rules(field string, raw json.RawMessage) []AccountRule {
	out := []AccountRule{}
	if isNull(raw) {
		return out
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		d.add(field, "must be an array of objects")
		return out
	}
	for i, item := range items {
		f := fmt.Sprintf("%s[%d]", field, i)
		m, _ := d.object(f, item, "accountId", "executionMode", "perTransactionLimit")
		if m == nil {
			continue
		}
		var rule AccountRule // a missing accountId is Validate's to report
		if v, ok := m["accountId"]; ok {
			rule.AccountID, _ = d.str(f+".accountId", v)
		}
		if v, ok := m["executionMode"]; ok && !isNull(v) {
			if s, ok := d.str(f+".executionMode", v); ok {
				rule.ExecutionMode = ExecutionMode(s)
			}
		}
		if v, ok := m["perTransactionLimit"]; ok {
			rule.PerTransactionLimit, _ = d.limit(f+".perTransactionLimit", v)
		}
		out = append(out, rule)
	}
	return out
}

func (d *decoder) thresholds(cur *ApprovalThresholds, raw json.RawMessage) *ApprovalThresholds {
	m, field, cleared := d.nested("approvalThresholds", raw, "currency", "amount")
	if cleared {
		return nil
	}
	if m == nil {
		return cur
	}
	var t ApprovalThresholds
	if cur != nil {
		t = *cur
	}
	if v, ok := m["currency"]; ok {
		if isNull(v) {
			t.Currency = ""
		} else if s, ok := d.str(field+".currency", v); ok {
			t.Currency = s
		}
	}
	if v, ok := m["amount"]; ok {
		if n, ok := d.limit(field+".amount", v); ok {
			t.Amount = n
		}
	}
	return &t
}
