package ledger_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/ledger"
)

// verifyRig is a small clean ledger: funding, a transfer, an open hold, a
// posted hold, a voided hold and an expired one.
func verifyRig(t *testing.T) *rig {
	r := newRig(t)
	r.fund(alice, 1000)
	r.fund(carol, 500)
	r.mustPost(entry("pay", single("pay", alice, bob, 100)))
	r.mustPost(entry("h-open", hold("h-open", alice, bob, 50, 0)))
	r.mustPost(entry("h-post", hold("h-post", alice, bob, 70, 0)))
	r.mustPost(entry("p", postHold("p", "h-post", 30)))
	r.mustPost(entry("h-void", hold("h-void", bob, alice, 20, 0)))
	r.mustPost(entry("v", voidHold("v", "h-void")))
	r.mustPost(entry("h-exp", hold("h-exp", carol, fundEUR, 5, time.Second)))
	r.now = r.now.Add(time.Second)
	due := r.b.Due(r.now)
	require.Len(t, due, 1)
	r.mustPost(ledger.ExpiryEntry(due[0]))
	r.verify()
	return r
}

func findAccount(accts []ledger.Account, id string) *ledger.Account {
	for i := range accts {
		if accts[i].ID == id {
			return &accts[i]
		}
	}
	return nil
}

func findPending(ps []ledger.PendingTransfer, id string) *ledger.PendingTransfer {
	for i := range ps {
		if ps[i].ID == id {
			return &ps[i]
		}
	}
	return nil
}

// snapshot is what Verify checks, for a test case to tamper with.
type snapshot struct {
	a []ledger.Account
	p []ledger.PendingTransfer
	j []ledger.JournalEntry
}

func TestVerifyDetectsBreaks(t *testing.T) {
	tests := []struct {
		name     string
		tamper   func(s *snapshot)
		kind     string
		contains string
	}{
		{
			name: "posted credit added out of thin air",
			tamper: func(s *snapshot) {
				findAccount(s.a, bob).CreditsPosted += 7
			},
			kind:     ledger.ViolationZeroSum,
			contains: "currency USD",
		},
		{
			name: "balanced but not what the journal says",
			tamper: func(s *snapshot) {
				findAccount(s.a, bob).CreditsPosted += 7
				findAccount(s.a, fundUSD).CreditsPosted -= 7
			},
			kind:     ledger.ViolationCounter,
			contains: "account " + bob + " creditsPosted: journal replay gives 130, account has 137",
		},
		{
			name: "pending sides do not cancel",
			tamper: func(s *snapshot) {
				findAccount(s.a, bob).CreditsPending = 0
			},
			kind:     ledger.ViolationZeroSum,
			contains: "credits pending",
		},
		{
			name: "protected account overdrawn",
			tamper: func(s *snapshot) {
				findAccount(s.a, alice).DebitsPosted += 10_000
				findAccount(s.a, bob).CreditsPosted += 10_000
			},
			kind:     ledger.ViolationBound,
			contains: "account " + alice + " must not have debits exceed credits",
		},
		{
			name: "mirror bound broken",
			tamper: func(s *snapshot) {
				findAccount(s.a, limitAcc).CreditsPosted += 1
				findAccount(s.a, fundUSD).DebitsPosted += 1
			},
			kind:     ledger.ViolationBound,
			contains: "must not have credits exceed debits",
		},
		{
			name: "negative counter",
			tamper: func(s *snapshot) {
				findAccount(s.a, whaleA).DebitsPosted = -3
				findAccount(s.a, whaleB).DebitsPosted = 3
			},
			kind:     ledger.ViolationBound,
			contains: "debitsPosted is negative: -3",
		},
		{
			name: "hold missing from the snapshot",
			tamper: func(s *snapshot) {
				var out []ledger.PendingTransfer
				for _, x := range s.p {
					if x.ID != "h-open" {
						out = append(out, x)
					}
				}
				s.p = out
			},
			kind:     ledger.ViolationHolds,
			contains: "hold h-open",
		},
		{
			name: "hold amount differs from the counters",
			tamper: func(s *snapshot) {
				findPending(s.p, "h-open").Amount = 49
			},
			kind:     ledger.ViolationHolds,
			contains: "account " + alice + " debitsPending: open holds sum to 49, account has 50",
		},
		{
			name: "hold status differs from the journal",
			tamper: func(s *snapshot) {
				findPending(s.p, "h-exp").Status = ledger.PendingVoided
			},
			kind:     ledger.ViolationHolds,
			contains: "h-exp status: journal replay gives expired, snapshot has voided",
		},
		{
			name: "posted amount differs from the journal",
			tamper: func(s *snapshot) {
				findPending(s.p, "h-post").PostedAmount = 70
			},
			kind:     ledger.ViolationHolds,
			contains: "posted amount",
		},
		{
			name: "journal missing an entry",
			tamper: func(s *snapshot) {
				var out []ledger.JournalEntry
				for _, e := range s.j {
					if e.ID != "pay" {
						out = append(out, e)
					}
				}
				s.j = out
			},
			kind:     ledger.ViolationCounter,
			contains: "account " + alice + " debitsPosted: journal replay gives 30, account has 130",
		},
		{
			name: "journal out of order",
			tamper: func(s *snapshot) {
				s.j[2].Seq, s.j[3].Seq = s.j[3].Seq, s.j[2].Seq
			},
			kind:     ledger.ViolationJournal,
			contains: "not after the previous entry's seq",
		},
		{
			name: "hold resolved before it was opened",
			tamper: func(s *snapshot) {
				var out []ledger.JournalEntry
				for _, e := range s.j {
					if e.ID != "h-void" {
						out = append(out, e)
					}
				}
				s.j = out
			},
			kind:     ledger.ViolationJournal,
			contains: "resolves hold h-void, which no earlier entry opened",
		},
		{
			name: "hold resolved twice",
			tamper: func(s *snapshot) {
				dup := s.j[len(s.j)-1]
				dup.Seq++
				dup.ID = "again"
				s.j = append(s.j, dup)
			},
			kind:     ledger.ViolationJournal,
			contains: "which is already expired",
		},
		{
			name: "journal moves an unknown account",
			tamper: func(s *snapshot) {
				var out []ledger.Account
				for _, x := range s.a {
					if x.ID != fundEUR {
						out = append(out, x)
					}
				}
				s.a = out
			},
			kind:     ledger.ViolationJournal,
			contains: "account " + fundEUR + ", which is not in the snapshot",
		},
		{
			name: "account in another currency than the journal",
			tamper: func(s *snapshot) {
				findAccount(s.a, bob).Currency = "EUR"
			},
			kind:     ledger.ViolationJournal,
			contains: "account " + bob + " is in EUR but the journal moves USD on it",
		},
		{
			name: "account listed twice",
			tamper: func(s *snapshot) {
				s.a = append(s.a, *findAccount(s.a, carol))
			},
			kind:     ledger.ViolationJournal,
			contains: "appears twice",
		},
		{
			name: "post of more than was held",
			tamper: func(s *snapshot) {
				for i := range s.j {
					if s.j[i].ID == "p" {
						s.j[i].Transfers = []ledger.Transfer{s.j[i].Transfers[0]}
						s.j[i].Transfers[0].Amount = 71
					}
				}
			},
			kind:     ledger.ViolationJournal,
			contains: "posts 71 of hold h-post, which holds 70",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := verifyRig(t)
			journal := make([]ledger.JournalEntry, len(r.journal))
			copy(journal, r.journal)
			snap := &snapshot{a: r.b.Accounts(), p: r.b.PendingTransfers(), j: journal}
			tt.tamper(snap)
			got := ledger.Verify(snap.a, snap.p, snap.j)
			require.NotEmpty(t, got)
			var kinds []string
			found := false
			for _, v := range got {
				kinds = append(kinds, v.String())
				if v.Kind == tt.kind && strings.Contains(v.Message, tt.contains) {
					found = true
				}
			}
			assert.True(t, found, "want a %s violation containing %q, got:\n%v", tt.kind, tt.contains, kinds)
		})
	}
}

