package postgres_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/adapters/postgres"
	"github.com/corridorpay/corridor/ledger"
	"github.com/corridorpay/corridor/testkit"
	"github.com/corridorpay/corridor/testkit/pgtest"
)

// TestLedgerConcurrency is the concurrency test, after pgledger's
// TestConcurrency: 32 goroutines move money among 10 protected accounts, one
// of them hot (on one side of about half the transfers), with random amounts
// so that many transfers are refused for insufficient funds. The goroutines
// are split over two Ledgers on one database, as two service instances
// would be, and pairs of them race to post the same entry ids. Money is
// conserved, no protected balance goes negative, no caller sees a deadlock,
// a serialization failure or any other non-ledger error, every raced id is
// recorded once, and the journal replays to the accounts (ledger.Verify).
// It runs with both instances on one hash chain, and with each on a chain
// (shard) of its own, where their batches no longer wait for one journal
// lock and only the accounts' row locks order them.
func TestLedgerConcurrency(t *testing.T) {
	t.Parallel()
	t.Run("one chain", func(t *testing.T) { t.Parallel(); ledgerConcurrency(t, 0, 0) })
	t.Run("a chain per instance", func(t *testing.T) { t.Parallel(); ledgerConcurrency(t, 0, 1) })
}

func ledgerConcurrency(t *testing.T, shards ...int16) {
	const (
		workers      = 32
		perWorker    = 125 // 4,000 transfers
		accounts     = 10
		funding      = 10_000
		maxAmount    = 4_000
		raceEveryNth = 10
	)
	ctx := context.Background()
	db := pgtest.NewDB(t)
	clock := testkit.NewFakeClock(t0)
	instances := []*postgres.Ledger{
		postgres.NewLedger(db, clock, postgres.LedgerOptions{Shard: shards[0]}),
		postgres.NewLedger(db, clock, postgres.LedgerOptions{Shard: shards[1]}),
	}
	for _, l := range instances {
		t.Cleanup(l.Close)
	}
	l := instances[0]

	ids := make([]string, accounts)
	accts := []ledger.Account{{ID: fundUSD, Currency: "USD", Kind: ledger.KindSandboxFunding}}
	for i := range ids {
		ids[i] = fmt.Sprintf("InternalAccount:%02d", i)
		accts = append(accts, protected(ids[i], "USD"))
	}
	hot := ids[0]
	require.NoError(t, l.CreateAccounts(ctx, accts...))
	for _, id := range ids {
		fund(t, l, "fund:"+id, id, funding)
	}

	var (
		ok, refused, hotMoves atomic.Int64
		mu                    sync.Mutex
		unexpected            []error
		raced                 = map[string][]error{}
	)
	var wg sync.WaitGroup
	for w := range workers {
		// Workers 2k and 2k+1 run on different instances and share a seed,
		// so every tenth entry of theirs is the same entry, raced.
		store := instances[w%2]
		pair := w / 2
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(pair), uint64(w)))
			shared := rand.New(rand.NewPCG(uint64(pair), 7))
			for i := range perWorker {
				var e ledger.Entry
				race := i%raceEveryNth == 0
				r := rng
				if race {
					r = shared
				}
				from, to := r.IntN(accounts), r.IntN(accounts-1)
				if r.IntN(2) == 0 { // about half the transfers touch the hot account
					if r.IntN(2) == 0 {
						from, to = 0, 1+r.IntN(accounts-1)
					} else {
						from, to = 1+r.IntN(accounts-1), 0
					}
				} else if to >= from {
					to++
				}
				amount := 1 + r.Int64N(maxAmount)
				id := fmt.Sprintf("w%02d-%03d", w, i)
				if race {
					id = fmt.Sprintf("race%02d-%03d", pair, i)
				}
				e = entry(id, single(id+":0", ids[from], ids[to], amount))
				if r.IntN(8) == 0 { // some entries have two legs, all or nothing
					third := (to + 1) % accounts
					if third == from {
						third = (third + 1) % accounts
					}
					e.Transfers = append(e.Transfers, single(id+":1", ids[to], ids[third], 1+r.Int64N(maxAmount)))
				}
				_, err := store.Post(ctx, e)
				if race {
					mu.Lock()
					raced[id] = append(raced[id], err)
					mu.Unlock()
				}
				switch code := ledger.CodeOf(err); {
				case err == nil:
					ok.Add(1)
					if from == 0 || to == 0 {
						hotMoves.Add(1)
					}
				case code == ledger.CodeExceedsCredits:
					refused.Add(1)
				case race && code == ledger.CodeExists:
				default:
					mu.Lock()
					unexpected = append(unexpected, err)
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()

	require.Empty(t, unexpected, "only ledger refusals may reach callers (no deadlock or serialization error)")
	t.Logf("transfers: %d posted, %d refused for funds, %d posted touching the hot account", ok.Load(), refused.Load(), hotMoves.Load())
	assert.Positive(t, refused.Load(), "the amounts are meant to exhaust balances")
	assert.Greater(t, ok.Load(), int64(workers*perWorker/4))
	assert.Greater(t, hotMoves.Load(), ok.Load()/4, "the hot account takes a large share")

	for id, errs := range raced {
		require.Len(t, errs, 2, id)
		successes := 0
		for _, err := range errs {
			if err == nil {
				successes++
			}
		}
		assert.LessOrEqual(t, successes, 1, "entry %s recorded twice", id)
	}

	got, err := l.Accounts(ctx, ids...)
	require.NoError(t, err)
	var total int64
	for _, a := range got {
		assert.GreaterOrEqual(t, a.Available(), int64(0), a.ID)
		total += a.Net()
	}
	assert.Equal(t, int64(accounts*funding), total, "money is conserved among the protected accounts")
	assert.Equal(t, int64(-accounts*funding), account(t, l, fundUSD).Net())
	h := account(t, l, hot)
	assert.Positive(t, h.DebitsPosted+h.CreditsPosted-funding)

	var journalLen int
	require.NoError(t, db.NewRaw(`SELECT count(*) FROM ledger_entries`).Scan(ctx, &journalLen))
	assert.Equal(t, int(ok.Load())+accounts, journalLen, "one journal row per successful post")
	verify(t, l, db)
	v, err := postgres.NewLedgerReports(db).VerifyJournal(ctx, nil)
	require.NoError(t, err)
	require.True(t, v.OK(), "%v", v.Breaks)
	chains := 1
	if shards[0] != shards[1] {
		chains = 2
	}
	assert.Len(t, v.Chains, chains)
}
