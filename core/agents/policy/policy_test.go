package policy_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/core/agents/policy"
	"github.com/corridorpay/corridor/core/fault"
)

const acct = "InternalAccount:019542f5-b3e7-1d02-0000-000000000001"

const full = `{
  "permissions": ["VIEW_TRANSACTIONS", "CREATE_TRANSFERS"],
  "defaultExecutionMode": "AUTO",
  "spendingLimits": {"currency": "USD", "perTransactionLimit": 50000, "dailyLimit": 500000,
    "dailyTransactionLimit": 10, "monthlyLimit": null},
  "accountRestrictions": {"allowedAccountIds": ["` + acct + `"],
    "accountRules": [{"accountId": "` + acct + `", "executionMode": "APPROVAL_REQUIRED", "perTransactionLimit": null}]},
  "approvalThresholds": {"currency": "USD", "amount": 100000}
}`

// fields returns the bad field names of a 400, failing unless err is one.
func fields(t *testing.T, err error) []string {
	t.Helper()
	require.Error(t, err)
	fe, ok := fault.As(err)
	require.True(t, ok, "%v", err)
	require.Equal(t, fault.KindInvalid, fe.Kind)
	require.Equal(t, "INVALID_INPUT", fe.Code)
	out := make([]string, len(fe.Fields))
	for i, f := range fe.Fields {
		out[i] = f.Field
	}
	return out
}

func TestParseRendersTheReferenceShape(t *testing.T) {
	p, err := policy.Parse([]byte(full), "policy")
	require.NoError(t, err)
	assert.True(t, p.Has(policy.CreateTransfers))
	assert.False(t, p.Has(policy.ExecuteQuotes))
	out, err := json.Marshal(p)
	require.NoError(t, err)
	assert.JSONEq(t, `{
	  "permissions": ["VIEW_TRANSACTIONS", "CREATE_TRANSFERS"],
	  "defaultExecutionMode": "AUTO",
	  "spendingLimits": {"currency": "USD", "perTransactionLimit": 50000, "dailyLimit": 500000,
	    "dailyTransactionLimit": 10, "monthlyLimit": null},
	  "accountRestrictions": {"allowedAccountIds": ["`+acct+`"],
	    "accountRules": [{"accountId": "`+acct+`", "executionMode": "APPROVAL_REQUIRED", "perTransactionLimit": null}]},
	  "approvalThresholds": {"currency": "USD", "amount": 100000}
	}`, string(out))

	// The stored document reads back to the same policy.
	var back policy.Policy
	require.NoError(t, json.Unmarshal(out, &back))
	assert.Equal(t, p, back)
}

func TestParseMinimalPolicyDefaults(t *testing.T) {
	p, err := policy.Parse([]byte(`{"permissions":[],"defaultExecutionMode":"APPROVAL_REQUIRED",
		"spendingLimits":{"currency":"EUR","perTransactionLimit":0}}`), "policy")
	require.NoError(t, err)
	out, err := json.Marshal(p)
	require.NoError(t, err)
	// Omitted limits are unlimited: null for the nullable ones, absent for
	// dailyTransactionLimit; no restrictions, no threshold.
	assert.JSONEq(t, `{"permissions":[],"defaultExecutionMode":"APPROVAL_REQUIRED",
		"spendingLimits":{"currency":"EUR","perTransactionLimit":0,"dailyLimit":null,"monthlyLimit":null}}`, string(out))
}

