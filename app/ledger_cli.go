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
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	httpapi "github.com/corridorpay/corridor/adapters/http"
	"github.com/corridorpay/corridor/adapters/postgres"
	"github.com/corridorpay/corridor/adapters/system"
	"github.com/corridorpay/corridor/core/reports"
	"github.com/corridorpay/corridor/ledger"
	"github.com/corridorpay/corridor/ports"
)

const ledgerUsage = `usage:
  corridor ledger trial-balance [-as-of T] [-format table|csv]
  corridor ledger balance -account ID [-as-of T] [-format table|csv]
  corridor ledger statement -account ID [-from T] [-to T] [-format table|csv]
  corridor ledger export -rail RAIL -currency CUR [-from T] [-to T] [-format csv|ndjson] [-o FILE]
  corridor ledger verify [-checkpoint FILE -key KEY] [-format table|csv]
  corridor ledger checkpoint -key KEY [-o FILE]
  corridor ledger keygen -o FILE
T is an RFC 3339 date-time or a date (midnight UTC); windows are [from, to).
checkpoint verifies the journal and signs its head with the private key KEY
(a PEM Ed25519 key from keygen, kept away from the database), appending one
line to FILE (stdout by default); verify -checkpoint fails when the journal
no longer leads to every checkpoint in FILE (KEY: the public or private PEM).
-key defaults to $CORRIDOR_CHECKPOINT_KEY.
export, verify and checkpoint draw a progress bar on stderr (-quiet turns it off).`

// ledgerFlags are the flags of every ledger command (each uses its own).
type ledgerFlags struct {
	format, account, asOf, from, to, rail, currency, output, checkpoint, key string
	quiet                                                                    bool
}

// ledgerCommand is one `corridor ledger` subcommand: the formats it takes
// (the first is the default), the flags it needs, and what it runs.
type ledgerCommand struct {
	formats  []string
	required []string // flag names that must be set
	needsDB  bool
	run      func(ctx context.Context, c *ledgerCtx) error
}

// ledgerCtx is what a subcommand runs with.
type ledgerCtx struct {
	f              ledgerFlags
	svc            *reports.Service
	v              reports.Viewer
	stdout, stderr io.Writer
}

func (c *ledgerCtx) csv() bool { return c.f.format == "csv" }

func (c *ledgerCtx) progress(label string) *progressBar {
	if c.f.quiet {
		return nil
	}
	return newProgressBar(c.stderr, label, "rows")
}

var ledgerCommands = map[string]ledgerCommand{
	"trial-balance": {formats: []string{"table", "csv"}, needsDB: true, run: ledgerTrialBalance},
	"balance":       {formats: []string{"table", "csv"}, required: []string{"account"}, needsDB: true, run: ledgerBalance},
	"statement":     {formats: []string{"table", "csv"}, required: []string{"account"}, needsDB: true, run: ledgerStatement},
	"export":        {formats: []string{"csv", "ndjson"}, needsDB: true, run: ledgerExport},
	"verify":        {formats: []string{"table", "csv"}, needsDB: true, run: ledgerVerify},
	"checkpoint":    {formats: []string{"table"}, required: []string{"key"}, needsDB: true, run: ledgerCheckpoint},
	"keygen":        {formats: []string{"table"}, required: []string{"o"}, run: ledgerKeygen},
}

// ledgerCmd runs the ledger reports against DATABASE_URL as the operator.
func ledgerCmd(ctx context.Context, cfg Config, log *slog.Logger, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprintln(stdout, ledgerUsage)
		return nil
	}
	sub, args := args[0], args[1:]
	cmd, ok := ledgerCommands[sub]
	if !ok {
		return fmt.Errorf("unknown ledger command %q\n%s", sub, ledgerUsage)
	}
	c := &ledgerCtx{v: reports.Operator(), stdout: stdout, stderr: stderr}
	if err := parseLedgerFlags(sub, cmd, args, cfg, stderr, &c.f); err != nil {
		return err
	}
	if !cmd.needsDB {
		return cmd.run(ctx, c)
	}
	if cfg.DatabaseURL == "" {
		return errors.New("ledger needs DATABASE_URL: the in-memory ledger of another process cannot be read")
	}
	db, err := openMigrated(ctx, cfg.DatabaseURL, log)
	if err != nil {
		return err
	}
	defer db.Close()
	c.svc = reports.New(postgres.NewLedgerReports(db), system.Clock{})
	return cmd.run(ctx, c)
}

