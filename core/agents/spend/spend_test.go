package spend_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	fxstatic "github.com/corridorpay/corridor/adapters/fx/static"
	"github.com/corridorpay/corridor/adapters/memory"
	"github.com/corridorpay/corridor/adapters/postgres"
	"github.com/corridorpay/corridor/adapters/rails/sandbox"
	"github.com/corridorpay/corridor/core/accounts"
	"github.com/corridorpay/corridor/core/agents"
	"github.com/corridorpay/corridor/core/agents/policy"
	"github.com/corridorpay/corridor/core/agents/spend"
	"github.com/corridorpay/corridor/core/customers"
	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/core/platforms"
	"github.com/corridorpay/corridor/core/quotes"
	"github.com/corridorpay/corridor/core/transactions"
	"github.com/corridorpay/corridor/core/transfers"
	"github.com/corridorpay/corridor/core/walletauth"
	"github.com/corridorpay/corridor/ledger"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit"
	"github.com/corridorpay/corridor/testkit/coretest"
	"github.com/corridorpay/corridor/testkit/pgtest"
)

// flakyStore fails the next unit of work when fail is set: a crash
// between an action's execution and its record.
type flakyStore struct {
	ports.Store
	fail atomic.Bool
}

func (s *flakyStore) InTx(ctx context.Context, fn func(ports.Tx) error) error {
	if s.fail.CompareAndSwap(true, false) {
		return errors.New("the process died")
	}
	return s.Store.InTx(ctx, fn)
}

type env struct {
	*coretest.Env
	flaky    *flakyStore
	agents   *agents.Service
	quotes   *quotes.Service
	spend    *spend.Service
	tr       *transfers.Service
	platform string
	customer ports.Customer
	usd      ports.InternalAccount
	eurDest  ports.ExternalAccount
	usdDest  ports.ExternalAccount
}

func newEnv(t *testing.T, b coretest.Backend, usage ports.AgentUsageStore) *env {
	t.Helper()
	c := coretest.New(t, b, sandbox.Factory(b.Clock))
	rates := fxstatic.Default(b.Clock)
	log := coretest.QuietLog()
	e := &env{Env: c,
		agents: agents.New(c.Store, c.Clock, c.IDs, log),
		quotes: quotes.New(c.Store, c.Ledger, c.Rails, rates,
			walletauth.New(c.Store, memory.NewSingleUse(c.Clock), nil, nil, c.Clock, c.IDs, walletauth.Options{Sandbox: true}), c.Clock, c.IDs,
			quotes.Options{Logger: log, Sandbox: true}),
	}
	tr := transfers.New(c.Store, c.Ledger, c.Rails, c.Clock, c.IDs, transfers.Options{Logger: log})
	e.tr = tr
	e.flaky = &flakyStore{Store: c.Store}
	e.spend = spend.New(spend.Deps{Store: e.flaky, Ledger: c.Ledger, Agents: e.agents, Quotes: e.quotes, Transfers: tr,
		Usage: usage, FX: rates, Clock: c.Clock, IDs: c.IDs, Log: log})
	e.quotes.Register(e.Runner)
	tr.Register(e.Runner)
	e.agents.Register(e.Runner)
	e.spend.Wire(e.Runner)

	e.platform = e.Platform("USD", "EUR")
	region, email := "US", "ada@example.com"
	cust, err := e.Customers.Create(context.Background(), e.platform, customers.Input{CustomerType: "INDIVIDUAL", Region: &region, Email: &email})
	require.NoError(t, err)
	e.customer = cust
	e.usd = e.InternalAccount(ports.InternalAccountFilter{PlatformID: e.platform, CustomerID: cust.ID, Currency: "USD", Type: accounts.TypeInternalFiat})
	e.Fund(e.platform, e.usd.ID, 100_000)
	e.eurDest = e.External(e.platform, cust.ID, "EUR", ports.AccountInfo{
		AccountType: "EUR_ACCOUNT", IBAN: "DE89370400440532013000", SwiftCode: "COBADEFFXXX",
		Beneficiary: &ports.Beneficiary{BeneficiaryType: "INDIVIDUAL", FullName: "Ada Lovelace"}})
	e.usdDest = e.External(e.platform, cust.ID, "USD", ports.AccountInfo{
		AccountType: "USD_ACCOUNT", AccountNumber: "12345678000", RoutingNumber: "021000021", BankAccountType: "CHECKING",
		BankName: "Test Bank", Beneficiary: &ports.Beneficiary{BeneficiaryType: "INDIVIDUAL", FullName: "Ada Lovelace"}})
	return e
}