func TestParseRejects(t *testing.T) {
	cases := []struct {
		name string
		body string
		want []string
	}{
		{"missing everything", `{}`, []string{"policy.permissions", "policy.defaultExecutionMode", "policy.spendingLimits"}},
		{"null policy", `null`, []string{"policy"}},
		{"not an object", `[1]`, []string{"policy"}},
		{"missing limit fields", `{"permissions":[],"defaultExecutionMode":"AUTO","spendingLimits":{}}`,
			[]string{"policy.spendingLimits.currency", "policy.spendingLimits.perTransactionLimit"}},
		{"unknown permission", `{"permissions":["VIEW_TRANSACTIONS","SPEND_ALL"],"defaultExecutionMode":"AUTO","spendingLimits":{"currency":"USD","perTransactionLimit":1}}`,
			[]string{"policy.permissions[1]"}},
		{"permission twice", `{"permissions":["CREATE_QUOTES","CREATE_QUOTES"],"defaultExecutionMode":"AUTO","spendingLimits":{"currency":"USD","perTransactionLimit":1}}`,
			[]string{"policy.permissions[1]"}},
		{"unknown mode", `{"permissions":[],"defaultExecutionMode":"MANUAL","spendingLimits":{"currency":"USD","perTransactionLimit":1}}`,
			[]string{"policy.defaultExecutionMode"}},
		{"unknown currency", `{"permissions":[],"defaultExecutionMode":"AUTO","spendingLimits":{"currency":"XYZ","perTransactionLimit":1}}`,
			[]string{"policy.spendingLimits.currency"}},
		{"negative limit", `{"permissions":[],"defaultExecutionMode":"AUTO","spendingLimits":{"currency":"USD","perTransactionLimit":-1,"dailyLimit":-5}}`,
			[]string{"policy.spendingLimits.perTransactionLimit", "policy.spendingLimits.dailyLimit"}},
		{"fractional limit", `{"permissions":[],"defaultExecutionMode":"AUTO","spendingLimits":{"currency":"USD","perTransactionLimit":1.5}}`,
			[]string{"policy.spendingLimits.perTransactionLimit"}},
		{"limit beyond int64", `{"permissions":[],"defaultExecutionMode":"AUTO","spendingLimits":{"currency":"USD","perTransactionLimit":99999999999999999999}}`,
			[]string{"policy.spendingLimits.perTransactionLimit"}},
		{"limit above the maximum", `{"permissions":[],"defaultExecutionMode":"AUTO","spendingLimits":{"currency":"USD","perTransactionLimit":9000000000000001}}`,
			[]string{"policy.spendingLimits.perTransactionLimit"}},
		{"null required", `{"permissions":null,"defaultExecutionMode":null,"spendingLimits":{"currency":"USD","perTransactionLimit":null}}`,
			[]string{"policy.permissions", "policy.defaultExecutionMode", "policy.spendingLimits.perTransactionLimit"}},
		{"unknown field", `{"permissions":[],"defaultExecutionMode":"AUTO","spendingLimits":{"currency":"USD","perTransactionLimit":1,"weeklyLimit":3},"colour":1}`,
			[]string{"policy.colour", "policy.spendingLimits.weeklyLimit"}},
		{"bad account id", `{"permissions":[],"defaultExecutionMode":"AUTO","spendingLimits":{"currency":"USD","perTransactionLimit":1},
			"accountRestrictions":{"allowedAccountIds":["Customer:019542f5-b3e7-1d02-0000-000000000001"],"accountRules":[{"executionMode":"AUTO"}]}}`,
			[]string{"policy.accountRestrictions.accountRules[0].accountId", "policy.accountRestrictions.allowedAccountIds[0]"}},
		{"rule mode unknown", `{"permissions":[],"defaultExecutionMode":"AUTO","spendingLimits":{"currency":"USD","perTransactionLimit":1},
			"accountRestrictions":{"accountRules":[{"accountId":"` + acct + `","executionMode":"SOMETIMES"}]}}`,
			[]string{"policy.accountRestrictions.accountRules[0].executionMode"}},
		{"same account twice, both spellings", `{"permissions":[],"defaultExecutionMode":"AUTO","spendingLimits":{"currency":"USD","perTransactionLimit":1},
			"accountRestrictions":{"allowedAccountIds":["` + acct + `","Account:019542f5-b3e7-1d02-0000-000000000001"]}}`,
			[]string{"policy.accountRestrictions.allowedAccountIds[1]"}},
		{"threshold amount without currency", `{"permissions":[],"defaultExecutionMode":"AUTO","spendingLimits":{"currency":"USD","perTransactionLimit":1},
			"approvalThresholds":{"amount":10}}`,
			[]string{"policy.approvalThresholds.currency"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := policy.Parse([]byte(tc.body), "policy")
			assert.ElementsMatch(t, tc.want, fields(t, err))
		})
	}
}

