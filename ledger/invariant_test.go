package ledger_test

// A seeded simulation of the Book in the style of TigerBeetle's VOPR and
// blnk's invariant fuzz test: a workload of random entries (single
// transfers, holds with timeouts, full and partial posts, voids, clock
// advances with expiries, reversals, FX-like multi-leg entries, replays and
// deliberately invalid requests) runs over a closed chart of protected
// customer accounts and unbounded system accounts in three currencies. An
// independent auditor (model_test.go) predicts every result; after every
// step the Book must match the auditor, a refused step must have changed
// nothing, and ledger's own verifier must find nothing wrong.
//
// Vary the run with -seed / -steps (or LEDGER_SEED / LEDGER_STEPS):
//
//	go test ./ledger -run TestInvariants -seed=42 -steps=50000
//	go test ./ledger -run '^$' -fuzz FuzzBook -fuzztime 60s -fuzzminimizetime 5s

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/corridorpay/corridor/ledger"
	"github.com/corridorpay/corridor/testkit"
)

var (
	seedFlag  = flag.Uint64("seed", 0, "TestInvariants seed (0: $LEDGER_SEED, else a fixed default)")
	stepsFlag = flag.Int("steps", 0, "TestInvariants steps (0: $LEDGER_STEPS, else the default)")
)

const (
	defaultSeed  = 20260301
	defaultSteps = 6000
	// fullVerifyEvery is how often the whole journal is re-verified with
	// ledger.Verify; every other step uses the incremental replay.
	fullVerifyEvery = 500
)

func TestInvariants(t *testing.T) {
	seed := uint64(defaultSeed)
	if v := os.Getenv("LEDGER_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("LEDGER_SEED: %v", err)
		}
		seed = n
	}
	if *seedFlag != 0 {
		seed = *seedFlag
	}
	steps := defaultSteps
	if v := os.Getenv("LEDGER_STEPS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			t.Fatalf("LEDGER_STEPS: %v", err)
		}
		steps = n
	}
	if *stepsFlag != 0 {
		steps = *stepsFlag
	}
	t.Logf("seed %d, %d steps (replay with -seed=%d)", seed, steps, seed)

	s := newSim(t, fmt.Sprintf("seed %d", seed), randChooser{rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))})
	for s.step = 1; s.step <= steps; s.step++ {
		s.runOne()
	}
	s.fullVerify()

	// The workload must actually exercise the Book: every kind of operation
	// ran, and both accepted and refused results occurred for the ones that
	// can go either way.
	for _, op := range simOps {
		st := s.stats[op.name]
		if st[0]+st[1] == 0 {
			t.Errorf("op %s never ran", op.name)
		}
	}
	for _, name := range []string{"pay", "hold", "post", "void", "fx", "reverse", "multi", "whale", "retry"} {
		st := s.stats[name]
		if st[0] == 0 || st[1] == 0 {
			t.Errorf("op %s: %d accepted, %d refused; want both", name, st[0], st[1])
		}
	}
	if s.expired == 0 {
		t.Errorf("no hold expired")
	}
	for _, name := range sortedKeys(s.stats) {
		t.Logf("%-8s accepted %5d refused %5d", name, s.stats[name][0], s.stats[name][1])
	}
	t.Logf("journal %d entries, %d holds, %d expired", len(s.journal), len(s.allHolds), s.expired)
}

func FuzzBook(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15})
	f.Add([]byte("pending holds, posts, voids and expiries over three currencies"))
	seedBytes := make([]byte, 512)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range seedBytes {
		seedBytes[i] = byte(r.IntN(256))
	}
	f.Add(seedBytes)
	f.Fuzz(func(t *testing.T, data []byte) {
		c := &byteChooser{data: data}
		s := newSim(t, fmt.Sprintf("fuzz input %x", data), c)
		for s.step = 1; s.step <= 300 && !c.exhausted(); s.step++ {
			s.runOne()
		}
		s.fullVerify()
	})
}

// chooser is where the workload's randomness comes from: a seeded PRNG, or
// the fuzzer's bytes.
type chooser interface {
	// intn returns a value in [0, n); n > 0.
	intn(n int) int
}

type randChooser struct{ r *rand.Rand }

func (c randChooser) intn(n int) int { return c.r.IntN(n) }

// byteChooser reads choices from fuzz input; once the input is used up every
// choice is 0.
type byteChooser struct {
	data []byte
	pos  int
}

func (c *byteChooser) exhausted() bool { return c.pos >= len(c.data) }

