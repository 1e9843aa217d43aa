package ledger_test

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/ledger"
)

func TestSingleTransferPostsBothSides(t *testing.T) {
	r := newRig(t)
	r.fund(alice, 1000)
	rec := r.mustPost(entry("e1", single("t1", alice, bob, 300)))

	require.Len(t, rec.Transfers, 1)
	assert.Equal(t, "USD", rec.Transfers[0].Currency, "an empty currency is recorded as the accounts'")
	assert.Equal(t, int64(300), rec.Transfers[0].Amount)
	assert.Equal(t, [4]int64{0, 300, 0, 1000}, r.counters(alice))
	assert.Equal(t, [4]int64{0, 0, 0, 300}, r.counters(bob))
	assert.Equal(t, [4]int64{0, 1000, 0, 0}, r.counters(fundUSD))
	assert.Equal(t, int64(700), r.acct(alice).Available())
	assert.Equal(t, int64(700), r.acct(alice).Net())

	stored, ok := r.b.Entry("e1")
	require.True(t, ok)
	assert.Equal(t, rec, stored)
	r.verify()
}

func TestPendingThenPostInFull(t *testing.T) {
	r := newRig(t)
	r.fund(alice, 1000)
	r.mustPost(entry("e-hold", hold("h1", alice, bob, 400, time.Minute)))

	assert.Equal(t, [4]int64{400, 0, 0, 1000}, r.counters(alice))
	assert.Equal(t, [4]int64{0, 0, 400, 0}, r.counters(bob))
	assert.Equal(t, int64(600), r.acct(alice).Available())
	assert.Equal(t, int64(1000), r.acct(alice).Total())
	p, ok := r.b.Pending("h1")
	require.True(t, ok)
	assert.Equal(t, ledger.PendingOpen, p.Status)
	assert.Equal(t, "e-hold", p.EntryID)
	assert.Equal(t, t0.Add(time.Minute), p.ExpiresAt)
	r.verify()

	// Amount 0 posts the full pending amount; the record carries what moved.
	rec := r.mustPost(entry("e-post", postHold("p1", "h1", 0)))
	assert.Equal(t, ledger.Transfer{
		ID: "p1", DebitAccountID: alice, CreditAccountID: bob, Amount: 400, Currency: "USD",
		Kind: ledger.PostPending, PendingID: "h1", Code: "test",
	}, rec.Transfers[0])
	assert.Equal(t, [4]int64{0, 400, 0, 1000}, r.counters(alice))
	assert.Equal(t, [4]int64{0, 0, 0, 400}, r.counters(bob))
	p, _ = r.b.Pending("h1")
	assert.Equal(t, ledger.PendingPosted, p.Status)
	assert.Equal(t, int64(400), p.PostedAmount)
	r.verify()
}

func TestPartialPostReleasesTheRest(t *testing.T) {
	r := newRig(t)
	r.fund(alice, 1000)
	r.mustPost(entry("e-hold", hold("h1", alice, bob, 400, 0)))
	rec := r.mustPost(entry("e-post", postHold("p1", "h1", 150)))

	assert.Equal(t, int64(150), rec.Transfers[0].Amount)
	assert.Equal(t, [4]int64{0, 150, 0, 1000}, r.counters(alice))
	assert.Equal(t, [4]int64{0, 0, 0, 150}, r.counters(bob))
	assert.Equal(t, int64(850), r.acct(alice).Available())
	p, _ := r.b.Pending("h1")
	assert.Equal(t, ledger.PendingPosted, p.Status)
	assert.Equal(t, int64(150), p.PostedAmount)
	assert.Equal(t, int64(400), p.Amount, "the hold keeps its original amount")
	r.verify()
}

func TestPostMoreThanHeldIsRefused(t *testing.T) {
	r := newRig(t)
	r.fund(alice, 1000)
	r.mustPost(entry("e-hold", hold("h1", alice, bob, 400, 0)))
	le := r.refuse(entry("e-post", postHold("p1", "h1", 401)), ledger.CodeExceedsPendingAmount)
	assert.Equal(t, "p1", le.TransferID)
	assert.Equal(t, "e-post", le.EntryID)
	r.mustPost(entry("e-post", postHold("p1", "h1", 400)))
	r.verify()
}

