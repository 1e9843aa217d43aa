package main

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	httpapi "github.com/corridorpay/corridor/adapters/http"
	"github.com/corridorpay/corridor/adapters/postgres"
	"github.com/corridorpay/corridor/adapters/system"
	"github.com/corridorpay/corridor/core/reports"
	"github.com/corridorpay/corridor/ports"
)

const ledgerUsage = `usage:
  corridor ledger trial-balance [-as-of T] [-format table|csv]
  corridor ledger balance -account ID [-as-of T] [-format table|csv]
  corridor ledger statement -account ID [-from T] [-to T] [-format table|csv]
  corridor ledger export -rail RAIL -currency CUR [-from T] [-to T] [-format csv|ndjson] [-o FILE]
  corridor ledger verify [-format table|csv]
T is an RFC 3339 date-time or a date (midnight UTC); windows are [from, to).
export and verify draw a progress bar on stderr (-quiet turns it off).`

// ledgerCmd runs the ledger reports against DATABASE_URL as the operator.
func ledgerCmd(ctx context.Context, cfg Config, log *slog.Logger, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprintln(stdout, ledgerUsage)
		return nil
	}
	sub, args := args[0], args[1:]
	fs := flag.NewFlagSet("ledger "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	format := fs.String("format", "table", "output: table or csv (export: csv or ndjson)")
	account := fs.String("account", "", "ledger account id (balance, statement)")
	asOf := fs.String("as-of", "", "instant (default now)")
	from := fs.String("from", "", "window start, inclusive (default the beginning)")
	to := fs.String("to", "", "window end, exclusive (default now)")
	rail := fs.String("rail", "", "rail (export)")
	currency := fs.String("currency", "", "currency (export)")
	output := fs.String("o", "", "write the export to this file instead of stdout")
	quiet := fs.Bool("quiet", false, "no progress bar")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch sub {
	case "trial-balance", "balance", "statement", "verify":
		if *format != "table" && *format != "csv" {
			return fmt.Errorf("ledger %s: -format must be table or csv", sub)
		}
	case "export":
		if *format == "table" {
			*format = "csv"
		}
		if *format != "csv" && *format != "ndjson" {
			return fmt.Errorf("ledger export: -format must be csv or ndjson")
		}
	default:
		return fmt.Errorf("unknown ledger command %q\n%s", sub, ledgerUsage)
	}
	if (sub == "balance" || sub == "statement") && *account == "" {
		return fmt.Errorf("ledger %s: -account is required", sub)
	}
	if cfg.DatabaseURL == "" {
		return errors.New("ledger needs DATABASE_URL: the in-memory ledger of another process cannot be read")
	}
	db, err := openMigrated(ctx, cfg.DatabaseURL, log)
	if err != nil {
		return err
	}
	defer db.Close()
	svc := reports.New(postgres.NewLedgerReports(db), system.Clock{}, reports.Options{})
	v := reports.Operator()
	csvOut := *format == "csv"

	switch sub {
	case "trial-balance":
		tb, err := svc.TrialBalance(ctx, v, *asOf)
		if err != nil {
			return err
		}
		return printTrialBalance(stdout, tb, csvOut)
	case "balance":
		pb, err := svc.BalanceAt(ctx, v, *account, *asOf)
		if err != nil {
			return err
		}
		t := newTable(stdout, csvOut, "account", "currency", "asOf", "net", "available", "total",
			"debitsPending", "debitsPosted", "creditsPending", "creditsPosted", "lastEntry")
		b := pb.Balance
		t.row(pb.AccountID, pb.Currency, pb.AsOf.Format(time.RFC3339Nano), i64(b.Net), i64(b.Available), i64(b.Total),
			i64(b.DebitsPending), i64(b.DebitsPosted), i64(b.CreditsPending), i64(b.CreditsPosted), pb.LastEntryID)
		return t.flush()
	case "statement":
		return printStatement(ctx, stdout, svc, v, *account, *from, *to, csvOut)
	case "export":
		out := stdout
		if *output != "" {
			f, err := os.Create(*output)
			if err != nil {
				return err
			}
			defer f.Close()
			out = f
		}
		return runExport(ctx, out, stderr, svc, v, reports.ExportQuery{Rail: *rail, Currency: *currency, From: *from, To: *to},
			*format == "ndjson", !*quiet)
	default: // verify
		var bar *progressBar
		if !*quiet {
			bar = newProgressBar(stderr, "verify", "rows")
		}
		res, err := svc.Verify(ctx, v, func(done, total int64) {
			if bar != nil {
				bar.set(done, total)
			}
		})
		if bar != nil {
			bar.done()
		}
		if err != nil {
			return err
		}
		if err := printVerification(stdout, res, csvOut); err != nil {
			return err
		}
		if !res.OK {
			return fmt.Errorf("the journal does not verify: %d break(s), the first at %s", len(res.Breaks), breakPlace(res.Breaks[0]))
		}
		return nil
	}
}

