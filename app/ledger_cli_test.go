package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/adapters/postgres"
	"github.com/corridorpay/corridor/ledger"
	"github.com/corridorpay/corridor/testkit"
	"github.com/corridorpay/corridor/testkit/pgtest"
)

// ledgerCLIFixture posts a small history on a scratch database and returns
// its URL.
func ledgerCLIFixture(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	db, err := postgres.Open(ctx, dsn)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	clock := testkit.NewFakeClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	l := postgres.NewLedger(db, clock, postgres.LedgerOptions{})
	t.Cleanup(l.Close)
	acct := "InternalAccount:cli"
	ach := ledger.RailSettlementID("ACH", "USD")
	require.NoError(t, l.CreateAccounts(ctx, append(ledger.SystemAccounts([]string{"USD"}, map[string][]string{"ACH": {"USD"}}),
		ledger.Account{ID: acct, Currency: "USD", Kind: ledger.KindInternal, Flags: ledger.DebitsMustNotExceedCredits, PlatformID: "Platform:cli"})...))
	for _, e := range []ledger.Entry{
		{ID: "fund", Ref: acct, Transfers: []ledger.Transfer{{ID: "fund", DebitAccountID: ledger.SandboxFundingID("USD"), CreditAccountID: acct, Amount: 5_000, Currency: "USD", Code: "sandbox_funding"}}},
		{ID: "out1", Ref: "Transaction:out1", Transfers: []ledger.Transfer{{ID: "out1", DebitAccountID: acct, CreditAccountID: ach, Amount: 1_200, Currency: "USD", Code: "transfer_out"}}},
		{ID: "out2", Ref: "Transaction:out2", Transfers: []ledger.Transfer{{ID: "out2", DebitAccountID: acct, CreditAccountID: ach, Amount: 300, Currency: "USD", Code: "transfer_out"}}},
	} {
		clock.Advance(time.Hour)
		_, err := l.Post(ctx, e)
		require.NoError(t, err)
	}
	return dsn
}

func runLedger(t *testing.T, dsn string, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := run(context.Background(), append([]string{"ledger"}, args...), env(map[string]string{"DATABASE_URL": dsn}), &out, &errOut)
	return out.String(), errOut.String(), err
}

func TestLedgerCLI(t *testing.T) {
	dsn := ledgerCLIFixture(t)

	out, _, err := runLedger(t, dsn, "trial-balance", "-format", "csv")
	require.NoError(t, err)
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	require.NoError(t, err)
	assert.Equal(t, "currency", rows[0][0])
	last := rows[len(rows)-1]
	assert.Equal(t, []string{"USD", "TOTAL"}, last[:2])
	assert.Equal(t, "0", last[6], "the currency's total net")
	assert.Equal(t, "true", last[9])

	out, _, err = runLedger(t, dsn, "trial-balance", "-as-of", "2026-03-01T13:30:00Z")
	require.NoError(t, err)
	assert.Contains(t, out, "every currency balances")
	assert.Contains(t, out, "InternalAccount:cli")
	assert.NotContains(t, out, "sys:rail_settlement", "nothing reached the rail by then")

	out, _, err = runLedger(t, dsn, "balance", "-account", "InternalAccount:cli", "-as-of", "2026-03-01T14:00:00Z", "-format", "csv")
	require.NoError(t, err)
	rows, err = csv.NewReader(strings.NewReader(out)).ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, 2)
	assert.Equal(t, "3800", rows[1][3])
	assert.Equal(t, "out1", rows[1][10])

	out, _, err = runLedger(t, dsn, "statement", "-account", "InternalAccount:cli", "-from", "2026-03-01T13:30:00Z")
	require.NoError(t, err)
	assert.Contains(t, out, "opening net 5000, closing net 3500")
	assert.Contains(t, out, "Transaction:out2")
	assert.NotContains(t, out, "sandbox_funding")

	out, progress, err := runLedger(t, dsn, "export", "-rail", "ACH", "-currency", "USD")
	require.NoError(t, err)
	rows, err = csv.NewReader(strings.NewReader(out)).ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, 3)
	assert.Equal(t, []string{"out1", "1200", "1200"}, []string{rows[1][1], rows[1][5], rows[1][6]})
	assert.Contains(t, progress, "export [")
	assert.Contains(t, progress, "100%")

	out, _, err = runLedger(t, dsn, "export", "-rail", "ACH", "-currency", "USD", "-format", "ndjson", "-quiet")
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 2)
	var row map[string]any
	require.NoError(t, json.Unmarshal([]byte(lines[1]), &row))
	assert.Equal(t, "Transaction:out2", row["transactionId"])

	out, progress, err = runLedger(t, dsn, "verify")
	require.NoError(t, err)
	assert.Contains(t, out, "ok:")
	assert.Contains(t, progress, "verify [")

	_, _, err = runLedger(t, dsn, "balance")
	assert.ErrorContains(t, err, "-account")
	_, _, err = runLedger(t, dsn, "statement", "-account", "InternalAccount:cli", "-from", "soon")
	assert.ErrorContains(t, err, "from")
	_, _, err = runLedger(t, dsn, "export", "-rail", "ACH")
	assert.ErrorContains(t, err, "currency")
	_, _, err = runLedger(t, "", "verify")
	assert.ErrorContains(t, err, "DATABASE_URL")
}