func onBoth(t *testing.T, fn func(t *testing.T, e *env)) {
	t.Run("memory", func(t *testing.T) { fn(t, newEnv(t, coretest.Memory(), memory.NewAgentUsageStore())) })
	t.Run("postgres", func(t *testing.T) {
		dsn := pgtest.NewDatabase(t)
		b := coretest.Memory()
		store, led, closeFn := coretest.OpenPostgres(t, dsn, b.Clock)
		t.Cleanup(closeFn)
		db, err := postgres.Open(context.Background(), dsn, postgres.MaxConns(8))
		require.NoError(t, err)
		t.Cleanup(func() { _ = db.Close() })
		fn(t, newEnv(t, coretest.Backend{Clock: b.Clock, Store: store, Ledger: led}, postgres.NewAgentUsageStore(db)))
	})
}

func (e *env) agent(mode policy.ExecutionMode, edit func(*policy.Policy)) ports.Agent {
	e.T.Helper()
	p := policy.Policy{Permissions: policy.Permissions, DefaultExecutionMode: mode,
		SpendingLimits: policy.SpendingLimits{Currency: "USD", PerTransactionLimit: 50_000, DailyLimit: policy.Int(80_000)}}
	if edit != nil {
		edit(&p)
	}
	raw, err := json.Marshal(p)
	require.NoError(e.T, err)
	c, err := e.agents.Create(context.Background(), e.platform, agents.CreateInput{Name: "bot", CustomerID: e.customer.ID, Policy: raw})
	require.NoError(e.T, err)
	return c.Agent
}

func (e *env) quote(a ports.Agent, amount int64) ports.Quote {
	e.T.Helper()
	q, err := e.spend.CreateQuote(context.Background(), a, quotes.CreateRequest{
		Source:      quotes.Source{Type: quotes.SourceAccount, AccountID: e.usd.ID},
		Destination: quotes.Destination{Type: "ACCOUNT", AccountID: e.eurDest.ID},
		LockedSide:  "SENDING", LockedAmount: amount})
	require.NoError(e.T, err)
	return q
}

// pendingQuote is an APPROVAL_REQUIRED agent's quote execution of amount,
// waiting for the platform.
func (e *env) pendingQuote(amount int64) (ports.Agent, ports.Quote, ports.AgentAction) {
	e.T.Helper()
	a := e.agent(policy.ApprovalRequired, nil)
	q := e.quote(a, amount)
	act, err := e.spend.ExecuteQuote(context.Background(), a, q.ID, "")
	require.NoError(e.T, err)
	return a, q, act
}

func (e *env) available() int64 { return e.LedgerAccount(e.usd.ID).Available() }

func (e *env) action(id string) ports.AgentAction {
	e.T.Helper()
	act, err := e.Store.Read().AgentActions().Get(context.Background(), e.platform, id)
	require.NoError(e.T, err)
	return act
}

func (e *env) usage(a ports.Agent) agents.Usage {
	e.T.Helper()
	u, err := e.spend.Usage(context.Background(), a)
	require.NoError(e.T, err)
	return u
}

func kind(t *testing.T, err error) fault.Kind {
	t.Helper()
	require.Error(t, err)
	f, ok := fault.As(err)
	require.True(t, ok, "%v", err)
	return f.Kind
}

func TestAutoQuoteExecution(t *testing.T) {
	onBoth(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		a := e.agent(policy.Auto, nil)
		q := e.quote(a, 10_000)
		act, err := e.spend.ExecuteQuote(ctx, a, q.ID, "")
		require.NoError(t, err)
		assert.Equal(t, agents.StatusApproved, act.Status)
		assert.Equal(t, q.TransactionID, act.TransactionID)
		assert.Equal(t, agents.ActionExecuteQuote, act.Type)
		assert.Equal(t, int64(10_000), act.Charged)
		txn, err := e.Store.Read().Transactions().Get(ctx, e.platform, act.TransactionID)
		require.NoError(t, err)
		assert.Equal(t, a.ID, txn.AgentID, "the quote's transaction names the agent")
		assert.Equal(t, int64(90_000), e.available())
		assert.Equal(t, 1, e.usage(a).DailyTransactionCount)
		assert.Equal(t, int64(10_000), e.usage(a).DailySpend)

		// Executing it again: the same action, nothing more moves.
		again, err := e.spend.ExecuteQuote(ctx, a, q.ID, "")
		require.NoError(t, err)
		assert.Equal(t, act.ID, again.ID)
		assert.Equal(t, int64(90_000), e.available())
		assert.Equal(t, 1, e.usage(a).DailyTransactionCount)

		e.RunJobs()
		assert.Equal(t, quotes.StatusCompleted, e.quoteOf(q.ID).Status)
		e.Verify()
	})
}