func base(t *testing.T) policy.Policy {
	t.Helper()
	p, err := policy.Parse([]byte(full), "")
	require.NoError(t, err)
	return p
}

func TestMerge(t *testing.T) {
	cases := []struct {
		name  string
		patch string
		check func(t *testing.T, p policy.Policy)
	}{
		{"empty keeps everything", `{}`, func(t *testing.T, p policy.Policy) { assert.Equal(t, base(t), p) }},
		{"permissions replace the list", `{"permissions":["EXECUTE_QUOTES"]}`, func(t *testing.T, p policy.Policy) {
			assert.Equal(t, []policy.Permission{policy.ExecuteQuotes}, p.Permissions)
		}},
		{"nested spending limit, others kept", `{"spendingLimits":{"dailyTransactionLimit":3}}`, func(t *testing.T, p policy.Policy) {
			want := base(t)
			want.SpendingLimits.DailyTransactionLimit = policy.Int(3)
			assert.Equal(t, want, p)
		}},
		{"null clears the daily limit", `{"spendingLimits":{"dailyLimit":null}}`, func(t *testing.T, p policy.Policy) {
			assert.Nil(t, p.SpendingLimits.DailyLimit)
			assert.Equal(t, int64(50000), p.SpendingLimits.PerTransactionLimit)
			assert.Equal(t, policy.Int(10), p.SpendingLimits.DailyTransactionLimit)
		}},
		{"null clears the transaction count", `{"spendingLimits":{"dailyTransactionLimit":null}}`, func(t *testing.T, p policy.Policy) {
			assert.Nil(t, p.SpendingLimits.DailyTransactionLimit)
		}},
		{"monthly limit set", `{"spendingLimits":{"monthlyLimit":7}}`, func(t *testing.T, p policy.Policy) {
			assert.Equal(t, policy.Int(7), p.SpendingLimits.MonthlyLimit)
		}},
		{"currency recasts the numbers", `{"spendingLimits":{"currency":"EUR"}}`, func(t *testing.T, p policy.Policy) {
			assert.Equal(t, "EUR", p.SpendingLimits.Currency)
			assert.Equal(t, int64(50000), p.SpendingLimits.PerTransactionLimit)
		}},
		{"mode", `{"defaultExecutionMode":"APPROVAL_REQUIRED"}`, func(t *testing.T, p policy.Policy) {
			assert.Equal(t, policy.ApprovalRequired, p.DefaultExecutionMode)
		}},
		{"allowed ids null allows all, rules kept", `{"accountRestrictions":{"allowedAccountIds":null}}`, func(t *testing.T, p policy.Policy) {
			require.NotNil(t, p.AccountRestrictions)
			assert.Nil(t, p.AccountRestrictions.AllowedAccountIDs)
			assert.Len(t, p.AccountRestrictions.AccountRules, 1)
		}},
		{"rules replaced, ids kept", `{"accountRestrictions":{"accountRules":[]}}`, func(t *testing.T, p policy.Policy) {
			assert.Equal(t, []string{acct}, p.AccountRestrictions.AllowedAccountIDs)
			assert.Equal(t, []policy.AccountRule{}, p.AccountRestrictions.AccountRules)
		}},
		{"restrictions null removes them", `{"accountRestrictions":null}`, func(t *testing.T, p policy.Policy) {
			assert.Nil(t, p.AccountRestrictions)
		}},
		{"threshold amount null, currency kept", `{"approvalThresholds":{"amount":null}}`, func(t *testing.T, p policy.Policy) {
			assert.Equal(t, &policy.ApprovalThresholds{Currency: "USD"}, p.ApprovalThresholds)
		}},
		{"threshold amount only", `{"approvalThresholds":{"amount":5}}`, func(t *testing.T, p policy.Policy) {
			assert.Equal(t, &policy.ApprovalThresholds{Currency: "USD", Amount: policy.Int(5)}, p.ApprovalThresholds)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cur := base(t)
			p, err := policy.Merge(cur, []byte(tc.patch))
			require.NoError(t, err)
			tc.check(t, p)
			assert.Equal(t, base(t), cur, "the current policy is not changed")
		})
	}
}

