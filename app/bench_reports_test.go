package main

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/driver/pgdriver"

	"github.com/corridorpay/corridor/adapters/postgres"
	"github.com/corridorpay/corridor/adapters/system"
	"github.com/corridorpay/corridor/ledger"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit/loadtest"
	"github.com/corridorpay/corridor/testkit/pgtest"
)

// BenchmarkLedgerReports measures the ledger reports on a PostgreSQL
// ledger of REPORTS_BENCH_ENTRIES journal entries (default 1,000,000),
// bulk-loaded with COPY (not through the writer): 10,000 customer accounts
// of two platforms, funding, transfers between them, payouts held on ACH
// then posted or voided, and money arriving on ACH; batches of 100 entries
// share a timestamp, one second apart, like group commits; every entry is
// hashed and chained. It reports:
//
//   - trial balance (every account, as of now and as of the middle of the
//     history): ms per report (aim < 1 s);
//   - point-in-time balance of a random account at a random instant: p50
//     and p99 (aim p99 < 10 ms);
//   - a statement page (50 lines) of a random account from a random
//     instant: p50 and p99 (aim p99 < 20 ms);
//   - the reconciliation export of ACH/USD over the whole history: rows/s
//     in process and through `corridor ledger export` in a child process,
//     with the child's peak RSS (aim >= 50,000 rows/s, flat memory);
//   - journal verification: entries/s in process and through `corridor
//     ledger verify`, with the child's peak RSS (aim >= 100,000/s).
//
// Run it with -benchtime 1x (each part runs its own fixed count):
//
//	go test -run '^$' -bench BenchmarkLedgerReports -benchtime 1x -timeout 60m ./app/
func BenchmarkLedgerReports(b *testing.B) {
	ctx := context.Background()
	n := 1_000_000
	if s := os.Getenv("REPORTS_BENCH_ENTRIES"); s != "" {
		v, err := strconv.Atoi(s)
		require.NoError(b, err)
		n = v
	}
	dsn := pgtest.NewDatabase(b)
	h := benchReportsHistory{entries: n, accounts: 10_000, start: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	t0 := time.Now()
	h.load(b, dsn)
	b.Logf("loaded %d entries in %s", n, time.Since(t0).Round(time.Millisecond))

	db, err := postgres.Open(ctx, dsn)
	require.NoError(b, err)
	b.Cleanup(func() { _ = db.Close() })
	r := postgres.NewLedgerReports(db)
	end := h.end()
	mid := h.start.Add(end.Sub(h.start) / 2)
	rng := rand.New(rand.NewPCG(1, 2))

	b.Run("trial-balance", func(b *testing.B) {
		for _, c := range []struct {
			name string
			asOf *time.Time
		}{{"now", nil}, {"mid", &mid}} {
			b.Run("asOf="+c.name, func(b *testing.B) {
				res := loadtest.Run(10, 1, func(int) error {
					tb, err := r.TrialBalance(ctx, ports.AccountScope{All: true}, c.asOf)
					if err == nil && len(tb.Accounts) == 0 {
						err = errors.New("an empty trial balance")
					}
					return err
				})
				reportRes(b, res)
			})
		}
	})
	b.Run("balance-at", func(b *testing.B) {
		res := loadtest.Run(2_000, 1, func(int) error {
			at := h.start.Add(time.Duration(rng.Int64N(int64(end.Sub(h.start)))))
			_, err := r.BalanceAt(ctx, h.account(rng.IntN(h.accounts)), at)
			return err
		})
		reportRes(b, res)
	})
	b.Run("statement-page", func(b *testing.B) {
		res := loadtest.Run(1_000, 1, func(int) error {
			from := h.start.Add(time.Duration(rng.Int64N(int64(end.Sub(h.start)))))
			_, err := r.Statement(ctx, ports.StatementQuery{AccountID: h.account(rng.IntN(h.accounts)), From: from, To: end, Limit: 50})
			return err
		})
		reportRes(b, res)
	})
	b.Run("export", func(b *testing.B) {
		var rows int64
		var peak uint64
		var ms runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms)
		base := ms.HeapInuse
		t0 := time.Now()
		err := r.ExportSettlement(ctx, ports.SettlementExport{Rail: "ACH", Currency: "USD", From: h.start, To: end},
			func(ports.SettlementRow) error {
				if rows++; rows%50_000 == 0 {
					runtime.ReadMemStats(&ms)
					peak = max(peak, ms.HeapInuse)
				}
				return nil
			})
		require.NoError(b, err)
		el := time.Since(t0)
		b.ReportMetric(float64(rows), "rows")
		b.ReportMetric(float64(rows)/el.Seconds(), "rows/s")
		b.ReportMetric(float64(int64(peak)-int64(base))/(1<<20), "heap_growth_MiB")
		b.ReportMetric(0, "ns/op")
	})
	b.Run("export-cli", func(b *testing.B) {
		bin := benchCorridorBinary(b)
		out := filepath.Join(b.TempDir(), "export.csv")
		el, rss := runChild(b, bin, dsn, "ledger", "export", "-rail", "ACH", "-currency", "USD", "-quiet", "-o", out)
		rows := countLines(b, out) - 1
		b.ReportMetric(float64(rows), "rows")
		b.ReportMetric(float64(rows)/el.Seconds(), "rows/s")
		b.ReportMetric(float64(rss)/1024, "peak_rss_MiB")
		b.ReportMetric(0, "ns/op")
	})
	b.Run("verify", func(b *testing.B) {
		t0 := time.Now()
		v, err := r.VerifyJournal(ctx, nil)
		el := time.Since(t0)
		require.NoError(b, err)
		require.Empty(b, v.Breaks)
		require.EqualValues(b, n, v.Hashed)
		b.ReportMetric(float64(v.Entries)/el.Seconds(), "entries/s")
		b.ReportMetric(el.Seconds(), "s")
		b.ReportMetric(0, "ns/op")
	})
	b.Run("verify-cli", func(b *testing.B) {
		el, rss := runChild(b, benchCorridorBinary(b), dsn, "ledger", "verify", "-quiet")
		b.ReportMetric(float64(n)/el.Seconds(), "entries/s")
		b.ReportMetric(float64(rss)/1024, "peak_rss_MiB")
		b.ReportMetric(0, "ns/op")
	})
}