func TestVoidReleasesTheHold(t *testing.T) {
	r := newRig(t)
	r.fund(alice, 1000)
	r.mustPost(entry("e-hold", hold("h1", alice, bob, 400, time.Minute)))
	rec := r.mustPost(entry("e-void", voidHold("v1", "h1")))

	assert.Equal(t, int64(400), rec.Transfers[0].Amount, "a void records the amount it released")
	assert.Equal(t, alice, rec.Transfers[0].DebitAccountID)
	assert.Equal(t, [4]int64{0, 0, 0, 1000}, r.counters(alice))
	assert.Equal(t, [4]int64{0, 0, 0, 0}, r.counters(bob))
	p, _ := r.b.Pending("h1")
	assert.Equal(t, ledger.PendingVoided, p.Status)
	assert.Equal(t, int64(0), p.PostedAmount)
	r.verify()
}

func TestHoldsResolveOnlyOnce(t *testing.T) {
	tests := []struct {
		name   string
		first  ledger.Transfer
		second ledger.Transfer
		code   ledger.Code
	}{
		{"post then post", postHold("a", "h1", 0), postHold("b", "h1", 0), ledger.CodePendingAlreadyPosted},
		{"post then void", postHold("a", "h1", 100), voidHold("b", "h1"), ledger.CodePendingAlreadyPosted},
		{"void then void", voidHold("a", "h1"), voidHold("b", "h1"), ledger.CodePendingAlreadyVoided},
		{"void then post", voidHold("a", "h1"), postHold("b", "h1", 0), ledger.CodePendingAlreadyVoided},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t)
			r.fund(alice, 1000)
			r.mustPost(entry("e-hold", hold("h1", alice, bob, 400, 0)))
			r.mustPost(entry("e-first", tt.first))
			r.refuse(entry("e-second", tt.second), tt.code)
			// Resolving twice inside one entry is refused the same way.
			r2 := newRig(t)
			r2.fund(alice, 1000)
			r2.mustPost(entry("e-hold", hold("h1", alice, bob, 400, 0)))
			r2.refuse(entry("e-both", tt.first, tt.second), tt.code)
			r.verify()
			r2.verify()
		})
	}
}

func TestExpiry(t *testing.T) {
	r := newRig(t)
	r.fund(alice, 1000)
	r.mustPost(entry("e-hold", hold("h1", alice, bob, 400, 30*time.Second)))
	r.mustPost(entry("e-forever", hold("h2", alice, bob, 100, 0)))

	r.now = t0.Add(29 * time.Second)
	assert.Empty(t, r.b.Due(r.now))
	p, _ := r.b.Pending("h1")
	r.refuse(ledger.ExpiryEntry(p), ledger.CodeExpiryPremature) // not yet due

	// At the timeout the hold can no longer be posted or voided, even before
	// the expiry entry is recorded.
	r.now = t0.Add(30 * time.Second)
	r.refuse(entry("e-post", postHold("p1", "h1", 0)), ledger.CodePendingExpired)
	r.refuse(entry("e-void", voidHold("v1", "h1")), ledger.CodePendingExpired)

	due := r.b.Due(r.now)
	require.Len(t, due, 1)
	assert.Equal(t, "h1", due[0].ID)
	exp := ledger.ExpiryEntry(due[0])
	assert.Equal(t, "e-hold", exp.Ref, "the expiry entry links to the hold's entry")
	rec := r.mustPost(exp)
	assert.Equal(t, int64(400), rec.Transfers[0].Amount)
	assert.Equal(t, ledger.CodeExpiry, rec.Transfers[0].Code)

	p, _ = r.b.Pending("h1")
	assert.Equal(t, ledger.PendingExpired, p.Status)
	assert.Equal(t, [4]int64{100, 0, 0, 1000}, r.counters(alice), "only the hold without timeout remains")
	assert.Equal(t, [4]int64{0, 0, 100, 0}, r.counters(bob))
	assert.Empty(t, r.b.Due(r.now.Add(24*time.Hour)), "a hold without timeout never expires")

	r.refuse(entry("e-post2", postHold("p2", "h1", 0)), ledger.CodePendingExpired)
	r.refuse(entry("e-void2", voidHold("v2", "h1")), ledger.CodePendingExpired)
	r.verify()
}