func (e *env) quoteOf(id string) ports.Quote {
	e.T.Helper()
	q, err := e.quotes.Get(context.Background(), e.platform, id)
	require.NoError(e.T, err)
	return q
}

func TestApprovalHoldsThenApproveExecutes(t *testing.T) {
	onBoth(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		a, q, act := e.pendingQuote(30_000)
		assert.Equal(t, agents.StatusPendingApproval, act.Status)
		assert.Empty(t, act.TransactionID)
		// The funds are held: not spendable twice.
		assert.Equal(t, int64(70_000), e.available())
		assert.Equal(t, quotes.StatusPending, e.quoteOf(q.ID).Status)
		events, _, err := e.Store.Read().Events().List(ctx, ports.EventFilter{PlatformID: e.platform}, ports.Page{Limit: 50})
		require.NoError(t, err)
		var pending int
		for _, ev := range events {
			if ev.Type == agents.EventPendingApproval && ev.ResourceID == act.ID {
				pending++
			}
		}
		assert.Equal(t, 1, pending, "the AGENT_ACTION.PENDING_APPROVAL event")

		out, err := e.agents.Approve(ctx, e.platform, a.ID, act.ID)
		require.NoError(t, err)
		assert.Equal(t, agents.StatusApproved, out.Status)
		assert.Equal(t, q.TransactionID, out.TransactionID)
		assert.Equal(t, int64(70_000), e.available(), "the hold passed to the quote's holds")
		hold, err := e.Ledger.Pending(ctx, "agent-hold:"+act.ID)
		require.NoError(t, err)
		assert.Equal(t, ledger.PendingVoided, hold.Status)
		assert.Equal(t, quotes.StatusProcessing, e.quoteOf(q.ID).Status)

		_, err = e.agents.Approve(ctx, e.platform, a.ID, act.ID)
		assert.Equal(t, fault.KindConflict, kind(t, err))
		e.RunJobs()
		assert.Equal(t, quotes.StatusCompleted, e.quoteOf(q.ID).Status)
		assert.Equal(t, agents.StatusApproved, e.action(act.ID).Status)
		assert.Equal(t, int64(70_000), e.LedgerAccount(e.usd.ID).Net())
		e.Verify()
	})
}

func TestRejectReleasesHoldAndUsage(t *testing.T) {
	onBoth(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		a, q, act := e.pendingQuote(30_000)
		assert.Equal(t, int64(30_000), e.usage(a).DailySpend)
		out, err := e.agents.Reject(ctx, e.platform, a.ID, act.ID, "too much")
		require.NoError(t, err)
		assert.Equal(t, agents.StatusRejected, out.Status)
		e.RunJobs()
		assert.Equal(t, int64(100_000), e.available(), "no money moves, the hold is released")
		assert.Equal(t, int64(100_000), e.LedgerAccount(e.usd.ID).Net())
		assert.Equal(t, int64(0), e.usage(a).DailySpend, "the usage is given back")
		assert.Equal(t, 0, e.usage(a).DailyTransactionCount)
		assert.Equal(t, quotes.StatusPending, e.quoteOf(q.ID).Status)
		e.Verify()
	})
}

// Deleting an agent withdraws what it left waiting: its actions are
// REJECTED, their holds released and usage given back, and neither the
// platform nor a late approval can run them.
func TestDeletingAnAgentRejectsItsWaitingActions(t *testing.T) {
	onBoth(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		a, q, act := e.pendingQuote(30_000)
		require.NoError(t, e.agents.Delete(ctx, e.platform, a.ID))
		got := e.action(act.ID)
		assert.Equal(t, agents.StatusRejected, got.Status)
		assert.Equal(t, "The agent was deleted", got.RejectionReason)
		e.RunJobs()
		assert.Equal(t, int64(100_000), e.available(), "the hold is released")
		assert.Equal(t, int64(100_000), e.LedgerAccount(e.usd.ID).Net(), "no money moved")
		assert.Equal(t, quotes.StatusPending, e.quoteOf(q.ID).Status)
		_, err := e.agents.Approve(ctx, e.platform, a.ID, act.ID)
		assert.Equal(t, fault.KindNotFound, kind(t, err), "the agent is gone")
		_, err = e.agents.Reject(ctx, e.platform, a.ID, act.ID, "")
		assert.Equal(t, fault.KindNotFound, kind(t, err))
		e.Verify()
	})
}