func (c *byteChooser) intn(n int) int {
	if n <= 1 {
		return 0
	}
	var v uint64
	for width := n; width > 0; width >>= 8 {
		v <<= 8
		if c.pos < len(c.data) {
			v |= uint64(c.data[c.pos])
			c.pos++
		}
	}
	return int(v % uint64(n))
}

// sim is the workload driver: the Book under test, the auditor, the fake
// clock, and the journal of accepted entries.
type sim struct {
	tb      testing.TB
	label   string
	c       chooser
	b       *ledger.Book
	m       *model
	clock   *testkit.FakeClock
	journal []ledger.JournalEntry
	replay  *ledger.JournalReplay

	step, n int
	op      string
	expired int
	stats   map[string][2]int

	currencies []string
	customers  map[string][]string // protected, per currency
	accountIDs []string            // every account, in a fixed order
	accepted   []string            // accepted entry ids, in order
	refused    []ledger.Entry      // refused requests, for retries
	openHolds  []string            // open hold ids, in a fixed order
	allHolds   []string            // every hold ever opened, in order
}

var simCurrencies = []string{"USD", "EUR", "JPY"}

const (
	simWhaleA = "sys:whale:a" // USD; only the overflow op touches the whales
	simWhaleB = "sys:whale:b"
	simLimit  = "InternalAccount:limited:USD" // credits must not exceed debits
	simRail   = "ACH"
)

func newSim(tb testing.TB, label string, c chooser) *sim {
	s := &sim{
		tb: tb, label: label, c: c,
		b: ledger.NewBook(), m: newModel(),
		clock:      testkit.NewFakeClock(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)),
		replay:     ledger.NewJournalReplay(),
		stats:      map[string][2]int{},
		currencies: simCurrencies,
		customers:  map[string][]string{},
	}
	rails := map[string][]string{simRail: simCurrencies}
	accts := ledger.SystemAccounts(simCurrencies, rails)
	for _, cur := range simCurrencies {
		for i := range 4 {
			id := fmt.Sprintf("InternalAccount:c%d:%s", i, cur)
			s.customers[cur] = append(s.customers[cur], id)
			accts = append(accts, ledger.Account{ID: id, Currency: cur, Kind: ledger.KindInternal, Flags: ledger.DebitsMustNotExceedCredits})
		}
	}
	accts = append(accts,
		ledger.Account{ID: simLimit, Currency: "USD", Kind: ledger.KindInternal, Flags: ledger.CreditsMustNotExceedDebits},
		ledger.Account{ID: simWhaleA, Currency: "USD"},
		ledger.Account{ID: simWhaleB, Currency: "USD"},
	)
	for _, a := range accts {
		s.b.PutAccount(a)
		s.m.addAccount(a)
		s.accountIDs = append(s.accountIDs, a.ID)
	}
	return s
}

func (s *sim) fail(format string, args ...any) {
	s.tb.Helper()
	s.tb.Fatalf("%s, step %d, op %s: %s", s.label, s.step, s.op, fmt.Sprintf(format, args...))
}

func (s *sim) pick(n int) int { return s.c.intn(n) }

func (s *sim) chance(percent int) bool { return s.c.intn(100) < percent }

func (s *sim) id(prefix string) string {
	s.n++
	return prefix + strconv.Itoa(s.n)
}

func (s *sim) currency() string { return s.currencies[s.pick(len(s.currencies))] }

func (s *sim) customer(cur string) string { cs := s.customers[cur]; return cs[s.pick(len(cs))] }

// twoCustomers returns two different customers in cur.
func (s *sim) twoCustomers(cur string) (string, string) {
	cs := s.customers[cur]
	i := s.pick(len(cs))
	j := (i + 1 + s.pick(len(cs)-1)) % len(cs)
	return cs[i], cs[j]
}

// spend is an amount around what from can spend: usually within it,
// sometimes beyond it.
func (s *sim) spend(from string) int64 {
	avail := s.m.available(from)
	if avail < 0 {
		avail = 0
	}
	return 1 + int64(s.pick(int(avail*5/4+20)))
}

type simOp struct {
	name   string
	weight int
	run    func(s *sim)
}