func TestDueOrdersByExpiryThenID(t *testing.T) {
	r := newRig(t)
	r.fund(alice, 1000)
	r.mustPost(entry("e1", hold("h-c", alice, bob, 1, 20*time.Second)))
	r.mustPost(entry("e2", hold("h-b", alice, bob, 1, 10*time.Second)))
	r.mustPost(entry("e3", hold("h-a", alice, bob, 1, 20*time.Second)))
	r.mustPost(entry("e4", hold("h-d", alice, bob, 1, 40*time.Second)))
	var ids []string
	for _, p := range r.b.Due(t0.Add(20 * time.Second)) {
		ids = append(ids, p.ID)
	}
	assert.Equal(t, []string{"h-b", "h-a", "h-c"}, ids)
}

func TestOverdraftIsRefusedAndChangesNothing(t *testing.T) {
	r := newRig(t)
	r.fund(alice, 100)

	le := r.refuse(entry("e1", single("t1", alice, bob, 101)), ledger.CodeExceedsCredits)
	assert.Equal(t, alice, le.AccountID)
	assert.Equal(t, "t1", le.TransferID)
	assert.True(t, errors.Is(le, ledger.ErrExceedsCredits))

	// Held funds count against the bound.
	r.mustPost(entry("e-hold", hold("h1", alice, bob, 80, 0)))
	r.refuse(entry("e2", single("t2", alice, bob, 21)), ledger.CodeExceedsCredits)
	r.refuse(entry("e3", hold("h3", alice, bob, 21, 0)), ledger.CodeExceedsCredits)
	r.mustPost(entry("e4", single("t4", alice, bob, 20)))
	assert.Equal(t, int64(0), r.acct(alice).Available())

	// The mirror bound: credits must not exceed debits.
	r.mustPost(entry("e5", single("t5", limitAcc, fundUSD, 50)))
	le = r.refuse(entry("e6", single("t6", fundUSD, limitAcc, 51)), ledger.CodeExceedsDebits)
	assert.Equal(t, limitAcc, le.AccountID)
	r.mustPost(entry("e7", single("t7", fundUSD, limitAcc, 50)))
	r.verify()
}

// fxEntry converts usd from alice into eur for carol through the FX position
// accounts, with a fee leg: four linked transfers.
func fxEntry(id string, usd, eur, fee int64) ledger.Entry {
	return entry(id,
		single(id+":send", alice, fxUSD, usd),
		single(id+":receive", fxEUR, carol, eur),
		single(id+":fee", alice, feeUSD, fee),
	)
}

func TestMultiLegEntryIsAllOrNothing(t *testing.T) {
	r := newRig(t)
	r.fund(alice, 102)

	// The fee leg overdraws alice: nothing of the entry applies.
	before := map[string][4]int64{}
	for _, id := range []string{alice, carol, fxUSD, fxEUR, feeUSD} {
		before[id] = r.counters(id)
	}
	le := r.refuse(fxEntry("fx1", 100, 92, 3), ledger.CodeExceedsCredits)
	assert.Equal(t, "fx1:fee", le.TransferID)
	for id, c := range before {
		assert.Equal(t, c, r.counters(id), "account %s", id)
	}

	// The same id is free to use again: a refused entry is not recorded.
	rec := r.mustPost(fxEntry("fx1", 100, 92, 2))
	require.Len(t, rec.Transfers, 3)
	assert.Equal(t, "EUR", rec.Transfers[1].Currency)
	assert.Equal(t, int64(0), r.acct(alice).Available())
	assert.Equal(t, int64(92), r.acct(carol).Available())
	assert.Equal(t, int64(100), r.acct(fxUSD).Net())
	assert.Equal(t, int64(-92), r.acct(fxEUR).Net())
	assert.Equal(t, int64(2), r.acct(feeUSD).Net())
	r.verify()

	// A later leg can spend what an earlier leg of the same entry credited.
	r.mustPost(entry("chain",
		single("c1", fundEUR, carol, 10),
		single("c2", carol, fxEUR, 102),
		single("c3", fxUSD, bob, 110),
	))
	assert.Equal(t, int64(0), r.acct(carol).Available())
	assert.Equal(t, int64(110), r.acct(bob).Available())

	// A hold opened and posted within one entry.
	r.mustPost(entry("hold-and-post", hold("hp", bob, alice, 60, 0), postHold("hp-post", "hp", 50)))
	assert.Equal(t, [4]int64{0, 50, 0, 110}, r.counters(bob))
	p, _ := r.b.Pending("hp")
	assert.Equal(t, "hold-and-post", p.EntryID)
	r.verify()
}