func TestQuoteExpiringBeforeApprovalFails(t *testing.T) {
	onBoth(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		a, q, act := e.pendingQuote(30_000)
		e.Clock.Set(q.ExpiresAt)
		e.RunJobs()
		assert.Equal(t, agents.StatusFailed, e.action(act.ID).Status)
		assert.Equal(t, int64(100_000), e.available())
		assert.Equal(t, int64(0), e.usage(a).DailySpend)
		_, err := e.agents.Approve(ctx, e.platform, a.ID, act.ID)
		assert.Equal(t, fault.KindConflict, kind(t, err))
		e.Verify()
	})
}

// Approved after the quote expired (its check job not run yet): FAILED,
// hold voided, usage given back.
func TestApproveAfterExpiryFails(t *testing.T) {
	onBoth(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		a, q, act := e.pendingQuote(30_000)
		e.Clock.Set(q.ExpiresAt.Add(time.Second))
		out, err := e.agents.Approve(ctx, e.platform, a.ID, act.ID)
		require.NoError(t, err)
		assert.Equal(t, agents.StatusFailed, out.Status)
		assert.Empty(t, out.TransactionID)
		assert.Equal(t, int64(100_000), e.available())
		assert.Equal(t, int64(0), e.usage(a).DailySpend)
		e.RunJobs()
		assert.Equal(t, agents.StatusFailed, e.action(act.ID).Status)
		e.Verify()
	})
}

func TestTransferOutAutoAndApproved(t *testing.T) {
	onBoth(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		a := e.agent(policy.Auto, func(p *policy.Policy) {
			p.ApprovalThresholds = &policy.ApprovalThresholds{Currency: "USD", Amount: policy.Int(20_000)}
		})
		req := transfers.OutRequest{SourceAccountID: e.usd.ID, DestinationAccountID: e.usdDest.ID, Amount: 20_000}
		act, err := e.spend.TransferOut(ctx, a, req)
		require.NoError(t, err)
		assert.Equal(t, agents.StatusApproved, act.Status)
		require.NotEmpty(t, act.TransactionID)
		txn, err := e.Store.Read().Transactions().Get(ctx, e.platform, act.TransactionID)
		require.NoError(t, err)
		assert.Equal(t, a.ID, txn.AgentID)
		assert.Equal(t, int64(80_000), e.available())

		// Above the threshold: approval, the funds held meanwhile.
		req.Amount = 20_001
		act, err = e.spend.TransferOut(ctx, a, req)
		require.NoError(t, err)
		assert.Equal(t, agents.StatusPendingApproval, act.Status)
		assert.Equal(t, int64(59_999), e.available())
		out, err := e.agents.Approve(ctx, e.platform, a.ID, act.ID)
		require.NoError(t, err)
		assert.Equal(t, agents.StatusApproved, out.Status)
		require.NotEmpty(t, out.TransactionID)
		assert.Equal(t, int64(59_999), e.available())
		e.RunJobs()
		assert.Equal(t, int64(59_999), e.available())
		e.Verify()
	})
}