func TestMergeOntoAPolicyWithoutOptionals(t *testing.T) {
	cur := policy.Default("USD")
	p, err := policy.Merge(cur, []byte(`{"accountRestrictions":{"allowedAccountIds":["`+acct+`"]},"approvalThresholds":{"currency":"EUR","amount":10}}`))
	require.NoError(t, err)
	assert.Equal(t, &policy.AccountRestrictions{AllowedAccountIDs: []string{acct}, AccountRules: []policy.AccountRule{}}, p.AccountRestrictions)
	assert.Equal(t, &policy.ApprovalThresholds{Currency: "EUR", Amount: policy.Int(10)}, p.ApprovalThresholds)
}

func TestMergeRejects(t *testing.T) {
	cases := []struct {
		name  string
		patch string
		want  []string
	}{
		{"not an object", `"x"`, []string{"body"}},
		{"unknown field", `{"limits":{}}`, []string{"limits"}},
		{"unknown nested field", `{"approvalThresholds":{"amount":1,"when":"now"}}`, []string{"approvalThresholds.when"}},
		{"unknown permission", `{"permissions":["VIEW_TRANSACTIONS","ROOT"]}`, []string{"permissions[1]"}},
		{"permissions not a list", `{"permissions":"VIEW_TRANSACTIONS"}`, []string{"permissions"}},
		{"null permissions", `{"permissions":null}`, []string{"permissions"}},
		{"unknown mode", `{"defaultExecutionMode":"auto"}`, []string{"defaultExecutionMode"}},
		{"null mode", `{"defaultExecutionMode":null}`, []string{"defaultExecutionMode"}},
		{"null spending limits", `{"spendingLimits":null}`, []string{"spendingLimits"}},
		{"null per-transaction limit", `{"spendingLimits":{"perTransactionLimit":null}}`, []string{"spendingLimits.perTransactionLimit"}},
		{"null currency", `{"spendingLimits":{"currency":null}}`, []string{"spendingLimits.currency"}},
		{"string limit", `{"spendingLimits":{"dailyLimit":"100"}}`, []string{"spendingLimits.dailyLimit"}},
		{"unknown rule mode", `{"accountRestrictions":{"accountRules":[{"accountId":"` + acct + `","executionMode":"NEVER"}]}}`,
			[]string{"accountRestrictions.accountRules[0].executionMode"}},
		{"rule not an object", `{"accountRestrictions":{"accountRules":[3]}}`, []string{"accountRestrictions.accountRules[0]"}},
		{"threshold currency removed under an amount", `{"approvalThresholds":{"currency":null}}`, []string{"approvalThresholds.currency"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := policy.Merge(base(t), []byte(tc.patch))
			assert.ElementsMatch(t, tc.want, fields(t, err))
		})
	}
}

func TestDefaultIsValid(t *testing.T) {
	for _, cur := range []string{"USD", "JPY", "BTC"} {
		p := policy.Default(cur)
		require.NoError(t, p.Validate("policy"), cur)
	}
	assert.Equal(t, int64(100_000), policy.Default("USD").SpendingLimits.PerTransactionLimit)
	assert.Equal(t, int64(1_000), policy.Default("JPY").SpendingLimits.PerTransactionLimit)
}

func TestSameAccount(t *testing.T) {
	assert.True(t, policy.SameAccount(acct, "Account:019542f5-b3e7-1d02-0000-000000000001"))
	assert.False(t, policy.SameAccount(acct, "InternalAccount:019542f5-b3e7-1d02-0000-000000000002"))
	assert.False(t, policy.SameAccount("x", "x"))
}