func TestIdempotentRepost(t *testing.T) {
	r := newRig(t)
	r.fund(alice, 1000)
	e := entry("e1", single("t1", alice, bob, 300))
	first := r.mustPost(e)

	before := r.counters(alice)
	stored, err := r.b.Apply(e, r.now.Add(time.Hour))
	require.ErrorIs(t, err, ledger.ErrExists)
	assert.Equal(t, ledger.CodeExists, ledger.CodeOf(err))
	assert.Equal(t, first, stored)
	assert.Equal(t, before, r.counters(alice), "a replay moves no money")

	diffAmount := entry("e1", single("t1", alice, bob, 301))
	stored, err = r.b.Apply(diffAmount, r.now)
	require.ErrorIs(t, err, ledger.ErrExistsDifferent)
	assert.False(t, errors.Is(err, ledger.ErrExists))
	assert.Equal(t, first, stored, "the stored entry comes back with the conflict")

	diffRef := e
	diffRef.Ref = "Test:other"
	_, err = r.b.Apply(diffRef, r.now)
	require.ErrorIs(t, err, ledger.ErrExistsDifferent)

	diffAccount := entry("e1", single("t1", alice, carol, 300))
	_, err = r.b.Apply(diffAccount, r.now)
	require.ErrorIs(t, err, ledger.ErrExistsDifferent)

	empty := ledger.Entry{ID: "e1", Ref: e.Ref}
	_, err = r.b.Apply(empty, r.now)
	require.ErrorIs(t, err, ledger.ErrExistsDifferent)

	// Fields a post leaves empty are filled on record and not compared.
	r.mustPost(entry("e-hold", hold("h1", alice, bob, 400, time.Minute)))
	post := entry("e-post", postHold("p1", "h1", 0))
	r.mustPost(post)
	_, err = r.b.Apply(post, r.now)
	require.ErrorIs(t, err, ledger.ErrExists)
	explicit := entry("e-post", postHold("p1", "h1", 400))
	_, err = r.b.Apply(explicit, r.now)
	require.ErrorIs(t, err, ledger.ErrExists)
	partial := entry("e-post", postHold("p1", "h1", 399))
	_, err = r.b.Apply(partial, r.now)
	require.ErrorIs(t, err, ledger.ErrExistsDifferent)

	// A hold re-posted with another timeout is a different request.
	holdAgain := entry("e-hold", hold("h1", alice, bob, 400, 2*time.Minute))
	_, err = r.b.Apply(holdAgain, r.now)
	require.ErrorIs(t, err, ledger.ErrExistsDifferent)
	r.verify()
}