func TestRefusals(t *testing.T) {
	onBoth(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		a := e.agent(policy.Auto, func(p *policy.Policy) { p.SpendingLimits.PerTransactionLimit = 1_000 })
		// Over the per-transaction limit: 403, nothing moves, no usage.
		_, err := e.spend.TransferOut(ctx, a, transfers.OutRequest{SourceAccountID: e.usd.ID, DestinationAccountID: e.usdDest.ID, Amount: 1_001})
		assert.Equal(t, fault.KindForbidden, kind(t, err))
		assert.Equal(t, int64(100_000), e.available())
		assert.Equal(t, int64(0), e.usage(a).DailySpend)

		// Another customer's accounts and quotes are not found.
		region, email := "US", "grace@example.com"
		other, err := e.Customers.Create(ctx, e.platform, customers.Input{CustomerType: "INDIVIDUAL", Region: &region, Email: &email})
		require.NoError(t, err)
		otherUSD := e.InternalAccount(ports.InternalAccountFilter{PlatformID: e.platform, CustomerID: other.ID, Currency: "USD", Type: accounts.TypeInternalFiat})
		_, err = e.spend.TransferOut(ctx, a, transfers.OutRequest{SourceAccountID: otherUSD.ID, DestinationAccountID: e.usdDest.ID, Amount: 1})
		assert.Equal(t, fault.KindNotFound, kind(t, err))
		otherAgent := e.agent(policy.Auto, nil)
		otherAgent.CustomerID = other.ID
		q := e.quote(a, 500)
		_, err = e.spend.GetQuote(ctx, otherAgent, q.ID)
		assert.Equal(t, fault.KindNotFound, kind(t, err))
		_, err = e.spend.ExecuteQuote(ctx, otherAgent, q.ID, "")
		assert.Equal(t, fault.KindNotFound, kind(t, err))

		// An id of the wrong kind is 400 naming its field, as on the
		// platform's operations.
		_, err = e.spend.TransferOut(ctx, a, transfers.OutRequest{SourceAccountID: e.usdDest.ID, DestinationAccountID: e.usd.ID, Amount: 1})
		testkit.RequireFault(t, err, fault.KindInvalid, "INVALID_INPUT", "source.accountId", "destination.accountId")
		_, err = e.spend.TransferIn(ctx, a, transfers.InRequest{SourceAccountID: e.usd.ID, DestinationAccountID: "zzz", Amount: 1})
		testkit.RequireFault(t, err, fault.KindInvalid, "INVALID_INPUT", "source.accountId", "destination.accountId")
		_, err = e.spend.CreateQuote(ctx, a, quotes.CreateRequest{
			Source:      quotes.Source{Type: quotes.SourceAccount, AccountID: e.usdDest.ID},
			Destination: quotes.Destination{Type: "ACCOUNT", AccountID: e.usd.ID}, LockedSide: "SENDING", LockedAmount: 1})
		testkit.RequireFault(t, err, fault.KindInvalid, "INVALID_INPUT", "source.accountId", "destination.accountId")

		// A paused agent initiates nothing.
		paused := a
		paused.IsPaused = true
		_, err = e.spend.ExecuteQuote(ctx, paused, q.ID, "")
		assert.Equal(t, fault.KindForbidden, kind(t, err))
		_, err = e.spend.CreateQuote(ctx, paused, quotes.CreateRequest{})
		assert.Equal(t, fault.KindForbidden, kind(t, err))

		// Without the permission.
		noQuotes := e.agent(policy.Auto, func(p *policy.Policy) { p.Permissions = []policy.Permission{policy.CreateQuotes} })
		_, err = e.spend.ExecuteQuote(ctx, noQuotes, e.quote(noQuotes, 500).ID, "")
		assert.Equal(t, fault.KindForbidden, kind(t, err))
		// Another agent of the same customer does not find the quote.
		_, err = e.spend.GetQuote(ctx, noQuotes, q.ID)
		assert.Equal(t, fault.KindNotFound, kind(t, err))
		_, err = e.spend.ExecuteQuote(ctx, noQuotes, q.ID, "")
		assert.Equal(t, fault.KindNotFound, kind(t, err))

		// Not enough funds for the hold: 400, the usage given back.
		pending := e.agent(policy.ApprovalRequired, func(p *policy.Policy) {
			p.SpendingLimits.PerTransactionLimit, p.SpendingLimits.DailyLimit = 500_000, nil
		})
		_, err = e.spend.TransferOut(ctx, pending, transfers.OutRequest{SourceAccountID: e.usd.ID, DestinationAccountID: e.usdDest.ID, Amount: 100_001})
		assert.Equal(t, fault.KindInvalid, kind(t, err))
		assert.Equal(t, int64(0), e.usage(pending).DailySpend)
	})
}

// The platform's per-currency settings refuse an agent's transfer when it
// asks, before anything is held or counted, even one that would wait for
// approval.
func TestTransfersKeepThePlatformCurrencySettings(t *testing.T) {
	onBoth(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		a := e.agent(policy.ApprovalRequired, nil)
		require.NoError(t, e.Store.InTx(ctx, func(tx ports.Tx) error {
			p, err := tx.Platforms().GetForUpdate(ctx, e.platform)
			if err != nil {
				return err
			}
			p.CurrencySettings = []ports.CurrencySetting{{Code: "USD", MinAmount: 100, MaxAmount: 5_000,
				RequiredCounterpartyFields: []ports.CounterpartyField{}, EnabledTransactionTypes: []string{"OUTGOING"}}}
			return tx.Platforms().Update(ctx, p)
		}))
		_, err := e.spend.TransferOut(ctx, a, transfers.OutRequest{SourceAccountID: e.usd.ID, DestinationAccountID: e.usdDest.ID, Amount: 5_001})
		var f *fault.Error
		require.ErrorAs(t, err, &f)
		assert.Equal(t, platforms.CodeAmountOutOfRange, f.Code)
		_, err = e.spend.TransferIn(ctx, a, transfers.InRequest{SourceAccountID: e.usdDest.ID, DestinationAccountID: e.usd.ID, Amount: 1_000})
		assert.Equal(t, fault.KindInvalid, kind(t, err), "no INCOMING in USD")
		assert.Equal(t, int64(100_000), e.available(), "nothing held")
		assert.Equal(t, int64(0), e.usage(a).DailySpend, "nothing counted")
		act, err := e.spend.TransferOut(ctx, a, transfers.OutRequest{SourceAccountID: e.usd.ID, DestinationAccountID: e.usdDest.ID, Amount: 5_000})
		require.NoError(t, err)
		assert.Equal(t, agents.StatusPendingApproval, act.Status)
	})
}

