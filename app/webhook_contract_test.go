package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/adapters/webhooks"
	"github.com/corridorpay/corridor/testkit"
	"github.com/corridorpay/corridor/testkit/apischema"
	"github.com/corridorpay/corridor/testkit/externalfixture"
)

// webhookContractTypes are the webhook types a platform hears of through
// the flows TestWebhookBodiesMatchReference drives: every type the service
// records but INCOMING_PAYMENT.REFUND_PENDING and REFUND_FAILED (the funds
// of a deposit that does not complete were never credited: they go back
// at once), // OUTGOING_PAYMENT.PENDING_AUTHORIZATION (no rail asks for strong
// authentication), VERIFICATION.PENDING_MANUAL_REVIEW (the sandbox
// provider never asks for it) and AGENT_ACTION.PENDING_APPROVAL (the
// agents work).
var webhookContractTypes = []string{
	"TEST",
	"OUTGOING_PAYMENT.PENDING", "OUTGOING_PAYMENT.PROCESSING", "OUTGOING_PAYMENT.COMPLETED",
	"OUTGOING_PAYMENT.FAILED", "OUTGOING_PAYMENT.EXPIRED",
	"OUTGOING_PAYMENT.REFUND_PENDING", "OUTGOING_PAYMENT.REFUND_COMPLETED", "OUTGOING_PAYMENT.REFUND_FAILED",
	"INCOMING_PAYMENT.PENDING", "INCOMING_PAYMENT.COMPLETED", "INCOMING_PAYMENT.FAILED", "INCOMING_PAYMENT.REFUND_COMPLETED",
	"CUSTOMER.KYC_APPROVED", "CUSTOMER.KYC_REJECTED", "CUSTOMER.KYC_PENDING",
	"VERIFICATION.RESOLVE_ERRORS", "VERIFICATION.APPROVED", "VERIFICATION.REJECTED", "VERIFICATION.IN_PROGRESS",
	"INTERNAL_ACCOUNT.STATUS_UPDATED", "INTERNAL_ACCOUNT.BALANCE_UPDATED",
	"EXTERNAL_ACCOUNT.STATUS_UPDATED",
	"INVITATION.CLAIMED",
}