func reportRes(b *testing.B, r loadtest.Result) {
	b.Helper()
	if r.Errors > 0 {
		b.Fatalf("%d of %d failed", r.Errors, r.Ops)
	}
	loadtest.Report(b, r)
}

// benchCorridorBinary builds the command once per benchmark run (or uses
// CORRIDOR_BIN).
func benchCorridorBinary(b *testing.B) string {
	b.Helper()
	if p := os.Getenv("CORRIDOR_BIN"); p != "" {
		return p
	}
	if benchBinary == "" {
		dir, err := os.MkdirTemp("", "corridor-bench")
		require.NoError(b, err)
		benchBinary = filepath.Join(dir, "corridor")
		out, err := exec.Command("go", "build", "-o", benchBinary, ".").CombinedOutput()
		require.NoError(b, err, "%s", out)
	}
	return benchBinary
}

var benchBinary string

// runChild runs the command against dsn and returns its wall time and peak
// RSS (KiB).
func runChild(b *testing.B, bin, dsn string, args ...string) (time.Duration, int64) {
	b.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "DATABASE_URL="+dsn, "CORRIDOR_LOG_LEVEL=warn")
	t0 := time.Now()
	out, err := cmd.CombinedOutput()
	el := time.Since(t0)
	require.NoError(b, err, "%s", out)
	ru, _ := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	var rss int64
	if ru != nil {
		rss = ru.Maxrss
	}
	return el, rss
}

func countLines(b *testing.B, path string) int {
	b.Helper()
	f, err := os.Open(path)
	require.NoError(b, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		n++
	}
	require.NoError(b, sc.Err())
	return n
}

// benchReportsHistory generates the benchmark's journal deterministically,
// so each table's COPY can walk it again instead of holding it.
type benchReportsHistory struct {
	entries, accounts int
	start             time.Time
}

const benchBatch = 100

func (h benchReportsHistory) account(k int) string {
	return fmt.Sprintf("InternalAccount:bench-%05d", k)
}

func (h benchReportsHistory) end() time.Time {
	return h.start.Add(time.Duration(h.entries/benchBatch+1) * time.Second)
}

// benchHold is a hold and its resolution, for ledger_pending and
// transactions.
type benchHold struct {
	e, resolution ledger.JournalEntry
}