var simOps = []simOp{
	{"fund", 8, (*sim).opFund},
	{"pay", 15, (*sim).opPay},
	{"system", 5, (*sim).opSystem},
	{"hold", 12, (*sim).opHold},
	{"post", 10, (*sim).opPost},
	{"void", 6, (*sim).opVoid},
	{"tick", 6, (*sim).opTick},
	{"fx", 6, (*sim).opFX},
	{"reverse", 4, (*sim).opReverse},
	{"repost", 5, (*sim).opRepost},
	{"retry", 2, (*sim).opRetry},
	{"multi", 5, (*sim).opMulti},
	{"invalid", 5, (*sim).opInvalid},
	{"whale", 1, (*sim).opWhale},
}

var simTotalWeight = func() int {
	n := 0
	for _, op := range simOps {
		n += op.weight
	}
	return n
}()

func (s *sim) runOne() {
	s.tb.Helper()
	w := s.pick(simTotalWeight)
	for _, op := range simOps {
		if w < op.weight {
			s.op = op.name
			op.run(s)
			return
		}
		w -= op.weight
	}
}

// submit predicts e with the auditor, applies it to the Book, and checks
// the result and every invariant.
func (s *sim) submit(e ledger.Entry) ledger.Code {
	s.tb.Helper()
	now := s.clock.Now()
	want := s.m.predict(e, now)
	req := cloneEntry(e)
	rec, err := s.b.Apply(e, now)
	got := ledger.CodeOf(err)
	if err != nil && got == ledger.CodeOK {
		s.fail("entry %s: a non-ledger error: %v", e.ID, err)
	}
	if got != want.code {
		s.fail("entry %+v: Book says %s (%v), auditor says %s", e, got, err, want.code)
	}
	if !entriesEqual(e, req) {
		s.fail("Apply changed the caller's entry")
	}
	changedAccounts, changedHolds := s.b.Changes()
	st := s.stats[s.op]
	switch got {
	case ledger.CodeOK:
		st[0]++
		if !entriesEqual(rec, want.rec) {
			s.fail("entry %s recorded as %+v, auditor expects %+v", e.ID, rec, want.rec)
		}
		if ids := accountIDs(changedAccounts); !slices.Equal(ids, sortedKeys(want.accounts)) {
			s.fail("entry %s changed accounts %v, auditor expects %v", e.ID, ids, sortedKeys(want.accounts))
		}
		if ids := pendingIDs(changedHolds); !slices.Equal(ids, sortedKeys(want.holds)) {
			s.fail("entry %s changed holds %v, auditor expects %v", e.ID, ids, sortedKeys(want.holds))
		}
		s.m.commit(want, req)
		for _, id := range sortedKeys(want.holds) {
			h := want.holds[id]
			if !slices.Contains(s.allHolds, id) {
				s.allHolds = append(s.allHolds, id)
				if h.status == ledger.PendingOpen {
					s.openHolds = append(s.openHolds, id)
				}
			}
			if h.status != ledger.PendingOpen {
				if i := slices.Index(s.openHolds, id); i >= 0 {
					s.openHolds = slices.Delete(s.openHolds, i, i+1)
				}
				if h.status == ledger.PendingExpired {
					s.expired++
				}
			}
		}
		je := ledger.JournalEntry{Entry: rec, Seq: int64(len(s.journal) + 1), PostedAt: now}
		s.journal = append(s.journal, je)
		s.replay.Add(je)
		s.accepted = append(s.accepted, e.ID)
	case ledger.CodeExists, ledger.CodeExistsWithDifferentFields:
		st[1]++
		if !entriesEqual(rec, want.rec) {
			s.fail("entry %s: a replay returned %+v, want the stored %+v", e.ID, rec, want.rec)
		}
	default:
		st[1]++
		var le *ledger.Error
		if !errors.As(err, &le) || le.TransferID != want.transferID || le.EntryID != e.ID {
			s.fail("entry %s refused with %v, auditor expects %s at transfer %q", e.ID, err, want.code, want.transferID)
		}
		s.refused = append(s.refused, req)
	}
	if got != ledger.CodeOK && (len(changedAccounts) != 0 || len(changedHolds) != 0) {
		s.fail("entry %s was refused (%s) but changed accounts %v and holds %v", e.ID, got, accountIDs(changedAccounts), pendingIDs(changedHolds))
	}
	s.stats[s.op] = st
	s.check()
	return got
}