func TestReversal(t *testing.T) {
	r := newRig(t)
	r.fund(alice, 1000)
	orig := r.mustPost(fxEntry("fx1", 100, 92, 2))

	rev, err := ledger.Reversal(orig, "rev1", "Correction:1")
	require.NoError(t, err)
	assert.Equal(t, "fx1", rev.Reverses)
	require.Len(t, rev.Transfers, 3)
	assert.Equal(t, ledger.Transfer{
		ID: "rev1:0", DebitAccountID: fxUSD, CreditAccountID: alice, Amount: 100, Currency: "USD",
		Kind: ledger.Single, Code: "reversal",
	}, rev.Transfers[0])
	r.mustPost(rev)
	assert.Equal(t, int64(1000), r.acct(alice).Available())
	assert.Equal(t, int64(0), r.acct(carol).Available())
	assert.Equal(t, int64(0), r.acct(fxEUR).Net())
	assert.Equal(t, int64(0), r.acct(feeUSD).Net())

	again, err := ledger.Reversal(orig, "rev2", "Correction:2")
	require.NoError(t, err)
	le := r.refuse(again, ledger.CodeAlreadyReversed)
	assert.Equal(t, ledger.CodeAlreadyReversed, le.Code)

	// A reversal that would overdraw an account that spent the money is
	// refused like any other entry.
	r.mustPost(entry("pay", single("pay", alice, bob, 500)))
	r.mustPost(entry("spend", single("spend", bob, fundUSD, 450)))
	payRec, _ := r.b.Entry("pay")
	rev3, err := ledger.Reversal(payRec, "rev3", "Correction:3")
	require.NoError(t, err)
	r.refuse(rev3, ledger.CodeExceedsCredits)

	// A posted hold reverses by its posted amount.
	r.mustPost(entry("e-hold", hold("h1", alice, bob, 300, 0)))
	postRec := r.mustPost(entry("e-post", postHold("p1", "h1", 120)))
	rev4, err := ledger.Reversal(postRec, "rev4", "Correction:4")
	require.NoError(t, err)
	require.Len(t, rev4.Transfers, 1)
	assert.Equal(t, int64(120), rev4.Transfers[0].Amount)
	r.mustPost(rev4)
	assert.Equal(t, int64(50), r.acct(bob).Available())

	// Entries without posted effects cannot be reversed: void the hold.
	holdRec, _ := r.b.Entry("e-hold")
	_, err = ledger.Reversal(holdRec, "rev5", "Correction:5")
	require.Equal(t, ledger.CodeReversalNotAllowed, ledger.CodeOf(err))

	// Reversing an entry that does not exist.
	r.refuse(ledger.Entry{ID: "rev6", Reverses: "nope", Transfers: []ledger.Transfer{single("x", fundUSD, alice, 1)}}, ledger.CodeReversalNotAllowed)
	r.verify()
}

func TestRefusals(t *testing.T) {
	tests := []struct {
		name    string
		entry   ledger.Entry
		code    ledger.Code
		account string
	}{
		{"entry id missing", ledger.Entry{Transfers: []ledger.Transfer{single("t", alice, bob, 1)}}, ledger.CodeIDMissing, ""},
		{"entry empty", ledger.Entry{ID: "e"}, ledger.CodeEntryEmpty, ""},
		{"transfer id missing", entry("e", single("", alice, bob, 1)), ledger.CodeIDMissing, ""},
		{"zero amount", entry("e", single("t", alice, bob, 0)), ledger.CodeAmountInvalid, ""},
		{"negative amount", entry("e", single("t", alice, bob, -5)), ledger.CodeAmountInvalid, ""},
		{"negative hold", entry("e", hold("t", alice, bob, -5, 0)), ledger.CodeAmountInvalid, ""},
		{"negative post", entry("e", postHold("t", "h-open", -1)), ledger.CodeAmountInvalid, ""},
		{"unknown kind", entry("e", ledger.Transfer{ID: "t", DebitAccountID: alice, CreditAccountID: bob, Amount: 1, Kind: 9}), ledger.CodeKindInvalid, ""},
		{"same account", entry("e", single("t", alice, alice, 1)), ledger.CodeSameAccount, alice},
		{"debit account not found", entry("e", single("t", "InternalAccount:nobody", bob, 1)), ledger.CodeAccountNotFound, "InternalAccount:nobody"},
		{"credit account not found", entry("e", single("t", alice, "InternalAccount:nobody", 1)), ledger.CodeAccountNotFound, "InternalAccount:nobody"},
		{"accounts in two currencies", entry("e", single("t", alice, carol, 1)), ledger.CodeCurrencyMismatch, carol},
		{"currency differs from debit account", entry("e", ledger.Transfer{ID: "t", DebitAccountID: alice, CreditAccountID: bob, Amount: 1, Currency: "EUR"}), ledger.CodeCurrencyMismatch, alice},
		{"hold currency mismatch", entry("e", hold("t", fundEUR, bob, 1, 0)), ledger.CodeCurrencyMismatch, bob},
		{"pending not found", entry("e", postHold("t", "h-nope", 0)), ledger.CodePendingNotFound, ""},
		{"void not found", entry("e", voidHold("t", "h-nope")), ledger.CodePendingNotFound, ""},
		{"hold id exists", entry("e", hold("h-open", alice, bob, 1, 0)), ledger.CodeTransferIDExists, ""},
		{"hold id twice in one entry", entry("e", hold("h-new", alice, bob, 1, 0), hold("h-new", alice, bob, 1, 0)), ledger.CodeTransferIDExists, ""},
		{"post names other accounts", entry("e", ledger.Transfer{ID: "t", Kind: ledger.PostPending, PendingID: "h-open", DebitAccountID: bob}), ledger.CodeExistsWithDifferentFields, ""},
		{"post names other currency", entry("e", ledger.Transfer{ID: "t", Kind: ledger.PostPending, PendingID: "h-open", Currency: "EUR"}), ledger.CodeExistsWithDifferentFields, ""},
		{"expiry of a hold without timeout", ledger.Entry{ID: "e", Transfers: []ledger.Transfer{{ID: "t", Kind: ledger.VoidPending, PendingID: "h-open", Code: ledger.CodeExpiry}}}, ledger.CodeExpiryPremature, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t)
			r.fund(alice, 1000)
			r.mustPost(entry("e-hold", hold("h-open", alice, bob, 100, 0)))
			le := r.refuse(tt.entry, tt.code)
			if tt.account != "" {
				assert.Equal(t, tt.account, le.AccountID)
			}
			assert.Equal(t, tt.entry.ID, le.EntryID)
			r.verify()
		})
	}
}