// Concurrent transfer-outs whose sum would break the daily limit: the
// accepted ones stay within it and the usage equals their sum.
func TestConcurrentTransferOutsKeepTheDailyLimit(t *testing.T) {
	onBoth(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		a := e.agent(policy.Auto, func(p *policy.Policy) { p.SpendingLimits.DailyLimit = policy.Int(25_000) })
		var (
			wg       sync.WaitGroup
			mu       sync.Mutex
			accepted int64
		)
		for i := range 40 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				amount := int64(1_000 + 100*(i%5))
				_, err := e.spend.TransferOut(ctx, a, transfers.OutRequest{SourceAccountID: e.usd.ID, DestinationAccountID: e.usdDest.ID, Amount: amount})
				if err == nil {
					mu.Lock()
					accepted += amount
					mu.Unlock()
					return
				}
				f, ok := fault.As(err)
				assert.True(t, ok && f.Kind == fault.KindForbidden, "%v", err)
			}()
		}
		wg.Wait()
		assert.LessOrEqual(t, accepted, int64(25_000))
		assert.Equal(t, accepted, e.usage(a).DailySpend)
		assert.Equal(t, 100_000-accepted, e.available())
	})
}

// A crash between an AUTO action's execution and its record: the money
// moved once, the usage stays counted, and the hold's check job records
// the action APPROVED with its transaction.
func TestExecutedButUnrecordedActionIsRecordedByItsCheck(t *testing.T) {
	onBoth(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		a := e.agent(policy.Auto, nil)
		q := e.quote(a, 10_000)
		e.flaky.fail.Store(true)
		_, err := e.spend.ExecuteQuote(ctx, a, q.ID, "")
		require.Error(t, err)
		assert.Equal(t, int64(90_000), e.available(), "executed once")
		assert.Equal(t, int64(10_000), e.usage(a).DailySpend, "still counted")
		acts, _, err := e.Store.Read().AgentActions().List(ctx, ports.AgentActionFilter{PlatformID: e.platform, AgentID: a.ID}, ports.Page{Limit: 10})
		require.NoError(t, err)
		require.Empty(t, acts)

		e.Clock.Set(q.ExpiresAt)
		e.RunJobs()
		acts, _, err = e.Store.Read().AgentActions().List(ctx, ports.AgentActionFilter{PlatformID: e.platform, AgentID: a.ID}, ports.Page{Limit: 10})
		require.NoError(t, err)
		require.Len(t, acts, 1)
		assert.Equal(t, agents.StatusApproved, acts[0].Status)
		assert.Equal(t, q.TransactionID, acts[0].TransactionID)
		assert.Equal(t, int64(10_000), e.usage(a).DailySpend)
		e.Verify()

		// A transfer-out whose record fails, retried with its key: the
		// retry records the first execution; nothing moves twice.
		req := transfers.OutRequest{SourceAccountID: e.usd.ID, DestinationAccountID: e.usdDest.ID, Amount: 5_000, IdempotencyKey: "k"}
		e.flaky.fail.Store(true)
		_, err = e.spend.TransferOut(ctx, a, req)
		require.Error(t, err)
		act, err := e.spend.TransferOut(ctx, a, req)
		require.NoError(t, err)
		assert.Equal(t, agents.StatusApproved, act.Status)
		assert.NotEmpty(t, act.TransactionID)
		assert.Equal(t, int64(85_000), e.available())
		assert.Equal(t, int64(15_000), e.usage(a).DailySpend)
		e.Verify()
	})
}

// A crash between an action's hold and its record, before anything ran:
// the check job gives the hold and the usage back; a keyed retry before
// that records the action with its hold and usage, once.
func TestHoldWithoutActionIsGivenBack(t *testing.T) {
	onBoth(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		a := e.agent(policy.ApprovalRequired, nil)
		keyed := transfers.OutRequest{SourceAccountID: e.usd.ID, DestinationAccountID: e.usdDest.ID, Amount: 7_000, IdempotencyKey: "k"}
		e.flaky.fail.Store(true)
		_, err := e.spend.TransferOut(ctx, a, keyed)
		require.Error(t, err)
		act, err := e.spend.TransferOut(ctx, a, keyed)
		require.NoError(t, err)
		assert.Equal(t, agents.StatusPendingApproval, act.Status)
		assert.Equal(t, int64(93_000), e.available())
		assert.Equal(t, int64(7_000), e.usage(a).DailySpend)
		_, err = e.agents.Reject(ctx, e.platform, a.ID, act.ID, "")
		require.NoError(t, err)
		e.RunJobs()
		assert.Equal(t, int64(0), e.usage(a).DailySpend)
		assert.Equal(t, int64(100_000), e.available())

		e.flaky.fail.Store(true)
		_, err = e.spend.TransferOut(ctx, a, transfers.OutRequest{SourceAccountID: e.usd.ID, DestinationAccountID: e.usdDest.ID, Amount: 5_000})
		require.Error(t, err)
		assert.Equal(t, int64(5_000), e.usage(a).DailySpend, "held, so counted until its check")
		e.Advance(11 * time.Minute)
		assert.Equal(t, int64(100_000), e.available())
		assert.Equal(t, int64(0), e.usage(a).DailySpend)
		e.Verify()
	})
}