// check compares the Book with the auditor and runs the verifier.
func (s *sim) check() {
	s.tb.Helper()
	sums := map[string][2]int64{}
	for _, id := range s.accountIDs {
		a, ok := s.b.Account(id)
		if !ok {
			s.fail("account %s vanished", id)
		}
		m := s.m.accounts[id]
		got := [4]int64{a.DebitsPending, a.DebitsPosted, a.CreditsPending, a.CreditsPosted}
		want := [4]int64{m.dPending, m.dPosted, m.cPending, m.cPosted}
		if got != want {
			s.fail("account %s counters [dPending dPosted cPending cPosted] = %v, auditor says %v", id, got, want)
		}
		// The auditor's own invariants, independent of ledger.Verify.
		if m.protectDebits && m.dPending+m.dPosted > m.cPosted {
			s.fail("auditor: protected account %s overdrawn: %+v", id, *m)
		}
		if m.protectCred && m.cPending+m.cPosted > m.dPosted {
			s.fail("auditor: credit-protected account %s over its debits: %+v", id, *m)
		}
		x := sums[m.currency]
		x[0] += m.cPosted - m.dPosted // wraps consistently: zero stays zero
		x[1] += m.cPending - m.dPending
		sums[m.currency] = x
	}
	for cur, x := range sums {
		if x != [2]int64{} {
			s.fail("auditor: currency %s does not sum to zero: posted %d pending %d", cur, x[0], x[1])
		}
	}
	for _, id := range s.allHolds {
		p, ok := s.b.Pending(id)
		if !ok {
			s.fail("hold %s vanished", id)
		}
		h := s.m.holds[id]
		if p.Status != h.status || p.PostedAmount != h.posted || p.Amount != h.amount || !p.ExpiresAt.Equal(h.expires) ||
			p.DebitAccountID != h.debit || p.CreditAccountID != h.credit || p.EntryID != h.entryID {
			s.fail("hold %s is %s posted %d of %d expiring %v (entry %s); auditor says %s posted %d of %d expiring %v (entry %s)",
				id, p.Status, p.PostedAmount, p.Amount, p.ExpiresAt, p.EntryID, h.status, h.posted, h.amount, h.expires, h.entryID)
		}
	}
	if v := s.replay.Check(s.b.Accounts(), s.b.PendingTransfers()); v != nil {
		s.fail("verifier: %v", v)
	}
	if s.step%fullVerifyEvery == 0 {
		s.fullVerify()
	}
}

func (s *sim) fullVerify() {
	s.tb.Helper()
	if v := ledger.Verify(s.b.Accounts(), s.b.PendingTransfers(), s.journal); v != nil {
		s.fail("ledger.Verify: %v", v)
	}
}

// ---- operations ----

func (s *sim) opFund() {
	cur := s.currency()
	id := s.id("fund")
	s.submit(entry(id, single(id, ledger.SandboxFundingID(cur), s.customer(cur), 100+int64(s.pick(5000)))))
}

func (s *sim) opPay() {
	cur := s.currency()
	from, to := s.twoCustomers(cur)
	t := single(s.id("pay"), from, to, s.spend(from))
	if s.chance(50) {
		t.Currency = cur
	}
	s.submit(entry(t.ID, t))
}

// opSystem moves money between customers and system accounts: payouts to
// the rail, fees, refunds from the rail, and the credit-bounded account.
func (s *sim) opSystem() {
	cur := s.currency()
	cust := s.customer(cur)
	id := s.id("sys")
	var t ledger.Transfer
	switch s.pick(4) {
	case 0:
		t = single(id, cust, ledger.RailSettlementID(simRail, cur), s.spend(cust))
	case 1:
		t = single(id, cust, ledger.FeeRevenueID(cur), 1+int64(s.pick(50)))
	case 2:
		t = single(id, ledger.RailSettlementID(simRail, cur), cust, 1+int64(s.pick(300)))
	default:
		// The credit-bounded account may receive back at most what it sent.
		if s.chance(50) {
			t = single(id, simLimit, ledger.SandboxFundingID("USD"), 1+int64(s.pick(200)))
		} else {
			t = single(id, ledger.SandboxFundingID("USD"), simLimit, 1+int64(s.pick(200)))
		}
	}
	s.submit(entry(id, t))
}

func (s *sim) holdTransfer() ledger.Transfer {
	cur := s.currency()
	from, to := s.twoCustomers(cur)
	if s.chance(30) {
		to = ledger.RailSettlementID(simRail, cur)
	}
	var timeout time.Duration
	if s.chance(75) {
		timeout = time.Duration(1+s.pick(60)) * time.Second
	}
	return hold(s.id("hold"), from, to, s.spend(from), timeout)
}

func (s *sim) opHold() {
	t := s.holdTransfer()
	s.submit(entry(t.ID, t))
}