func TestVerifyReportsInOrderAndTruncates(t *testing.T) {
	r := verifyRig(t)
	accts := r.b.Accounts()
	for i := range accts {
		accts[i].CreditsPosted += 1_000 // every account off, and every currency unbalanced
	}
	for i := 0; i < 60; i++ {
		accts = append(accts, ledger.Account{ID: "ghost:" + string(rune('A'+i)), Currency: "GBP", CreditsPosted: 1})
	}
	got := ledger.Verify(accts, r.b.PendingTransfers(), r.journal)
	require.Len(t, got, 51)
	assert.Equal(t, ledger.ViolationZeroSum, got[0].Kind, "zero-sum breaks come first")
	assert.Equal(t, ledger.ViolationTruncated, got[50].Kind)
}

func TestVerifyCleanOnEmptyAndHugeLedgers(t *testing.T) {
	assert.Nil(t, ledger.Verify(nil, nil, nil))

	// Sums across accounts that exceed int64 must not wrap into a false
	// alarm or hide a real one.
	accts := []ledger.Account{
		{ID: "a", Currency: "X", CreditsPosted: math.MaxInt64},
		{ID: "b", Currency: "X", CreditsPosted: math.MaxInt64},
		{ID: "c", Currency: "X", DebitsPosted: math.MaxInt64},
		{ID: "d", Currency: "X", DebitsPosted: math.MaxInt64},
	}
	journal := []ledger.JournalEntry{
		{Seq: 1, Entry: entry("1", ledger.Transfer{ID: "1", DebitAccountID: "c", CreditAccountID: "a", Amount: math.MaxInt64, Currency: "X"})},
		{Seq: 2, Entry: entry("2", ledger.Transfer{ID: "2", DebitAccountID: "d", CreditAccountID: "b", Amount: math.MaxInt64, Currency: "X"})},
	}
	assert.Nil(t, ledger.Verify(accts, nil, journal))

	accts[3].DebitsPosted = math.MaxInt64 - 2
	got := ledger.Verify(accts, nil, journal)
	require.NotEmpty(t, got)
	assert.Equal(t, ledger.ViolationZeroSum, got[0].Kind)
	assert.Contains(t, got[0].Message, "credits posted sum to 18446744073709551614")
	assert.Contains(t, got[0].Message, "net 2")
}

func TestJournalReplayStreams(t *testing.T) {
	r := verifyRig(t)
	replay := ledger.NewJournalReplay()
	for _, e := range r.journal[:3] {
		replay.Add(e)
	}
	assert.NotEmpty(t, replay.Check(r.b.Accounts(), r.b.PendingTransfers()), "a partial journal does not explain the accounts")
	for _, e := range r.journal[3:] {
		replay.Add(e)
	}
	assert.Equal(t, len(r.journal), replay.Entries())
	assert.Nil(t, replay.Check(r.b.Accounts(), r.b.PendingTransfers()))
	assert.Nil(t, replay.Check(r.b.Accounts(), r.b.PendingTransfers()), "Check does not consume the replay")

	// Resolved holds may be left out of the snapshot; open ones may not.
	var open []ledger.PendingTransfer
	for _, p := range r.b.PendingTransfers() {
		if p.Status == ledger.PendingOpen {
			open = append(open, p)
		}
	}
	assert.Nil(t, replay.Check(r.b.Accounts(), open))
}