// Every webhook body the service sends validates against the reference's
// webhook for its type (the envelope and the data of that type), on both
// stores: real state changes through the HTTP stack, delivered signed to
// a receiver; a type no reference webhook lists fails.
func TestWebhookBodiesMatchReference(t *testing.T) {
	onBothStores(t, func(t *testing.T, env *apiEnv, clock *testkit.FakeClock, a apiTarget, recv *hookReceiver) {
		// drain runs the jobs and the deliveries, the clock moving on
		// by a minute a round, until three rounds in a row deliver
		// nothing and run at most one job (the orphan-hold reaper runs
		// every minute); a quote's lifetime is a few minutes.
		drain := func() {
			t.Helper()
			for idle, round := 0, 0; idle < 3; round++ {
				require.Less(t, round, 100, "the jobs never settle")
				n, err := env.svc.runner.RunAll(t.Context(), 200)
				require.NoError(t, err)
				m, err := env.svc.webhooks.RunAll(t.Context(), 200)
				require.NoError(t, err)
				clock.Advance(time.Minute)
				idle++
				if n > 1 || m > 0 {
					idle = 0
				}
			}
		}

		// Payments out: a payout, a failed one, and quotes that
		// expire, are returned (a refund pending, then completed), are
		// cancelled (refunded) or fail with their refund.
		p := newPayer(t, a, "contract@example.com")
		a.created(t, "POST", "/sandbox/internal-accounts/"+p.account+"/fund", `{"amount":100000}`)
		a.created(t, "POST", "/transfer-out", p.payout(2500))
		failing := a.created(t, "POST", "/customers/external-accounts", externalBody(p.customer, "USD_ACCOUNT", "002"))
		a.created(t, "POST", "/transfer-out",
			fmt.Sprintf(`{"source":{"accountId":%q},"destination":{"accountId":%q},"amount":1000}`, p.account, failing))
		quote := func(suffix string) string {
			dest := a.created(t, "POST", "/customers/external-accounts", externalBody(p.customer, "EUR_ACCOUNT", suffix))
			return a.created(t, "POST", "/quotes", fmt.Sprintf(`{"source":{"sourceType":"ACCOUNT","accountId":%q},`+
				`"destination":{"destinationType":"ACCOUNT","accountId":%q},"lockedCurrencySide":"SENDING","lockedCurrencyAmount":1000}`,
				p.account, dest))
		}
		quote(externalfixture.DefaultSuffix) // expires unexecuted
		for _, suffix := range []string{"005", "006", "007"} {
			a.created(t, "POST", "/quotes/"+quote(suffix)+"/execute", "")
		}
		drain()

		// A payment in, approved by the endpoint's 200.
		inv := a.created(t, "POST", "/customers", `{"customerType":"INDIVIDUAL","region":"US","umaAddress":"$inviter@sandbox.local"}`)
		r := a.do(t, 0, "POST", "/sandbox/uma/receive", fmt.Sprintf(`{"senderUmaAddress":"$success.usd@sandbox.local",`+
			`"customerId":%q,"receivingCurrencyCode":"USD","receivingCurrencyAmount":700}`, p.customer))
		require.Equal(t, 200, r.status, "%s", r.body)
		drain()

		// Deposits: a quote crediting the customer's account, funded
		// (approved by the endpoint's 200), and one funded with the
		// wrong amount (failed, its funds returned).
		for _, amount := range []string{"", `,"currencyAmount":1`} {
			d := a.created(t, "POST", "/quotes", fmt.Sprintf(`{"source":{"sourceType":"REALTIME_FUNDING","currency":"USDC",`+
				`"cryptoNetwork":"SOLANA","customerId":%q},"destination":{"destinationType":"ACCOUNT","accountId":%q},`+
				`"lockedCurrencySide":"RECEIVING","lockedCurrencyAmount":1500}`, p.customer, p.account))
			r = a.do(t, 0, "POST", "/sandbox/send", fmt.Sprintf(`{"quoteId":%q,"currencyCode":"USDC"%s}`, d, amount))
			require.Equal(t, 200, r.status, "%s", r.body)
		}
		drain()

		// KYC: data missing, then pending, rejected and approved.
		for _, name := range []string{"", "Ada Lovelace001", "Ada Lovelace002", "Ada Lovelace"} {
			body := `{"customerType":"INDIVIDUAL","region":"US"}`
			if name != "" {
				body = fmt.Sprintf(`{"customerType":"INDIVIDUAL","region":"US","fullName":%q,"birthDate":"1990-01-15",`+
					`"idType":"SSN","identifier":"123-45-6789","address":{"line1":"1 Main St","city":"Austin","state":"TX",`+
					`"postalCode":"73301","country":"US"}}`, name)
			}
			c := a.created(t, "POST", "/customers", body)
			r = a.do(t, 0, "POST", "/verifications", fmt.Sprintf(`{"customerId":%q}`, c))
			require.Equal(t, 200, r.status, "%s", r.body)
		}

		// An invitation claimed; an external account and a customer
		// deleted.
		r = a.do(t, 0, "POST", "/invitations", `{"inviterUma":"$inviter@sandbox.local","firstName":"Ann","amountToSend":500}`)
		require.Equal(t, 201, r.status, "%s", r.body)
		code := r.json(t)["code"].(string)
		r = a.do(t, 0, "POST", "/invitations/"+code+"/claim", `{"inviteeUma":"$ben@other.example"}`)
		require.Equal(t, 200, r.status, "%s", r.body)
		r = a.do(t, 0, "DELETE", "/customers/external-accounts/"+failing, "")
		require.Contains(t, []int{200, 204}, r.status, "%s", r.body)
		r = a.do(t, 0, "DELETE", "/customers/"+inv, "")
		require.Contains(t, []int{200, 204}, r.status, "%s", r.body)
		drain()

		got, bodies, sigs := recv.received()
		key := a.do(t, 0, "GET", "/webhooks/public-key", "").json(t)["publicKeyPem"].(string)
		seen := map[string]bool{}
		for i, e := range got {
			require.NoError(t, webhooks.Verify(key, bodies[i], sigs[i]), "signature of %s", e.Type)
			if !seen[e.Type] {
				t.Logf("%s: %s", e.Type, bodies[i])
			}
			seen[e.Type] = true
			apischema.VerifyWebhook(t, bodies[i])
		}
		var types []string
		for typ := range seen {
			types = append(types, typ)
		}
		sort.Strings(types)
		want := slices.Clone(webhookContractTypes)
		sort.Strings(want)
		assert.Equal(t, want, types, "the webhook types the flows produce")
	})
}