// someHold picks a hold to resolve: usually an open one, sometimes any hold
// (perhaps resolved already), sometimes one that does not exist.
func (s *sim) someHold() string {
	switch {
	case len(s.openHolds) > 0 && s.chance(80):
		return s.openHolds[s.pick(len(s.openHolds))]
	case len(s.allHolds) > 0 && s.chance(85):
		return s.allHolds[s.pick(len(s.allHolds))]
	}
	return s.id("no-such-hold")
}

func (s *sim) postTransfer(pendingID string) ledger.Transfer {
	t := postHold(s.id("post"), pendingID, 0)
	h := s.m.holds[pendingID]
	if h == nil {
		return t
	}
	switch s.pick(6) {
	case 0: // the full amount, named
		t.Amount = h.amount
	case 1, 2: // partial
		t.Amount = 1 + int64(s.pick(int(h.amount)))
	case 3: // more than held
		t.Amount = h.amount + 1 + int64(s.pick(10))
	case 4: // naming the accounts explicitly, sometimes wrongly
		t.DebitAccountID, t.CreditAccountID, t.Currency = h.debit, h.credit, h.currency
		if s.chance(30) {
			t.CreditAccountID = h.debit
		}
	}
	return t
}

func (s *sim) opPost() {
	t := s.postTransfer(s.someHold())
	s.submit(entry(t.ID, t))
}

func (s *sim) opVoid() {
	t := voidHold(s.id("void"), s.someHold())
	if s.chance(10) {
		// An expiry posted by hand: refused unless the hold is due.
		t.Code = ledger.CodeExpiry
	}
	s.submit(entry(t.ID, t))
}

// opTick advances the fake clock and expires some of the holds that fell
// due, as a store's expiry worker would (in Due order, perhaps not all at
// once).
func (s *sim) opTick() {
	d := time.Duration(s.pick(4)) * time.Second
	if s.chance(40) {
		d = time.Duration(s.pick(25)) * time.Second
	}
	s.clock.Advance(d)
	now := s.clock.Now()

	var want []string
	for _, id := range s.openHolds {
		if h := s.m.holds[id]; !h.expires.IsZero() && !h.expires.After(now) {
			want = append(want, id)
		}
	}
	slices.SortFunc(want, func(a, b string) int {
		if c := s.m.holds[a].expires.Compare(s.m.holds[b].expires); c != 0 {
			return c
		}
		if a < b {
			return -1
		}
		return 1
	})
	due := s.b.Due(now)
	if got := pendingIDs(due); !slices.Equal(got, want) {
		s.fail("Due(%v) = %v, auditor says %v", now, got, want)
	}
	n := len(due)
	if n > 0 && s.chance(30) {
		n = s.pick(n + 1)
	}
	for _, p := range due[:n] {
		if code := s.submit(ledger.ExpiryEntry(p)); code != ledger.CodeOK {
			s.fail("expiry of due hold %s refused: %s", p.ID, code)
		}
	}
}

func (s *sim) opFX() {
	i := s.pick(len(s.currencies))
	j := (i + 1 + s.pick(len(s.currencies)-1)) % len(s.currencies)
	from, to := s.currencies[i], s.currencies[j]
	sender, receiver := s.customer(from), s.customer(to)
	id := s.id("fx")
	send := s.spend(sender)
	legs := []ledger.Transfer{
		single(id+":send", sender, ledger.FXPositionID(from), send),
		single(id+":receive", ledger.FXPositionID(to), receiver, send*3/2+1),
	}
	if s.chance(60) {
		legs = append(legs, single(id+":fee", sender, ledger.FeeRevenueID(from), 1+int64(s.pick(20))))
	}
	s.submit(entry(id, legs...))
}

func (s *sim) opReverse() {
	if len(s.accepted) == 0 {
		return
	}
	orig := s.m.entries[s.accepted[s.pick(len(s.accepted))]]
	id := s.id("rev")
	rev, err := ledger.Reversal(orig, id, "Correction:"+id)
	posted := 0
	for _, t := range orig.Transfers {
		if (t.Kind == ledger.Single || t.Kind == ledger.PostPending) && t.Amount != 0 {
			posted++
		}
	}
	if posted == 0 {
		if ledger.CodeOf(err) != ledger.CodeReversalNotAllowed {
			s.fail("Reversal of %s (no posted effect) = %v, want reversal_not_allowed", orig.ID, err)
		}
		st := s.stats[s.op]
		st[1]++
		s.stats[s.op] = st
		return
	}
	if err != nil || len(rev.Transfers) != posted {
		s.fail("Reversal of %s: %d transfers, %v; want %d", orig.ID, len(rev.Transfers), err, posted)
	}
	s.submit(rev)
}

