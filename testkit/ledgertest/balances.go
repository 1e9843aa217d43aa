package ledgertest

import (
	"sync"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/ledger"
	"github.com/corridorpay/corridor/ports"
)

// erin is a USD internal account the API shows (an internal_accounts row
// of recPlatform), unlike the fixture's other accounts, which exist only
// in the ledger.
const erin = "InternalAccount:ledgertest-erin"

// balanceEvents are the balance events of account id, oldest first, with
// their data, each with its delivery job (the platform has an endpoint).
func (f *recFixture) balanceEvents(id string) []ports.InternalAccountBalance {
	f.t.Helper()
	rows, _, err := f.store.Read().Events().List(f.ctx, ports.EventFilter{PlatformID: recPlatform, ResourceID: id,
		Type: ports.BalanceUpdated}, ports.Page{Limit: 100})
	require.NoError(f.t, err)
	out := make([]ports.InternalAccountBalance, len(rows))
	for i, e := range rows {
		out[i], err = ports.SnapshotOf[ports.InternalAccountBalance](e)
		require.NoError(f.t, err, "data of %s", e.ID)
		_, queued := f.delivery(e.ID)
		require.True(f.t, queued, "balance event %s without its delivery job", e.ID)
	}
	return out
}

// testBalanceEvents: the ledger store records INTERNAL_ACCOUNT.BALANCE_UPDATED
// in the commit that moves the money, one per shown internal account whose
// balance or total balance changed, with both after the change; none for
// system accounts, accounts the API does not show, or a refused post.
func testBalanceEvents(f *recFixture) {
	t := f.t
	now := f.clock.Now().UTC()
	require.NoError(t, f.s.CreateAccounts(f.ctx, protected(erin, "USD")))
	row := ports.InternalAccount{ID: erin, PlatformID: recPlatform, Type: "INTERNAL_FIAT", Status: "ACTIVE", Currency: "USD",
		CreatedAt: now, UpdatedAt: now}
	require.NoError(t, f.store.InTx(f.ctx, func(tx ports.Tx) error { return tx.InternalAccounts().Create(f.ctx, row) }))

	// One entry funding erin twice: one event, the balance after both.
	f.mustPost(entry("fund-erin", single("fund-erin-1", ledger.SandboxFundingID("USD"), erin, 300),
		single("fund-erin-2", ledger.SandboxFundingID("USD"), erin, 200)))
	got := f.balanceEvents(erin)
	require.Len(t, got, 1)
	assert.Equal(t, ports.InternalAccountBalance{InternalAccount: row, Balance: 500, TotalBalance: 500}, got[0])

	// A hold lowers the balance, its post the total; a refused hold
	// (over the balance) records nothing.
	// (Events about one resource are ordered by their time: the clock
	// moves between the posts.)
	f.clock.Advance(time.Second)
	f.mustPost(entry("hold-erin", hold("hold-erin", erin, railUSD, 120, 0)))
	f.clock.Advance(time.Second)
	f.refuse(entry("hold-erin-big", hold("hold-erin-big", erin, railUSD, 10_000, 0)), ledger.CodeExceedsCredits)
	f.mustPost(entry("post-erin", postHold("post-erin", "hold-erin", 120)))
	f.clock.Advance(time.Second)
	got = f.balanceEvents(erin)
	require.Len(t, got, 3)
	assert.Equal(t, [2]int64{380, 500}, [2]int64{got[1].Balance, got[1].TotalBalance}, "held")
	assert.Equal(t, [2]int64{380, 380}, [2]int64{got[2].Balance, got[2].TotalBalance}, "paid out")

	// A call whose records fail their precondition writes no entry and
	// so no event.
	_, err := f.s.PostWith(f.ctx, holdFor("Transaction:erin-missing", erin, 10),
		ports.Records{QuoteChanges: []ports.QuoteStatusChange{f.execute("Quote:erin-missing")}})
	require.ErrorIs(t, err, ports.ErrPrecondition)
	require.Len(t, f.balanceEvents(erin), 3, "a rolled-back call records no balance event")

	// Concurrent posts: at most one event each (fewer when they share a
	// batch), the last balance among them.
	var wg sync.WaitGroup
	for i := range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := "pay-erin-" + string(rune('a'+i))
			_, err := f.s.Post(f.ctx, entry(id, single(id, erin, railUSD, 10)))
			assert.NoError(t, err)
		}()
	}
	wg.Wait()
	got = f.balanceEvents(erin)
	assert.GreaterOrEqual(t, len(got), 4)
	assert.LessOrEqual(t, len(got), 13)
	var balances []int64
	for _, b := range got[3:] {
		balances = append(balances, b.Balance)
	}
	assert.Contains(t, balances, int64(280), "the balance after the last post")
	assert.Equal(t, int64(280), f.account(erin).Available())

	// Accounts the API does not show (alice exists only in the ledger)
	// and system accounts record none.
	f.fund("fund-alice-balance", alice, 50)
	assert.Empty(t, f.balanceEvents(alice))
	assert.Empty(t, f.balanceEvents(railUSD))
	assert.Empty(t, f.balanceEvents(ledger.SandboxFundingID("USD")))
}