func TestLedgerCLIVerifyFailsOnTampering(t *testing.T) {
	dsn := ledgerCLIFixture(t)
	ctx := context.Background()
	db, err := postgres.Open(ctx, dsn)
	require.NoError(t, err)
	defer db.Close()
	_, err = db.ExecContext(ctx, `UPDATE ledger_postings SET debits_posted = debits_posted - 100
		WHERE account_id = 'InternalAccount:cli' AND transfer_id = 'out2'`)
	require.NoError(t, err)
	out, _, err := runLedger(t, dsn, "verify", "-quiet")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "entry out2")
	assert.Contains(t, out, "posting")
}

// The operator's checkpoint: keygen writes a key, checkpoint signs the
// verified head into a file, and verify -checkpoint fails once the journal
// no longer leads to it, or when the file was not signed by the key.
func TestLedgerCLICheckpoint(t *testing.T) {
	dsn := ledgerCLIFixture(t)
	dir := t.TempDir()
	key, file := filepath.Join(dir, "checkpoint.pem"), filepath.Join(dir, "checkpoints.ndjson")

	out, _, err := runLedger(t, dsn, "keygen", "-o", key)
	require.NoError(t, err)
	assert.Contains(t, out, "BEGIN PUBLIC KEY")
	pubPEM := out[strings.Index(out, "-----BEGIN"):]
	pub := filepath.Join(dir, "public.pem")
	require.NoError(t, os.WriteFile(pub, []byte(pubPEM), 0o600))
	_, _, err = runLedger(t, dsn, "keygen", "-o", key)
	assert.ErrorContains(t, err, "already exists and is never overwritten", "an existing key is not overwritten")

	_, _, err = runLedger(t, dsn, "checkpoint")
	assert.ErrorContains(t, err, "-key")
	out, _, err = runLedger(t, dsn, "checkpoint", "-quiet", "-key", key, "-o", file)
	require.NoError(t, err)
	assert.Contains(t, out, "seq 3 (entry out2)")
	_, _, err = runLedger(t, dsn, "checkpoint", "-quiet", "-key", pub)
	assert.ErrorContains(t, err, "private key")

	out, _, err = runLedger(t, dsn, "verify", "-quiet", "-checkpoint", file, "-key", pub)
	require.NoError(t, err)
	assert.Contains(t, out, "signed checkpoints checked: 1")
	_, _, err = runLedger(t, dsn, "verify", "-quiet", "-checkpoint", file)
	assert.ErrorContains(t, err, "-key")

	// A checkpoint file from another key is refused before the walk.
	otherKey := filepath.Join(dir, "other.pem")
	_, _, err = runLedger(t, dsn, "keygen", "-o", otherKey)
	require.NoError(t, err)
	_, _, err = runLedger(t, dsn, "verify", "-quiet", "-checkpoint", file, "-key", otherKey)
	assert.ErrorIs(t, err, ledger.ErrCheckpointSignature)

	// The head's hash rewritten: the journal no longer leads to the
	// checkpoint.
	ctx := context.Background()
	db, err := postgres.Open(ctx, dsn)
	require.NoError(t, err)
	defer db.Close()
	_, err = db.ExecContext(ctx, `UPDATE ledger_entries SET hash = sha256(hash) WHERE id = 'out2'`)
	require.NoError(t, err)
	out, _, err = runLedger(t, dsn, "verify", "-quiet", "-checkpoint", file, "-key", pub)
	require.Error(t, err)
	assert.Contains(t, out, "entry out2 (seq 3) does not match its hash")
	// The journal cut short: it ends before the checkpoint.
	_, err = db.ExecContext(ctx, `DELETE FROM ledger_transfers WHERE entry_id = 'out2'`)
	require.NoError(t, err)
	_, err = db.ExecContext(ctx, `DELETE FROM ledger_entries WHERE id = 'out2'`)
	require.NoError(t, err)
	out, _, err = runLedger(t, dsn, "verify", "-quiet", "-checkpoint", file, "-key", pub)
	require.Error(t, err)
	assert.Contains(t, out, "the journal ends at seq 2: entries were removed")
	_, _, err = runLedger(t, dsn, "checkpoint", "-quiet", "-key", key, "-o", file)
	assert.ErrorContains(t, err, "no checkpoint signed")
}