func TestOverflowGuard(t *testing.T) {
	r := newRig(t)
	r.mustPost(entry("big", single("big", whaleA, whaleB, math.MaxInt64)))
	r.refuse(entry("one-more", single("one-more", whaleA, fundUSD, 1)), ledger.CodeOverflow)
	r.refuse(entry("one-more-in", single("one-more-in", fundUSD, whaleB, 1)), ledger.CodeOverflow)
	r.refuse(entry("hold-more", hold("hold-more", whaleA, fundUSD, 1, 0)), ledger.CodeOverflow)
	// The other directions still work.
	r.mustPost(entry("back", single("back", whaleB, whaleA, math.MaxInt64)))
	assert.Equal(t, [4]int64{0, math.MaxInt64, 0, math.MaxInt64}, r.counters(whaleA))
	r.verify()
}

func TestErrorPrecedence(t *testing.T) {
	tests := []struct {
		name       string
		entry      ledger.Entry
		code       ledger.Code
		transferID string
	}{
		{"id missing before empty", ledger.Entry{}, ledger.CodeIDMissing, ""},
		{"exists before empty", ledger.Entry{ID: "e-hold"}, ledger.CodeExistsWithDifferentFields, ""},
		{"empty before reversal checks", ledger.Entry{ID: "e", Reverses: "nope"}, ledger.CodeEntryEmpty, ""},
		{"reversal checks before transfers", ledger.Entry{ID: "e", Reverses: "nope", Transfers: []ledger.Transfer{single("t", alice, alice, 0)}}, ledger.CodeReversalNotAllowed, ""},
		{"transfer id before amount", entry("e", single("", alice, alice, 0)), ledger.CodeIDMissing, ""},
		{"amount before same account", entry("e", single("t", alice, alice, 0)), ledger.CodeAmountInvalid, "t"},
		{"same account before not found", entry("e", single("t", "InternalAccount:x", "InternalAccount:x", 5)), ledger.CodeSameAccount, "t"},
		{"transfer id exists before not found", entry("e", hold("h-open", "InternalAccount:x", bob, 5, 0)), ledger.CodeTransferIDExists, "h-open"},
		{"not found before currency", entry("e", single("t", carol, "InternalAccount:x", 5)), ledger.CodeAccountNotFound, "t"},
		{"currency before overdraft", entry("e", single("t", bob, carol, 5)), ledger.CodeCurrencyMismatch, "t"},
		{"overflow before overdraft", entry("e", single("t", alice, bob, math.MaxInt64)), ledger.CodeOverflow, "t"},
		{"debit bound before credit bound", entry("e", single("t", bob, limitAcc, 500)), ledger.CodeExceedsCredits, "t"},
		{"post amount before pending lookup", entry("e", postHold("t", "nope", -1)), ledger.CodeAmountInvalid, "t"},
		{"already posted before exceeds amount", entry("e", postHold("t", "h-posted", 10_000)), ledger.CodePendingAlreadyPosted, "t"},
		{"expired before exceeds amount", entry("e", postHold("t", "h-expiring", 10_000)), ledger.CodePendingExpired, "t"},
		{"expired before different fields", entry("e", ledger.Transfer{ID: "t", Kind: ledger.VoidPending, PendingID: "h-expiring", DebitAccountID: bob}), ledger.CodePendingExpired, "t"},
		{"first failing transfer wins", entry("e",
			single("ok", fundUSD, bob, 5),
			single("over", bob, alice, 1_000_000),
			single("missing", "InternalAccount:x", bob, 5),
		), ledger.CodeExceedsCredits, "over"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t)
			r.fund(alice, 1000)
			r.mustPost(entry("e-hold", hold("h-open", alice, bob, 100, 0)))
			r.mustPost(entry("e-posted", hold("h-posted", alice, bob, 100, 0)))
			r.mustPost(entry("e-post", postHold("p", "h-posted", 0)))
			r.mustPost(entry("e-expiring", hold("h-expiring", alice, bob, 100, time.Second)))
			r.now = r.now.Add(time.Second)
			le := r.refuse(tt.entry, tt.code)
			assert.Equal(t, tt.transferID, le.TransferID)
			r.verify()
		})
	}
}