// walk replays the history: fn gets each entry (seq, time and hash set)
// and its postings; hold gets each hold once resolved.
func (h benchReportsHistory) walk(fn func(e ledger.JournalEntry, ps []ledger.Posting), hold func(benchHold)) map[string]ledger.Counters {
	rng := rand.New(rand.NewPCG(42, 7))
	rep := ledger.NewPostingReplay()
	var prev [32]byte
	var ps []ledger.Posting
	var open ledger.JournalEntry
	ach := ledger.RailSettlementID("ACH", "USD")
	fund := ledger.SandboxFundingID("USD")
	final := map[string]ledger.Counters{}
	for i := range h.entries {
		id := fmt.Sprintf("b%07d", i)
		ka := rng.IntN(h.accounts)
		a, c := h.account(ka), h.account((ka+1+rng.IntN(h.accounts-1))%h.accounts)
		var e ledger.Entry
		switch i % 10 {
		case 0:
			e = ledger.Entry{ID: id, Ref: a, Transfers: []ledger.Transfer{{ID: id, Kind: ledger.Single, DebitAccountID: fund, CreditAccountID: a, Amount: 100_000, Currency: "USD", Code: "sandbox_funding"}}}
		case 1, 2, 3, 4:
			e = ledger.Entry{ID: id, Ref: "Transaction:p" + id, Transfers: []ledger.Transfer{{ID: id, Kind: ledger.Single, DebitAccountID: a, CreditAccountID: c, Amount: rng.Int64N(100) + 1, Currency: "USD", Code: "payment"}}}
		case 5, 7:
			e = ledger.Entry{ID: "hold:" + id, Ref: "Transaction:o" + id, Transfers: []ledger.Transfer{{ID: "hold:" + id, Kind: ledger.Pending, DebitAccountID: a, CreditAccountID: ach, Amount: 500, Currency: "USD", Code: "transfer_out"}}}
		case 6, 8:
			p := open.Transfers[0]
			kind, amount := ledger.PostPending, p.Amount
			if i%10 == 8 {
				kind = ledger.VoidPending
			}
			e = ledger.Entry{ID: "done:" + id, Ref: open.Ref, Transfers: []ledger.Transfer{{ID: "done:" + id, Kind: kind, PendingID: p.ID, DebitAccountID: p.DebitAccountID, CreditAccountID: p.CreditAccountID, Amount: amount, Currency: "USD", Code: "transfer_out"}}}
		case 9:
			e = ledger.Entry{ID: id, Ref: "Transaction:n" + id, Transfers: []ledger.Transfer{{ID: id, Kind: ledger.Single, DebitAccountID: ach, CreditAccountID: a, Amount: 200, Currency: "USD", Code: "transfer_in"}}}
		}
		je := ledger.JournalEntry{Entry: e, Seq: int64(i + 1), PostedAt: h.start.Add(time.Duration(i/benchBatch) * time.Second)}
		je.PrevHash = prev
		je.Hash = ledger.Hash(prev, je)
		prev = je.Hash
		ps = ps[:0]
		rep.Add(je, func(p ledger.Posting) { ps = append(ps, p) })
		if fn != nil {
			fn(je, ps)
		}
		switch i % 10 {
		case 5, 7:
			open = je
		case 6, 8:
			if hold != nil {
				hold(benchHold{e: open, resolution: je})
			}
		}
	}
	for k := range h.accounts {
		final[h.account(k)] = rep.Counters(h.account(k))
	}
	final[ach], final[fund] = rep.Counters(ach), rep.Counters(fund)
	return final
}

