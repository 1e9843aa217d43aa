package ledger_test

import (
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/ledger"
)

// The postings replayed from the journal end at the Book's counters, each
// posting's After is the previous After plus its Delta, and the postings of
// one transfer mirror each other.
func TestPostingReplayMatchesTheBook(t *testing.T) {
	r := newRig(t)
	rng := rand.New(rand.NewPCG(7, 11))
	r.fund(alice, 100_000)
	r.fund(bob, 50_000)
	var open []string
	for i := range 300 {
		r.now = r.now.Add(time.Second)
		id := "e" + strconv.Itoa(i)
		switch rng.IntN(5) {
		case 0:
			_, _ = r.post(entry(id, single(id, alice, bob, rng.Int64N(500)+1)))
		case 1:
			if _, err := r.post(entry(id, hold(id, bob, alice, rng.Int64N(500)+1, 0))); err == nil {
				open = append(open, id)
			}
		case 2, 3:
			if len(open) > 0 {
				p := open[0]
				open = open[1:]
				if rng.IntN(2) == 0 {
					r.mustPost(entry(id, postHold(id, p, 0)))
				} else {
					r.mustPost(entry(id, voidHold(id, p)))
				}
			}
		case 4:
			// A cross-currency entry through the FX positions.
			r.fund(carol, 100)
			_, _ = r.post(entry(id, single(id+":a", alice, fxUSD, 110), single(id+":b", fxEUR, carol, 100)))
		}
	}
	r.verify()

	rep := ledger.NewPostingReplay()
	last := map[string]ledger.Counters{}
	n := 0
	for _, e := range r.journal {
		var got []ledger.Posting
		rep.Add(e, func(p ledger.Posting) { got = append(got, p) })
		require.Len(t, got, 2*len(e.Transfers))
		for i, p := range got {
			assert.Equal(t, last[p.AccountID].Add(p.Delta), p.After)
			last[p.AccountID] = p.After
			assert.Equal(t, i%2 == 0, p.Debit)
			assert.Equal(t, e.Transfers[i/2], p.Transfer)
			assert.Equal(t, e.PostedAt, p.PostedAt)
		}
		for i := 0; i < len(got); i += 2 {
			d, c := got[i].Delta, got[i+1].Delta
			assert.Equal(t, d.DebitsPending, c.CreditsPending)
			assert.Equal(t, d.DebitsPosted, c.CreditsPosted)
		}
		n += len(got)
	}
	assert.Positive(t, n)
	for _, a := range r.b.Accounts() {
		assert.Equal(t, a.Counters(), rep.Counters(a.ID), a.ID)
		assert.Equal(t, a.Available(), a.Counters().Available())
		assert.Equal(t, a.Total(), a.Counters().Total())
		assert.Equal(t, a.Net(), a.Counters().Net())
	}
}