// onBothStores runs test on the memory and the PostgreSQL store: the API
// on a fake clock (settling at once) with a webhook receiver as the
// platform's endpoint.
func onBothStores(t *testing.T, test func(t *testing.T, env *apiEnv, clock *testkit.FakeClock, a apiTarget, recv *hookReceiver)) {
	for _, backend := range []string{"memory", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			clock := testkit.NewFakeClock(time.Now().UTC().Truncate(time.Second))
			env := newAPIEnvClock(t, backend, clock, func(c *Config) { c.SettlementDelay = 0 })
			a, recv, _ := hookedAPI(t, env)
			test(t, env, clock, a, recv)
		})
	}
}

// A funding and a transfer-out each record INTERNAL_ACCOUNT.BALANCE_UPDATED
// with the account as the API shows it, balances after the change (the
// hold lowers the balance, the payout the total); a refused transfer-out
// records none.
func TestBalanceUpdatedEvents(t *testing.T) {
	onBothStores(t, func(t *testing.T, env *apiEnv, clock *testkit.FakeClock, a apiTarget, recv *hookReceiver) {
		p := newPayer(t, a, "balances@example.com")
		// balances are the account's balance events: balance and
		// total balance of each, as delivered.
		balances := func() [][2]int64 {
			t.Helper()
			for range 20 {
				// (The clock moves before each round: events about one
				// resource are ordered by their time.)
				clock.Advance(time.Second)
				_, err := env.svc.runner.RunAll(t.Context(), 100)
				require.NoError(t, err)
				_, err = env.svc.webhooks.RunAll(t.Context(), 100)
				require.NoError(t, err)
			}
			got, bodies, _ := recv.received()
			var out [][2]int64
			for i, e := range got {
				var data struct {
					ID                    string
					Balance, TotalBalance struct{ Amount int64 }
				}
				if e.Type != "INTERNAL_ACCOUNT.BALANCE_UPDATED" {
					continue
				}
				require.NoError(t, json.Unmarshal(e.Data, &data))
				if data.ID != p.account {
					continue
				}
				apischema.VerifyWebhook(t, bodies[i])
				out = append(out, [2]int64{data.Balance.Amount, data.TotalBalance.Amount})
			}
			return out
		}
		a.created(t, "POST", "/sandbox/internal-accounts/"+p.account+"/fund", `{"amount":10000}`)
		assert.Equal(t, [][2]int64{{10000, 10000}}, balances(), "funded")

		a.created(t, "POST", "/transfer-out", p.payout(2500))
		assert.Equal(t, [][2]int64{{10000, 10000}, {7500, 10000}, {7500, 7500}}, balances(), "held, then paid out")

		r := a.do(t, 0, "POST", "/transfer-out", p.payout(1_000_000))
		require.Equal(t, 400, r.status, "%s", r.body)
		assert.Len(t, balances(), 3, "a refused transfer-out moves no money and records no event")

		// The last event's data is the account as the API lists it.
		got, _, _ := recv.received()
		var last json.RawMessage
		for _, e := range got {
			if e.Type == "INTERNAL_ACCOUNT.BALANCE_UPDATED" {
				last = e.Data
			}
		}
		r = a.do(t, 0, "GET", "/customers/internal-accounts?customerId="+p.customer+"&type=INTERNAL_FIAT&currency=USD", "")
		require.Equal(t, 200, r.status)
		listed, err := json.Marshal(r.json(t)["data"].([]any)[0])
		require.NoError(t, err)
		assert.JSONEq(t, string(listed), string(last))
	})
}