func parseLedgerFlags(sub string, cmd ledgerCommand, args []string, cfg Config, stderr io.Writer, f *ledgerFlags) error {
	fs := flag.NewFlagSet("ledger "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.format, "format", "", "output format")
	fs.StringVar(&f.account, "account", "", "ledger account id (balance, statement)")
	fs.StringVar(&f.asOf, "as-of", "", "instant (default now)")
	fs.StringVar(&f.from, "from", "", "window start, inclusive (default the beginning)")
	fs.StringVar(&f.to, "to", "", "window end, exclusive (default now)")
	fs.StringVar(&f.rail, "rail", "", "rail (export)")
	fs.StringVar(&f.currency, "currency", "", "currency (export)")
	fs.StringVar(&f.output, "o", "", "write to this file instead of stdout (export, checkpoint, keygen)")
	fs.StringVar(&f.checkpoint, "checkpoint", "", "checkpoint file the journal must still lead to (verify)")
	fs.StringVar(&f.key, "key", cfg.CheckpointKey, "checkpoint key PEM file (checkpoint: private; verify: public or private)")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress bar")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if f.format == "" {
		f.format = cmd.formats[0]
	}
	if sub == "export" && f.format == "table" {
		f.format = "csv"
	}
	if !slices.Contains(cmd.formats, f.format) {
		return fmt.Errorf("ledger %s: -format must be %s", sub, strings.Join(cmd.formats, " or "))
	}
	set := map[string]string{"account": f.account, "key": f.key, "o": f.output}
	for _, name := range cmd.required {
		if set[name] == "" {
			return fmt.Errorf("ledger %s: -%s is required", sub, name)
		}
	}
	if f.checkpoint != "" && f.key == "" {
		return fmt.Errorf("ledger %s: -checkpoint needs -key, the public key that signed it", sub)
	}
	return nil
}

func ledgerTrialBalance(ctx context.Context, c *ledgerCtx) error {
	tb, err := c.svc.TrialBalance(ctx, c.v, c.f.asOf)
	if err != nil {
		return err
	}
	return printTrialBalance(c.stdout, tb, c.csv())
}

func ledgerBalance(ctx context.Context, c *ledgerCtx) error {
	pb, err := c.svc.BalanceAt(ctx, c.v, c.f.account, c.f.asOf)
	if err != nil {
		return err
	}
	t := newTable(c.stdout, c.csv(), "account", "currency", "asOf", "net", "available", "total",
		"debitsPending", "debitsPosted", "creditsPending", "creditsPosted", "lastEntry")
	b := pb.Balance
	t.row(pb.AccountID, pb.Currency, pb.AsOf.Format(time.RFC3339Nano), i64(b.Net), i64(b.Available), i64(b.Total),
		i64(b.DebitsPending), i64(b.DebitsPosted), i64(b.CreditsPending), i64(b.CreditsPosted), pb.LastEntryID)
	return t.flush()
}

func ledgerStatement(ctx context.Context, c *ledgerCtx) error {
	return printStatement(ctx, c.stdout, c.svc, c.v, c.f.account, c.f.from, c.f.to, c.csv())
}

