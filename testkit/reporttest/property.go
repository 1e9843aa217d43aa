package reporttest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/ledger"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit"
)

// RunProperty posts a random history of ops operations (seeded by seed)
// with the fake clock moving in uneven steps (several entries often share
// an instant): funding, transfers between accounts, payouts held on a rail
// and then posted in full or in part, voided or expired, money arriving
// on a rail, quotes (three-leg cross-currency holds through the FX
// positions with a fee, posted or voided together, the way core/quotes
// posts them) and reversals. Then, at every instant of the history and
// just before each:
//
//   - every account's point-in-time balance equals the journal replayed up
//     to that instant;
//   - the trial balance lists exactly the replayed non-zero accounts, and
//     each currency's totals sum to zero;
//
// and over random windows, the export rows of each rail sum to its
// settlement account's movement, and a statement's lines chain from its
// opening to its closing balance.
func RunProperty(t *testing.T, newEnv NewEnv, ops int, seed uint64) {
	clock := testkit.NewFakeClock(Epoch)
	env := newEnv(t, clock)
	f := &fixture{t: t, env: env, clock: clock, ctx: context.Background()}
	f.chart()
	h := &history{f: f, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
	for i := range ops {
		h.step(i)
	}
	journal := f.journal()
	require.NotEmpty(t, journal)
	h.check(journal)
}

type history struct {
	f      *fixture
	rng    *rand.Rand
	holds  []string       // open payout holds
	quotes []string       // quotes with open holds
	posted []ledger.Entry // entries a reversal may undo
}

var (
	propAccounts = []struct{ id, cur string }{{a1, "USD"}, {a2, "EUR"}, {b1, "USD"}}
	railOf       = map[string]string{"USD": achUSD, "EUR": sepaEUR}
)

// try posts e; a refusal by the ledger's rules is part of the history.
func (h *history) try(e ledger.Entry) bool {
	h.f.t.Helper()
	_, err := h.f.env.Ledger.Post(h.f.ctx, e)
	if err != nil {
		require.NotEqual(h.f.t, ledger.CodeOK, ledger.CodeOf(err), "post %s: %v", e.ID, err)
		return false
	}
	return true
}

func (h *history) step(i int) {
	f := h.f
	f.tick([]int{0, 0, 1, 7, 250, 1000}[h.rng.IntN(6)])
	id := fmt.Sprintf("p%04d", i)
	acct := propAccounts[h.rng.IntN(len(propAccounts))]
	amount := h.rng.Int64N(3_000) + 1
	switch h.rng.IntN(9) {
	case 0, 1: // funding
		h.try(ledger.Entry{ID: id, Ref: acct.id, Transfers: []ledger.Transfer{
			single(id, ledger.SandboxFundingID(acct.cur), acct.id, amount*3, acct.cur, "sandbox_funding")}})
	case 2: // a transfer between the USD accounts
		from, to := a1, b1
		if h.rng.IntN(2) == 0 {
			from, to = b1, a1
		}
		e := ledger.Entry{ID: id, Ref: "Transaction:" + id, Transfers: []ledger.Transfer{single(id, from, to, amount, "USD", "payment")}}
		if h.try(e) {
			h.posted = append(h.posted, e)
		}
	case 3: // a payout held on the account's rail, sometimes with a timeout
		t := hold("hold:"+id, acct.id, railOf[acct.cur], amount, acct.cur, "transfer_out")
		if h.rng.IntN(3) == 0 {
			t.Timeout = 2 * time.Second
		}
		if h.try(ledger.Entry{ID: "hold:" + id, Ref: "Transaction:" + id, Transfers: []ledger.Transfer{t}}) {
			h.holds = append(h.holds, "hold:"+id)
		}
	case 4: // a held payout settles (in full or in part) or fails
		if len(h.holds) == 0 {
			return
		}
		k := h.rng.IntN(len(h.holds))
		p := h.holds[k]
		h.holds = slices.Delete(h.holds, k, k+1)
		t := ledger.Transfer{ID: "resolve:" + id, PendingID: p, Kind: ledger.VoidPending, Code: "transfer_out"}
		if h.rng.IntN(3) > 0 {
			t.Kind = ledger.PostPending
			if h.rng.IntN(2) == 0 {
				t.Amount = 1
			}
		}
		e := ledger.Entry{ID: "resolve:" + id, Ref: "Transaction:" + p, Transfers: []ledger.Transfer{t}}
		if h.try(e) && t.Kind == ledger.PostPending {
			if rec, err := f.env.Reports.Entry(f.ctx, e.ID); err == nil {
				h.posted = append(h.posted, rec.Entry)
			}
		}
	case 5: // money arrives on a rail
		h.try(ledger.Entry{ID: id, Ref: "Transaction:" + id, Transfers: []ledger.Transfer{
			single(id, railOf[acct.cur], acct.id, amount, acct.cur, "transfer_in")}})
	case 6: // a quote: USD from a1 to a EUR payout on SEPA, with a fee
		e := ledger.Entry{ID: "qhold:" + id, Ref: "Transaction:q" + id, Transfers: []ledger.Transfer{
			hold("qhold:"+id+":send", a1, fxUSD, amount, "USD", "quote_send"),
			hold("qhold:"+id+":payout", fxEUR, sepaEUR, amount*9/10+1, "EUR", "quote_payout"),
			hold("qhold:"+id+":fee", a1, feeUSD, 25, "USD", "quote_fee"),
		}}
		if h.try(e) {
			h.quotes = append(h.quotes, id)
		}
	case 7: // a quote settles or fails: every leg together
		if len(h.quotes) == 0 {
			return
		}
		q := h.quotes[0]
		h.quotes = h.quotes[1:]
		kind := ledger.PostPending
		if h.rng.IntN(3) == 0 {
			kind = ledger.VoidPending
		}
		e := ledger.Entry{ID: "qdone:" + q, Ref: "Transaction:q" + q}
		for _, leg := range []string{"send", "payout", "fee"} {
			e.Transfers = append(e.Transfers, ledger.Transfer{ID: "qdone:" + q + ":" + leg, Kind: kind,
				PendingID: "qhold:" + q + ":" + leg, Code: "quote_" + leg})
		}
		if h.try(e) && kind == ledger.PostPending {
			if rec, err := f.env.Reports.Entry(f.ctx, e.ID); err == nil {
				h.posted = append(h.posted, rec.Entry)
			}
		}
	case 8: // a reversal, or expiry of the holds that are due
		if len(h.posted) > 0 && h.rng.IntN(2) == 0 {
			k := h.rng.IntN(len(h.posted))
			orig := h.posted[k]
			h.posted = slices.Delete(h.posted, k, k+1)
			rev, err := ledger.Reversal(orig, "reverse:"+orig.ID, orig.Ref)
			require.NoError(f.t, err)
			h.try(rev)
			return
		}
		_, err := f.env.Ledger.ExpireDue(f.ctx, f.clock.Now(), 100)
		require.NoError(f.t, err)
	}
}

func (f *fixture) journal() []ledger.JournalEntry {
	f.t.Helper()
	var out []ledger.JournalEntry
	var after int64
	for {
		page, err := f.env.Ledger.Journal(f.ctx, after, 200)
		require.NoError(f.t, err)
		if len(page) == 0 {
			return out
		}
		after = page[len(page)-1].Seq
		out = append(out, page...)
	}
}

// replayState is every account's counters at one point of the journal.
type replayState map[string]ledger.Counters

// check holds the reports to the journal replayed: at every instant of the
// history and just before each, and over 25 random windows of instants.
func (h *history) check(journal []ledger.JournalEntry) {
	f := h.f
	accts, _, err := f.env.Ledger.Snapshot(f.ctx)
	require.NoError(f.t, err)
	currency := map[string]string{}
	for _, a := range accts {
		currency[a.ID] = a.Currency
	}
	instants := instantsOf(journal, f.clock.Now().Add(time.Second))
	rp := replayAt(accts, journal, instants)

	for i, t := range instants {
		h.checkInstant(t, accts, currency, rp.at[i])
	}

	// Windows [from, to) over the instants.
	for range 25 {
		x, y := h.rng.IntN(len(instants)), h.rng.IntN(len(instants))
		if x > y {
			x, y = y, x
		}
		from, to := instants[x], instants[y]
		h.checkExports(from, to, rp.before[x], rp.before[y], rp.settlement)
		acct := propAccounts[h.rng.IntN(len(propAccounts))].id
		h.checkStatement(acct, from, to, rp.before[x][acct], rp.before[y][acct])
	}
}

// instantsOf returns, in order, the instants check looks at: each entry's
// time, just before it, and the ends (Epoch and end).
func instantsOf(journal []ledger.JournalEntry, end time.Time) []time.Time {
	set := map[time.Time]bool{Epoch: true, end: true}
	for _, e := range journal {
		set[e.PostedAt] = true
		set[e.PostedAt.Add(-time.Microsecond)] = true
	}
	instants := make([]time.Time, 0, len(set))
	for t := range set {
		instants = append(instants, t)
	}
	slices.SortFunc(instants, func(a, b time.Time) int { return a.Compare(b) })
	return instants
}

// replay is the journal replayed once: the counters of every account at
// (inclusive) and just before (exclusive) every instant, and the postings
// on the settlement accounts.
type replay struct {
	at, before []replayState
	settlement []ledger.Posting
}

// replayAt replays journal over accts, noting the counters at and just
// before each of instants (in order) and the settlement postings.
func replayAt(accts []ledger.Account, journal []ledger.JournalEntry, instants []time.Time) replay {
	rep := ledger.NewPostingReplay()
	out := replay{at: make([]replayState, len(instants)), before: make([]replayState, len(instants))}
	snapshot := func() replayState {
		s := replayState{}
		for _, a := range accts {
			s[a.ID] = rep.Counters(a.ID)
		}
		return s
	}
	noteSettlement := func(p ledger.Posting) {
		if p.AccountID == achUSD || p.AccountID == sepaEUR {
			out.settlement = append(out.settlement, p)
		}
	}
	j := 0
	for i, t := range instants {
		for ; j < len(journal) && journal[j].PostedAt.Before(t); j++ {
			rep.Add(journal[j], noteSettlement)
		}
		out.before[i] = snapshot()
		for ; j < len(journal) && !journal[j].PostedAt.After(t); j++ {
			rep.Add(journal[j], noteSettlement)
		}
		out.at[i] = snapshot()
	}
	return out
}

// checkInstant requires every account's point-in-time balance at t to
// equal the replayed counters at (the replay up to and including t), and
// the trial balance at t to list exactly the replayed non-zero accounts,
// with each currency's totals summing to zero.
func (h *history) checkInstant(t time.Time, accts []ledger.Account, currency map[string]string, at replayState) {
	f := h.f
	r := f.env.Reports
	for _, a := range accts {
		pb, err := r.BalanceAt(f.ctx, a.ID, t)
		require.NoError(f.t, err)
		require.Equal(f.t, at[a.ID], pb.Account.Counters(), "%s at %s", a.ID, t)
	}
	tb, err := r.TrialBalance(f.ctx, scopeAll, &t)
	require.NoError(f.t, err)
	want := map[string]ledger.Counters{}
	totals := map[string]ledger.Counters{}
	for id, c := range at {
		totals[currency[id]] = totals[currency[id]].Add(c)
		if c != (ledger.Counters{}) {
			want[id] = c
		}
	}
	got := map[string]ledger.Counters{}
	for _, a := range tb.Accounts {
		got[a.ID] = a.Counters()
	}
	require.Equal(f.t, want, got, "trial balance at %s", t)
	for cur, c := range tb.Totals {
		require.Equal(f.t, c.DebitsPosted, c.CreditsPosted, "%s posted at %s", cur, t)
		require.Equal(f.t, c.DebitsPending, c.CreditsPending, "%s pending at %s", cur, t)
		require.Equal(f.t, totals[cur], c, "%s totals at %s", cur, t)
	}
}

// checkExports requires each rail's settlement export over [from, to) to
// sum to its settlement account's movement between the replayed states
// just before from and just before to, with one row per settlement
// posting in the window.
func (h *history) checkExports(from, to time.Time, atFrom, atTo replayState, settlement []ledger.Posting) {
	f := h.f
	for _, rail := range []struct{ rail, cur, acct string }{{"ACH", "USD", achUSD}, {"SEPA", "EUR", sepaEUR}} {
		var posted, pending, n int64
		require.NoError(f.t, f.env.Reports.ExportSettlement(f.ctx, ports.SettlementExport{Rail: rail.rail, Currency: rail.cur, From: from, To: to},
			func(row ports.SettlementRow) error {
				posted += row.Posted
				pending += row.Pending
				n++
				return nil
			}))
		move := atTo[rail.acct].Sub(atFrom[rail.acct])
		require.Equal(f.t, move.Net(), posted, "%s export [%s, %s)", rail.rail, from, to)
		require.Equal(f.t, move.PendingNet(), pending, "%s export [%s, %s)", rail.rail, from, to)
		var want int64
		for _, p := range settlement {
			if p.AccountID == rail.acct && !p.PostedAt.Before(from) && p.PostedAt.Before(to) {
				want++
			}
		}
		require.Equal(f.t, want, n, "%s export rows [%s, %s)", rail.rail, from, to)
	}
}

// checkStatement requires acct's statement over [from, to) to open at
// opening and close at closing (the replayed counters just before from and
// to), its lines chaining from one to the other.
func (h *history) checkStatement(acct string, from, to time.Time, opening, closing ledger.Counters) {
	f := h.f
	st, err := f.env.Reports.Statement(f.ctx, ports.StatementQuery{AccountID: acct, From: from, To: to, Limit: 10_000})
	require.NoError(f.t, err)
	require.Equal(f.t, opening, st.Opening)
	require.Equal(f.t, closing, st.Closing)
	sum := st.Opening
	for _, l := range st.Lines {
		sum = sum.Add(l.Delta)
		require.Equal(f.t, sum, l.After)
	}
	assert.Equal(f.t, st.Closing, sum, "statement of %s [%s, %s)", acct, from, to)
}