// usdExternal is a USD bank account of the customer whose number (its
// last three digits) picks the sandbox outcome.
func (e *env) usdExternal(number string) ports.ExternalAccount {
	return e.External(e.platform, e.customer.ID, "USD", ports.AccountInfo{
		AccountType: "USD_ACCOUNT", AccountNumber: number, RoutingNumber: "021000021", BankAccountType: "CHECKING",
		BankName: "Test Bank", Beneficiary: &ports.Beneficiary{BeneficiaryType: "INDIVIDUAL", FullName: "Ada Lovelace"}})
}

// A transfer-out its receiving bank rejects (REJECTED) gives the agent's
// usage back and fails its action, as a failed one does.
func TestRejectedTransferGivesUsageBack(t *testing.T) {
	onBoth(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		a := e.agent(policy.Auto, nil)
		rejecting := e.usdExternal("12345678004")
		act, err := e.spend.TransferOut(ctx, a, transfers.OutRequest{SourceAccountID: e.usd.ID, DestinationAccountID: rejecting.ID, Amount: 2_000})
		require.NoError(t, err)
		assert.Equal(t, int64(2_000), e.usage(a).DailySpend)
		e.RunJobs()
		e.Advance(time.Minute)
		txn, err := e.Store.Read().Transactions().Get(ctx, e.platform, act.TransactionID)
		require.NoError(t, err)
		require.Equal(t, transactions.StatusRejected, txn.Status)
		assert.Empty(t, txn.FailureReason)
		e.RunJobs()
		assert.Equal(t, int64(0), e.usage(a).DailySpend, "given back")
		assert.Equal(t, agents.StatusFailed, e.action(act.ID).Status)
		assert.Equal(t, int64(100_000), e.available())
		e.Verify()
	})
}