// load bulk-loads the history into the scratch database at dsn: secondary
// indexes dropped, COPY per table, counters set, indexes rebuilt, analyzed.
func (h benchReportsHistory) load(b *testing.B, dsn string) {
	b.Helper()
	ctx := context.Background()
	db := bun.NewDB(sql.OpenDB(pgdriver.NewConnector(pgdriver.WithDSN(dsn), pgdriver.WithTimeout(30*time.Minute))), pgdialect.New())
	defer db.Close()
	conn, err := db.Conn(ctx)
	require.NoError(b, err)
	defer conn.Close()
	exec := func(q string, args ...any) {
		b.Helper()
		_, err := conn.ExecContext(ctx, q, args...)
		require.NoError(b, err, q)
	}
	exec("SET maintenance_work_mem = '512MB'")
	indexes := map[string]string{
		"ledger_postings_time":     "CREATE INDEX ledger_postings_time ON ledger_postings (account_id, posted_at, id)",
		"ledger_entries_time":      "CREATE INDEX ledger_entries_time ON ledger_entries (posted_at, seq)",
		"ledger_entries_ref":       "CREATE INDEX ledger_entries_ref ON ledger_entries (ref) WHERE ref <> ''",
		"ledger_transfers_pending": "CREATE INDEX ledger_transfers_pending ON ledger_transfers (pending_id) WHERE pending_id <> ''",
	}
	for name := range indexes {
		exec("DROP INDEX " + name)
	}
	exec("ALTER TABLE transactions DISABLE TRIGGER USER")

	accts := ledger.SystemAccounts([]string{"USD"}, map[string][]string{"ACH": {"USD"}})
	for k := range h.accounts {
		platform := "Platform:bench-a"
		if k%2 == 1 {
			platform = "Platform:bench-b"
		}
		accts = append(accts, ledger.Account{ID: h.account(k), Currency: "USD", Kind: ledger.KindInternal, PlatformID: platform})
	}
	led := postgres.NewLedger(db, system.Clock{}, postgres.LedgerOptions{})
	for i := range accts {
		accts[i].CreatedAt = h.start
	}
	require.NoError(b, led.CreateAccounts(ctx, accts...))
	led.Close()

	copyIn := func(table string, write func(w *bufio.Writer)) {
		b.Helper()
		pr, pw := io.Pipe()
		go func() {
			bw := bufio.NewWriterSize(pw, 1<<20)
			write(bw)
			_ = pw.CloseWithError(bw.Flush())
		}()
		_, err := pgdriver.CopyFrom(ctx, conn, pr, "COPY "+table+" FROM STDIN")
		_ = pr.Close()
		require.NoError(b, err, table)
	}
	ts := func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05.999999+00") }
	hexb := func(h [32]byte) string { return `\\x` + hex.EncodeToString(h[:]) }
	copyIn("ledger_entries (id, ref, reverses, posted_at, hash, prev_hash)", func(w *bufio.Writer) {
		h.walk(func(e ledger.JournalEntry, _ []ledger.Posting) {
			fmt.Fprintf(w, "%s\t%s\t\\N\t%s\t%s\t%s\n", e.ID, e.Ref, ts(e.PostedAt), hexb(e.Hash), hexb(e.PrevHash))
		}, nil)
	})
	copyIn("ledger_transfers (entry_id, idx, id, kind, debit_account_id, credit_account_id, amount, currency, pending_id, timeout_ns, code)", func(w *bufio.Writer) {
		h.walk(func(e ledger.JournalEntry, _ []ledger.Posting) {
			for i, t := range e.Transfers {
				fmt.Fprintf(w, "%s\t%d\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t0\t%s\n", e.ID, i, t.ID, t.Kind, t.DebitAccountID, t.CreditAccountID,
					t.Amount, t.Currency, t.PendingID, t.Code)
			}
		}, nil)
	})
	var final map[string]ledger.Counters
	copyIn("ledger_postings (account_id, entry_id, transfer_id, posted_at, debits_pending, debits_posted, credits_pending, credits_posted)", func(w *bufio.Writer) {
		final = h.walk(func(e ledger.JournalEntry, ps []ledger.Posting) {
			for _, p := range ps {
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\n", p.AccountID, e.ID, p.Transfer.ID, ts(e.PostedAt),
					p.After.DebitsPending, p.After.DebitsPosted, p.After.CreditsPending, p.After.CreditsPosted)
			}
		}, nil)
	})
	copyIn("ledger_pending (id, entry_id, debit_account_id, credit_account_id, amount, currency, timeout_ns, code, status, posted_amount, resolved_by, created_at)", func(w *bufio.Writer) {
		h.walk(nil, func(hd benchHold) {
			t, r := hd.e.Transfers[0], hd.resolution.Transfers[0]
			status, posted := "voided", int64(0)
			if r.Kind == ledger.PostPending {
				status, posted = "posted", r.Amount
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%d\tUSD\t0\t%s\t%s\t%d\t%s\t%s\n", t.ID, hd.e.ID, t.DebitAccountID, t.CreditAccountID, t.Amount,
				t.Code, status, posted, hd.resolution.ID, ts(hd.e.PostedAt))
		})
	})
	copyIn("transactions (id, platform_id, type, status, payment_rail, source_currency, destination_currency, sent_amount, received_amount, reference, created_at, updated_at)", func(w *bufio.Writer) {
		h.walk(nil, func(hd benchHold) {
			status := "COMPLETED"
			if hd.resolution.Transfers[0].Kind == ledger.VoidPending {
				status = "FAILED"
			}
			fmt.Fprintf(w, "%s\tPlatform:bench-a\tOUTGOING\t%s\tACH\tUSD\tUSD\t500\t500\tREF%s\t%s\t%s\n", hd.e.Ref, status,
				hd.e.ID[len("hold:"):], ts(hd.e.PostedAt), ts(hd.resolution.PostedAt))
		})
	})
	ids := make([]string, 0, len(final))
	var dp, dpo, cp, cpo []int64
	for id, c := range final {
		ids = append(ids, id)
		dp, dpo, cp, cpo = append(dp, c.DebitsPending), append(dpo, c.DebitsPosted), append(cp, c.CreditsPending), append(cpo, c.CreditsPosted)
	}
	exec(`UPDATE ledger_accounts a SET debits_pending = u.dp, debits_posted = u.dpo, credits_pending = u.cp, credits_posted = u.cpo
		FROM unnest(?::text[], ?::bigint[], ?::bigint[], ?::bigint[], ?::bigint[]) AS u(id, dp, dpo, cp, cpo) WHERE a.id = u.id`,
		pgdialect.Array(ids), pgdialect.Array(dp), pgdialect.Array(dpo), pgdialect.Array(cp), pgdialect.Array(cpo))
	exec("ALTER TABLE transactions ENABLE TRIGGER USER")
	for _, def := range indexes {
		exec(def)
	}
	exec("VACUUM ANALYZE")
}