func i64(n int64) string { return strconv.FormatInt(n, 10) }

// table writes aligned columns or CSV.
type table struct {
	tw  *tabwriter.Writer
	cw  *csv.Writer
	err error
}

func newTable(w io.Writer, csvOut bool, header ...string) *table {
	t := &table{}
	if csvOut {
		t.cw = csv.NewWriter(w)
	} else {
		t.tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	}
	t.row(header...)
	return t
}

func (t *table) row(cells ...string) {
	if t.err != nil {
		return
	}
	if t.cw != nil {
		t.err = t.cw.Write(cells)
		return
	}
	_, t.err = fmt.Fprintln(t.tw, strings.Join(cells, "\t"))
}

func (t *table) flush() error {
	if t.err != nil {
		return t.err
	}
	if t.cw != nil {
		t.cw.Flush()
		return t.cw.Error()
	}
	return t.tw.Flush()
}

func printTrialBalance(w io.Writer, tb reports.TrialBalance, csvOut bool) error {
	if !csvOut {
		fmt.Fprintf(w, "trial balance as of %s: %s\n\n", tb.AsOf.Format(time.RFC3339Nano), balancedWord(tb.Balanced))
	}
	t := newTable(w, csvOut, "currency", "account", "kind", "platform", "debits", "credits", "net", "debitsPending", "creditsPending", "balanced")
	for _, c := range tb.Currencies {
		for _, l := range c.Accounts {
			t.row(c.Currency, l.AccountID, l.Kind, l.PlatformID, i64(l.Debits), i64(l.Credits), i64(l.Net),
				i64(l.DebitsPending), i64(l.CreditsPending), "")
		}
		t.row(c.Currency, "TOTAL", "", "", i64(c.Debits), i64(c.Credits), i64(c.Total), "", "", strconv.FormatBool(c.Balanced))
	}
	return t.flush()
}

func balancedWord(ok bool) string {
	if ok {
		return "every currency balances"
	}
	return "NOT BALANCED"
}

// printStatement prints every page of an account's statement as it is read.
func printStatement(ctx context.Context, w io.Writer, svc *reports.Service, v reports.Viewer, account, from, to string, csvOut bool) error {
	q := reports.StatementQuery{From: from, To: to, Limit: reports.MaxLimit}
	first := true
	var t *table
	for {
		st, err := svc.Statement(ctx, v, account, q)
		if err != nil {
			return err
		}
		if first {
			first = false
			if !csvOut {
				fmt.Fprintf(w, "statement of %s (%s) from %s to %s\nopening net %d, closing net %d\n\n", st.Account.ID, st.Account.Currency,
					st.From.Format(time.RFC3339Nano), st.To.Format(time.RFC3339Nano), st.Opening.Net, st.Closing.Net)
			}
			t = newTable(w, csvOut, "postedAt", "seq", "entry", "transfer", "kind", "code", "direction", "amount",
				"counterparty", "change", "balance", "available", "causedBy", "ref", "reverses")
		}
		for _, l := range st.Lines {
			t.row(l.PostedAt.Format(time.RFC3339Nano), i64(l.Seq), l.EntryID, l.TransferID, l.Kind, l.Code, l.Direction,
				i64(l.Amount), l.Counterparty, i64(l.Change.Net), i64(l.Balance.Net), i64(l.Balance.Available),
				l.CausedBy.Type, l.CausedBy.Ref, l.CausedBy.Reverses)
		}
		if !st.HasMore {
			return t.flush()
		}
		last := st.Lines[len(st.Lines)-1].Key
		q.After = &last
	}
}