func ledgerExport(ctx context.Context, c *ledgerCtx) error {
	out := c.stdout
	if c.f.output != "" {
		f, err := os.Create(c.f.output)
		if err != nil {
			return err
		}
		defer f.Close()
		out = f
	}
	return runExport(ctx, out, c.stderr, c.svc, c.v, reports.ExportQuery{Rail: c.f.rail, Currency: c.f.currency, From: c.f.from, To: c.f.to},
		c.f.format == "ndjson", !c.f.quiet)
}

// withProgress runs fn with a progress callback drawing label's bar.
func (c *ledgerCtx) withProgress(label string, fn func(progress func(done, total int64)) error) error {
	bar := c.progress(label)
	err := fn(func(done, total int64) {
		if bar != nil {
			bar.set(done, total)
		}
	})
	if bar != nil {
		bar.done()
	}
	return err
}

// anchors reads and checks the signatures of the -checkpoint file (none
// without the flag).
func (c *ledgerCtx) anchors() ([]ledger.Anchor, error) {
	if c.f.checkpoint == "" {
		return nil, nil
	}
	pub, err := loadCheckpointPublicKey(c.f.key)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(c.f.checkpoint)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cs, err := ledger.ReadCheckpoints(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.f.checkpoint, err)
	}
	return ledger.CheckpointAnchors(cs, pub)
}

func ledgerVerify(ctx context.Context, c *ledgerCtx) error {
	anchors, err := c.anchors()
	if err != nil {
		return err
	}
	var res reports.Verification
	err = c.withProgress("verify", func(progress func(done, total int64)) error {
		res, err = c.svc.Verify(ctx, c.v, progress, anchors...)
		return err
	})
	if err != nil {
		return err
	}
	if err := printVerification(c.stdout, res, c.csv()); err != nil {
		return err
	}
	if !res.OK {
		return fmt.Errorf("the journal does not verify: %d break(s), the first at %s", len(res.Breaks), breakPlace(res.Breaks[0]))
	}
	return nil
}

func ledgerCheckpoint(ctx context.Context, c *ledgerCtx) error {
	key, err := loadCheckpointKey(c.f.key)
	if err != nil {
		return err
	}
	var cps []ledger.Checkpoint
	var res reports.Verification
	err = c.withProgress("checkpoint", func(progress func(done, total int64)) error {
		cps, res, err = c.svc.Checkpoint(ctx, c.v, key, progress)
		return err
	})
	if err != nil {
		if !res.OK && len(res.Breaks) > 0 {
			_ = printVerification(c.stdout, res, false)
		}
		return err
	}
	out := c.stdout
	if c.f.output != "" {
		f, err := os.OpenFile(c.f.output, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		defer f.Close()
		out = f
	}
	// One checkpoint per chain (shard), one line each.
	for _, cp := range cps {
		if err := ledger.AppendCheckpoint(out, cp); err != nil {
			return err
		}
		if c.f.output != "" {
			fmt.Fprintf(c.stdout, "checkpoint: shard %d seq %d (entry %s) head %s, appended to %s\n", cp.Shard, cp.Seq, cp.EntryID, cp.Head, c.f.output)
		}
	}
	return nil
}

func ledgerKeygen(_ context.Context, c *ledgerCtx) error {
	pub, err := writeCheckpointKey(c.f.output)
	if err != nil {
		return err
	}
	fmt.Fprintf(c.stdout, "wrote the private checkpoint key to %s (key id %s); keep it away from the database.\n"+
		"Its public key (for ledger verify -key):\n%s", c.f.output, ledger.KeyID(pub), publicKeyPEM(pub))
	return nil
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
			fmt.Fprintf(w, "chain head %s (seq %d, entry %s)\n", v.Head, v.HeadSeq, v.HeadID)
		}
		if len(v.Chains) > 1 {
			for _, h := range v.Chains {
				fmt.Fprintf(w, "shard %d head %x (seq %d, entry %s)\n", h.Shard, h.Hash, h.Seq, h.ID)
			}
		}
		if v.Checkpoints > 0 {
			fmt.Fprintf(w, "signed checkpoints checked: %d\n", v.Checkpoints)
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