// A payment an agent made that does not go through gives its usage back:
// a transfer-out the rail fails, a quote whose payout fails, a transfer
// the platform cancels; one on its way keeps counting, and so does one
// whose refund failed (its funds left the account).
func TestFailedPaymentsGiveUsageBack(t *testing.T) {
	onBoth(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		a := e.agent(policy.Auto, nil)
		failing := e.usdExternal("12345678002")
		failingEUR := e.External(e.platform, e.customer.ID, "EUR", ports.AccountInfo{
			AccountType: "EUR_ACCOUNT", IBAN: "DE89370400440532013002", SwiftCode: "COBADEFFXXX",
			Beneficiary: &ports.Beneficiary{BeneficiaryType: "INDIVIDUAL", FullName: "Ada Lovelace"}})

		ok, err := e.spend.TransferOut(ctx, a, transfers.OutRequest{SourceAccountID: e.usd.ID, DestinationAccountID: e.usdDest.ID, Amount: 1_000})
		require.NoError(t, err)
		bad, err := e.spend.TransferOut(ctx, a, transfers.OutRequest{SourceAccountID: e.usd.ID, DestinationAccountID: failing.ID, Amount: 2_000})
		require.NoError(t, err)
		q, err := e.spend.CreateQuote(ctx, a, quotes.CreateRequest{
			Source:      quotes.Source{Type: quotes.SourceAccount, AccountID: e.usd.ID},
			Destination: quotes.Destination{Type: "ACCOUNT", AccountID: failingEUR.ID},
			LockedSide:  "SENDING", LockedAmount: 4_000})
		require.NoError(t, err)
		qa, err := e.spend.ExecuteQuote(ctx, a, q.ID, "")
		require.NoError(t, err)
		require.Equal(t, agents.StatusApproved, qa.Status)
		// A payout that fails and whose refund fails too: the funds left.
		stuckEUR := e.External(e.platform, e.customer.ID, "EUR", ports.AccountInfo{
			AccountType: "EUR_ACCOUNT", IBAN: "DE89370400440532013007", SwiftCode: "COBADEFFXXX",
			Beneficiary: &ports.Beneficiary{BeneficiaryType: "INDIVIDUAL", FullName: "Ada Lovelace"}})
		stuck, err := e.spend.CreateQuote(ctx, a, quotes.CreateRequest{
			Source:      quotes.Source{Type: quotes.SourceAccount, AccountID: e.usd.ID},
			Destination: quotes.Destination{Type: "ACCOUNT", AccountID: stuckEUR.ID},
			LockedSide:  "SENDING", LockedAmount: 3_000})
		require.NoError(t, err)
		_, err = e.spend.ExecuteQuote(ctx, a, stuck.ID, "")
		require.NoError(t, err)
		u := e.usage(a)
		assert.Equal(t, 4, u.DailyTransactionCount)
		assert.Equal(t, int64(10_000), u.DailySpend)

		e.RunJobs()
		for _, id := range []string{bad.TransactionID, q.TransactionID} {
			txn, err := e.Store.Read().Transactions().Get(ctx, e.platform, id)
			require.NoError(t, err)
			require.Equal(t, transactions.StatusFailed, txn.Status, id)
		}
		txn, err := e.Store.Read().Transactions().Get(ctx, e.platform, ok.TransactionID)
		require.NoError(t, err)
		require.NotEqual(t, transactions.StatusFailed, txn.Status, "on its way (ACH)")
		txn, err = e.Store.Read().Transactions().Get(ctx, e.platform, stuck.TransactionID)
		require.NoError(t, err)
		require.Equal(t, transactions.StatusFailed, txn.Status)
		require.NotNil(t, txn.Details.Refund)
		require.Equal(t, transactions.RefundFailed, txn.Details.Refund.Status)
		u = e.usage(a)
		assert.Equal(t, 2, u.DailyTransactionCount, "the payment on its way and the one whose funds did not come back count")
		assert.Equal(t, int64(4_000), u.DailySpend)
		assert.Equal(t, int64(4_000), u.MonthlySpend)
		e.RunJobs()
		assert.Equal(t, int64(4_000), e.usage(a).DailySpend, "given back once")
		assert.Equal(t, int64(100_000-4_000), e.available())
		// The actions whose payments failed are FAILED (the spec's
		// APPROVED → FAILED when execution fails); the others APPROVED.
		assert.Equal(t, agents.StatusFailed, e.action(bad.ID).Status, "the transfer-out the rail failed")
		assert.Equal(t, agents.StatusFailed, e.action(qa.ID).Status, "the quote whose payout failed")
		assert.Equal(t, agents.StatusApproved, e.action(ok.ID).Status, "on its way")

		// A transfer the platform cancels before it settles.
		_, err = e.tr.Cancel(ctx, e.platform, ok.TransactionID, "changed my mind", "")
		require.NoError(t, err)
		e.RunJobs()
		u = e.usage(a)
		assert.Equal(t, 1, u.DailyTransactionCount)
		assert.Equal(t, int64(3_000), u.DailySpend)
		assert.Equal(t, int64(100_000-3_000), e.available())
		assert.Equal(t, agents.StatusFailed, e.action(ok.ID).Status, "its payment was cancelled")
		e.Verify()
	})
}

// An agent cannot pay out of an embedded wallet with a transfer-out: a
// wallet's sends need a session's signature, which only a quote's execute
// carries. Refused at once, with nothing held and no action recorded.
func TestTransferOutFromAnEmbeddedWalletIsRefused(t *testing.T) {
	e := newEnv(t, coretest.Memory(), memory.NewAgentUsageStore())
	ctx := context.Background()
	wallet := e.InternalAccount(ports.InternalAccountFilter{PlatformID: e.platform, CustomerID: e.customer.ID, Currency: "USD",
		Type: accounts.TypeEmbeddedWallet})
	e.Fund(e.platform, wallet.ID, 10_000)
	// Under approval, so that only the check at request time refuses it
	// (an automatic action would run, and fail, at once).
	a := e.agent(policy.ApprovalRequired, nil)
	_, err := e.spend.TransferOut(ctx, a, transfers.OutRequest{SourceAccountID: wallet.ID, DestinationAccountID: e.usdDest.ID, Amount: 100})
	fe, ok := fault.As(err)
	require.True(t, ok, "%v", err)
	assert.Equal(t, fault.KindInvalid, fe.Kind)
	assert.Equal(t, "source.accountId", fe.Fields[0].Field)
	assert.Equal(t, int64(10_000), e.LedgerAccount(wallet.ID).Available())
	acts, _, err := e.Store.Read().AgentActions().List(ctx, ports.AgentActionFilter{PlatformID: e.platform, AgentID: a.ID}, ports.Page{Limit: 5})
	require.NoError(t, err)
	assert.Empty(t, acts)
	e.Verify()
}