// runExport streams the reconciliation export to out, with a progress bar
// over the window's time span on stderr.
func runExport(ctx context.Context, out, stderr io.Writer, svc *reports.Service, v reports.Viewer, q reports.ExportQuery, ndjson, progress bool) error {
	from, to, err := svc.ExportWindow(ctx, v, q)
	if err != nil {
		return err
	}
	var bar *progressBar
	if progress {
		bar = newProgressBar(stderr, "export", "rows")
	}
	span := to.Sub(from)
	// Buffered: rows leave in chunks, and memory stays one row and a buffer.
	bw := bufio.NewWriterSize(out, 64<<10)
	cw := csv.NewWriter(bw)
	enc := json.NewEncoder(bw)
	if !ndjson {
		_ = cw.Write(httpapi.ReconciliationColumns)
	}
	var rows int64
	record := make([]string, 0, 14)
	err = svc.Export(ctx, v, q, func(r reports.ExportRow) error {
		rows++
		if bar != nil && rows%1000 == 0 && span > 0 {
			bar.setFraction(float64(r.PostedAt.Sub(from))/float64(span), rows)
		}
		row := httpapi.NewReconciliationRow(r)
		if ndjson {
			return enc.Encode(row)
		}
		record = row.Record(record)
		return cw.Write(record)
	})
	cw.Flush()
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	if bar != nil {
		bar.setFraction(1, rows)
		bar.done()
	}
	if err != nil {
		return err
	}
	return cw.Error()
}

func printVerification(w io.Writer, v reports.Verification, csvOut bool) error {
	if !csvOut {
		fmt.Fprintf(w, "entries %d (hashed %d, unhashed %d), accounts %d, postings %d\n", v.Entries, v.Hashed, v.Unhashed, v.Accounts, v.Postings)
		if v.Head != "" {
			fmt.Fprintf(w, "chain head %s\n", v.Head)
		}
		if v.Note != "" {
			fmt.Fprintln(w, v.Note)
		}
		if v.OK {
			fmt.Fprintln(w, "ok: the hash chain, every posting and every account's counters agree with the journal")
			return nil
		}
		fmt.Fprintln(w)
	}
	t := newTable(w, csvOut, "kind", "seq", "entry", "account", "message")
	for _, b := range v.Breaks {
		seq := ""
		if b.Seq > 0 {
			seq = i64(b.Seq)
		}
		t.row(b.Kind, seq, b.EntryID, b.AccountID, b.Message)
	}
	return t.flush()
}

func breakPlace(b ports.JournalBreak) string {
	if b.EntryID != "" {
		return fmt.Sprintf("entry %s (seq %d)", b.EntryID, b.Seq)
	}
	return "account " + b.AccountID
}

// progressBar draws "label [=====>    ]  42%  12,345 rows  8,000/s" on
// stderr, redrawn in place at most every 100 ms on a terminal and every 10
// % otherwise.
type progressBar struct {
	w            io.Writer
	label, unit  string
	tty          bool
	start, drawn time.Time
	lastPct      int
	mu           sync.Mutex
}

func newProgressBar(w io.Writer, label, unit string) *progressBar {
	tty := false
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			tty = true
		}
	}
	return &progressBar{w: w, label: label, unit: unit, tty: tty, start: time.Now(), lastPct: -1}
}

func (p *progressBar) set(done, total int64) {
	f := 1.0
	if total > 0 {
		f = float64(done) / float64(total)
	}
	p.setFraction(f, done)
}

func (p *progressBar) setFraction(f float64, count int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f = min(max(f, 0), 1)
	pct := int(f * 100)
	now := time.Now()
	if p.tty {
		if now.Sub(p.drawn) < 100*time.Millisecond && pct < 100 {
			return
		}
	} else if pct/10 == p.lastPct/10 && pct < 100 || pct == p.lastPct {
		return
	}
	p.drawn, p.lastPct = now, pct
	const width = 30
	fill := int(f * width)
	bar := strings.Repeat("=", fill) + strings.Repeat(" ", width-fill)
	rate := float64(count) / max(now.Sub(p.start).Seconds(), 1e-9)
	line := fmt.Sprintf("%s [%s] %3d%%  %d %s  %.0f/s", p.label, bar, pct, count, p.unit, rate)
	if p.tty {
		fmt.Fprint(p.w, "\r"+line)
	} else {
		fmt.Fprintln(p.w, line)
	}
}

func (p *progressBar) done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty {
		fmt.Fprintln(p.w)
	}
}