func TestChangesTrackWhatMoved(t *testing.T) {
	r := newRig(t)
	r.b.Changes()
	r.fund(alice, 100)
	r.mustPost(entry("e-hold", hold("h1", alice, bob, 40, 0)))
	accts, pend := r.b.Changes()
	ids := make([]string, 0, len(accts))
	for _, a := range accts {
		ids = append(ids, a.ID)
	}
	assert.Equal(t, []string{alice, bob, fundUSD}, ids)
	require.Len(t, pend, 1)
	assert.Equal(t, "h1", pend[0].ID)

	r.refuse(entry("e-over", single("t", alice, bob, 61)), ledger.CodeExceedsCredits)
	accts, pend = r.b.Changes()
	assert.Empty(t, accts, "a refused entry marks nothing changed")
	assert.Empty(t, pend)
}

func TestErrorText(t *testing.T) {
	err := &ledger.Error{Code: ledger.CodeExceedsCredits, EntryID: "e", TransferID: "t", AccountID: "a"}
	assert.Equal(t, "ledger: exceeds_credits entry=e transfer=t account=a", err.Error())
	assert.Equal(t, ledger.CodeOK, ledger.CodeOf(errors.New("other")))
	assert.Equal(t, "code(200)", ledger.Code(200).String())
	assert.Equal(t, "post_pending", ledger.PostPending.String())
	assert.Equal(t, "expired", ledger.PendingExpired.String())
}

func TestTransferIDsAreUniqueAcrossEntries(t *testing.T) {
	b := ledger.NewBook()
	b.PutAccount(ledger.Account{ID: "a", Currency: "USD"})
	b.PutAccount(ledger.Account{ID: "b", Currency: "USD"})
	now := time.Unix(0, 0)
	_, err := b.Apply(ledger.Entry{ID: "e1", Transfers: []ledger.Transfer{{ID: "t1", DebitAccountID: "a", CreditAccountID: "b", Amount: 5}}}, now)
	require.NoError(t, err)
	before := b.Accounts()

	_, err = b.Apply(ledger.Entry{ID: "e2", Transfers: []ledger.Transfer{{ID: "t1", DebitAccountID: "a", CreditAccountID: "b", Amount: 5}}}, now)
	require.ErrorIs(t, err, ledger.ErrTransferIDExists)
	_, err = b.Apply(ledger.Entry{ID: "e3", Transfers: []ledger.Transfer{
		{ID: "t2", DebitAccountID: "a", CreditAccountID: "b", Amount: 1},
		{ID: "t2", DebitAccountID: "a", CreditAccountID: "b", Amount: 1},
	}}, now)
	require.ErrorIs(t, err, ledger.ErrTransferIDExists)
	require.Equal(t, before, b.Accounts(), "refused entries change nothing")
}
