package postgres_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/adapters/memory"
	"github.com/corridorpay/corridor/adapters/postgres"
	"github.com/corridorpay/corridor/ledger"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit"
	"github.com/corridorpay/corridor/testkit/loadtest"
	"github.com/corridorpay/corridor/testkit/pgtest"
)

const (
	benchAccounts = 10_000
	benchHot      = "InternalAccount:bench-hot"
	benchFunding  = int64(1) << 40 // far more than any run moves: nothing is refused
)

var benchSeq atomic.Int64

// BenchmarkLedgerPost posts single-phase transfers between protected
// accounts (debits must not exceed credits) at concurrency 1, 8 and 64, on
// the memory store and on PostgreSQL, either spread over 10,000 accounts or
// all through one hot (also protected) account, and reports transfers a
// second (ops/s) and the p50 and p99 latency of one Post. Run it with
//
//	go test -run '^$' -bench BenchmarkLedgerPost -benchtime 3s ./adapters/postgres/
//
// Each line reads like
//
//	BenchmarkLedgerPost/store=postgres/accounts=hot/c=64-2  40000  0 ns/op  0 errors  25000 ops/s  2.1 p50_ms  4.0 p99_ms
func BenchmarkLedgerPost(b *testing.B) {
	ctx := context.Background()
	stores := []struct {
		name string
		open func(b *testing.B) ports.LedgerStore
	}{
		{"memory", func(b *testing.B) ports.LedgerStore {
			return memory.NewLedger(testkit.NewFakeClock(t0))
		}},
		{"postgres", func(b *testing.B) ports.LedgerStore {
			l := postgres.NewLedger(pgtest.NewDB(b), testkit.NewFakeClock(t0), postgres.LedgerOptions{})
			b.Cleanup(l.Close)
			return l
		}},
	}
	for _, st := range stores {
		b.Run("store="+st.name, func(b *testing.B) {
			s := st.open(b)
			ids := benchChart(b, s)
			for _, layout := range []string{"spread", "hot"} {
				for _, c := range []int{1, 8, 64} {
					b.Run(fmt.Sprintf("accounts=%s/c=%d", layout, c), func(b *testing.B) {
						run := benchSeq.Add(1)
						r := loadtest.Run(b.N, c, func(i int) error {
							return benchPost(ctx, s, ids, layout == "hot", run, i)
						})
						loadtest.Report(b, r)
						if r.Errors > 0 {
							b.Fatalf("%d of %d posts failed", r.Errors, r.Ops)
						}
					})
				}
			}
		})
	}
}

// benchPost posts the i-th transfer of run: between two of ids, or (hot)
// through the hot account.
func benchPost(ctx context.Context, s ports.LedgerStore, ids []string, hot bool, run int64, i int) error {
	from, to := benchPair(ids, hot, uint64(run)<<32|uint64(i))
	id := fmt.Sprintf("bench-%d-%d", run, i)
	_, err := s.Post(ctx, ledger.Entry{ID: id, Ref: "Bench:" + id, Transfers: []ledger.Transfer{{
		ID: id + ":0", DebitAccountID: from, CreditAccountID: to,
		Amount: 1 + int64(i%100), Currency: "USD", Kind: ledger.Single,
	}}})
	return err
}

// benchChart creates and funds the hot account and 10,000 others, and
// returns the others' ids.
func benchChart(b testing.TB, s ports.LedgerStore) []string {
	b.Helper()
	ctx := context.Background()
	ids := make([]string, benchAccounts)
	accts := []ledger.Account{
		{ID: fundUSD, Currency: "USD", Kind: ledger.KindSandboxFunding},
		protected(benchHot, "USD"),
	}
	for i := range ids {
		ids[i] = fmt.Sprintf("InternalAccount:bench-%05d", i)
		accts = append(accts, protected(ids[i], "USD"))
	}
	for len(accts) > 0 {
		n := min(len(accts), 1_000)
		require.NoError(b, s.CreateAccounts(ctx, accts[:n]...))
		accts = accts[n:]
	}
	all := append([]string{benchHot}, ids...)
	start := time.Now()
	r := loadtest.Run(len(all), 64, func(i int) error {
		id := "bench-fund-" + all[i]
		_, err := s.Post(ctx, ledger.Entry{ID: id, Transfers: []ledger.Transfer{{
			ID: id, DebitAccountID: fundUSD, CreditAccountID: all[i], Amount: benchFunding, Currency: "USD",
		}}})
		return err
	})
	require.Zero(b, r.Errors, "funding failed")
	b.Logf("funded %d accounts in %s", len(all), time.Since(start).Round(time.Millisecond))
	return ids
}

// benchPair picks a transfer's accounts from seed: two distinct accounts of
// ids, or (hot) the hot account and one of ids, in either direction.
func benchPair(ids []string, hot bool, seed uint64) (from, to string) {
	x := splitmix(seed)
	n := uint64(len(ids))
	i := x % n
	if hot {
		if x>>63 == 0 {
			return benchHot, ids[i]
		}
		return ids[i], benchHot
	}
	j := (x >> 20) % (n - 1)
	if j >= i {
		j++
	}
	return ids[i], ids[j]
}

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// BenchmarkLedgerTwoWriters posts spread transfers through two Ledgers on
// one database, as two service instances would, half the callers each:
// with both writers on one hash chain (their batches take turns on one
// journal lock) and with a chain each (shards 0 and 1: they only meet on
// the row locks of accounts both touch). Run it with
//
//	go test -run '^$' -bench BenchmarkLedgerTwoWriters -benchtime 20000x ./adapters/postgres/
func BenchmarkLedgerTwoWriters(b *testing.B) {
	ctx := context.Background()
	for _, chains := range []struct {
		name   string
		shards [2]int16
	}{{"one", [2]int16{0, 0}}, {"two", [2]int16{0, 1}}} {
		b.Run("chains="+chains.name, func(b *testing.B) {
			db := pgtest.NewDB(b)
			var ls [2]*postgres.Ledger
			for i, shard := range chains.shards {
				ls[i] = postgres.NewLedger(db, testkit.NewFakeClock(t0), postgres.LedgerOptions{Shard: shard})
				b.Cleanup(ls[i].Close)
			}
			ids := benchChart(b, ls[0])
			for _, c := range []int{8, 64} {
				b.Run(fmt.Sprintf("c=%d", c), func(b *testing.B) {
					run := benchSeq.Add(1)
					r := loadtest.Run(b.N, c, func(i int) error {
						return benchPost(ctx, ls[i%2], ids, false, run, i)
					})
					loadtest.Report(b, r)
					if r.Errors > 0 {
						b.Fatalf("%d of %d posts failed", r.Errors, r.Ops)
					}
				})
			}
		})
	}
}