func (s *sim) opRepost() {
	if len(s.accepted) == 0 {
		return
	}
	req := cloneEntry(s.m.requests[s.accepted[s.pick(len(s.accepted))]])
	if s.chance(30) {
		switch t := &req.Transfers[0]; {
		case s.chance(50) && (t.Kind == ledger.Single || t.Kind == ledger.Pending):
			t.Amount++
		default:
			req.Ref += ":changed"
		}
	}
	s.submit(req)
}

// opRetry resubmits a request that was refused earlier; the state may have
// changed since, so it is decided afresh.
func (s *sim) opRetry() {
	if len(s.refused) == 0 {
		return
	}
	s.submit(cloneEntry(s.refused[s.pick(len(s.refused))]))
}

// opMulti posts an entry of two to four legs of mixed kinds, including a
// hold opened and resolved within the same entry.
func (s *sim) opMulti() {
	id := s.id("multi")
	var legs []ledger.Transfer
	var staged []string
	for range 2 + s.pick(3) {
		switch s.pick(6) {
		case 0:
			cur := s.currency()
			legs = append(legs, single(s.id("t"), ledger.SandboxFundingID(cur), s.customer(cur), 1+int64(s.pick(500))))
		case 1, 2:
			cur := s.currency()
			from, to := s.twoCustomers(cur)
			legs = append(legs, single(s.id("t"), from, to, s.spend(from)))
		case 3:
			t := s.holdTransfer()
			staged = append(staged, t.ID)
			legs = append(legs, t)
		case 4:
			if len(staged) > 0 && s.chance(60) {
				legs = append(legs, postHold(s.id("t"), staged[s.pick(len(staged))], 0))
			} else {
				legs = append(legs, s.postTransfer(s.someHold()))
			}
		default:
			legs = append(legs, voidHold(s.id("t"), s.someHold()))
		}
	}
	s.submit(entry(id, legs...))
}

// opInvalid sends a request that breaks one rule on purpose.
func (s *sim) opInvalid() {
	cur := s.currency()
	from, to := s.twoCustomers(cur)
	id := s.id("bad")
	var e ledger.Entry
	switch s.pick(11) {
	case 0:
		e = ledger.Entry{ID: id}
	case 1:
		e = entry("", single(id, from, to, 1))
	case 2:
		e = entry(id, single("", from, to, 1))
	case 3:
		e = entry(id, single(id, from, from, 1))
	case 4:
		e = entry(id, single(id, from, "InternalAccount:ghost", 1))
	case 5:
		other := s.currencies[(slices.Index(s.currencies, cur)+1)%len(s.currencies)]
		e = entry(id, single(id, from, s.customer(other), 1))
	case 6:
		e = entry(id, single(id, from, to, -int64(s.pick(3))))
	case 7:
		if len(s.allHolds) > 0 {
			e = entry(id, hold(s.allHolds[s.pick(len(s.allHolds))], from, to, 1, 0))
		} else {
			e = entry(id, hold(id, from, to, 0, 0))
		}
	case 8:
		e = entry(id, postHold(id, "no-such-hold", 0))
	case 9:
		e = entry(id, single(id, ledger.SandboxFundingID(cur), to, 1))
		e.Reverses = "no-such-entry"
	default:
		e = entry(id, ledger.Transfer{ID: id, DebitAccountID: from, CreditAccountID: to, Amount: 1, Kind: ledger.TransferKind(7)})
	}
	if code := s.submit(e); code == ledger.CodeOK {
		s.fail("invalid entry %+v was accepted", e)
	}
}

// opWhale moves amounts near the int64 limit between two unbounded
// accounts, so the overflow guard must refuse the third in a direction.
func (s *sim) opWhale() {
	from, to := simWhaleA, simWhaleB
	if s.chance(50) {
		from, to = to, from
	}
	amount := math.MaxInt64/4*int64(1+s.pick(2)) + int64(s.pick(1000))
	id := s.id("whale")
	s.submit(entry(id, single(id, from, to, amount)))
}

// ---- helpers ----

func accountIDs(as []ledger.Account) []string {
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = a.ID
	}
	return out
}

func pendingIDs(ps []ledger.PendingTransfer) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.ID
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
