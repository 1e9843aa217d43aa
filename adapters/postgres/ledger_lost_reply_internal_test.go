package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"

	"github.com/corridorpay/corridor/ledger"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit"
)

// lostReplyFixture is a ledger whose next batch writes lose their reply:
// the server commits (or, with rollBack, rolls back) and the writer sees a
// broken connection instead of the answer.
type lostReplyFixture struct {
	t        *testing.T
	ctx      context.Context
	db       *Store
	l        *Ledger
	lose     atomic.Int32 // writes whose reply is lost
	rollBack atomic.Bool  // those writes end in ROLLBACK instead of COMMIT
	writes   atomic.Int32 // batch writes sent
}

func newLostReplyFixture(t *testing.T) *lostReplyFixture {
	db := scratchDB(t)
	clock := testkit.NewFakeClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	f := &lostReplyFixture{t: t, ctx: context.Background(), db: NewStore(db)}
	f.l = NewLedger(db, clock, LedgerOptions{})
	t.Cleanup(f.l.Close)
	f.l.writeFault = func() (rollBack, lose bool) {
		f.writes.Add(1)
		if f.lose.Load() > 0 {
			f.lose.Add(-1)
			return f.rollBack.Load(), true
		}
		return false, false
	}
	f.l.records.writeFault = f.l.writeFault // records that load nothing go to that writer
	require.NoError(t, f.l.CreateAccounts(f.ctx,
		ledger.Account{ID: "Acct:a", Currency: "USD", Kind: "test"},
		ledger.Account{ID: ledger.RailSettlementID("ACH", "USD"), Currency: "USD", Kind: "test"}))
	_, err := f.l.Post(f.ctx, ledger.Entry{ID: "fund", Transfers: []ledger.Transfer{{ID: "fund", Kind: ledger.Single,
		DebitAccountID: ledger.RailSettlementID("ACH", "USD"), CreditAccountID: "Acct:a", Amount: 1_000, Currency: "USD"}}})
	require.NoError(t, err)
	f.writes.Store(0)
	return f
}

func (f *lostReplyFixture) txn(id string) ports.Transaction {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	return ports.Transaction{ID: id, PlatformID: "Platform:lost", Type: "OUTGOING", Status: "PENDING",
		SourceAccountID: "Acct:a", SourceCurrency: "USD", DestinationAccountID: "ExternalAccount:x", DestinationCurrency: "USD",
		PaymentRail: "ACH", SentAmount: 10, ReceivedAmount: 10, CreatedAt: now, UpdatedAt: now}
}

func (f *lostReplyFixture) stored(id string) bool {
	_, err := f.db.Read().Transactions().Get(f.ctx, "Platform:lost", id)
	if err == nil {
		return true
	}
	require.ErrorIs(f.t, err, ports.ErrNotFound)
	return false
}

// A batch of records alone (a quote's creation writes one) whose commit
// was answered by a broken connection succeeds: the writer asks the server
// whether that transaction committed instead of writing the rows again.
func TestLostReplyAfterCommitOfRecordsAlone(t *testing.T) {
	f := newLostReplyFixture(t)
	f.lose.Store(1)
	require.NoError(t, f.l.WriteRecords(f.ctx, ports.Records{Transactions: []ports.Transaction{f.txn("Transaction:lost-1")}}))
	assert.True(t, f.stored("Transaction:lost-1"))
	assert.Zero(t, f.lose.Load(), "the fault was used")
	assert.Equal(t, int32(1), f.writes.Load(), "known to have committed: not written again")
	// The writer goes on on a new connection.
	require.NoError(t, f.l.WriteRecords(f.ctx, ports.Records{Transactions: []ports.Transaction{f.txn("Transaction:lost-2")}}))
	assert.True(t, f.stored("Transaction:lost-2"))
}

// An entry whose commit was answered by a broken connection is answered
// as recorded, with its journal sequence number.
func TestLostReplyAfterCommitOfAnEntry(t *testing.T) {
	f := newLostReplyFixture(t)
	f.lose.Store(1)
	hold := ledger.Entry{ID: "hold:lost", Transfers: []ledger.Transfer{{ID: "hold:lost", Kind: ledger.Pending,
		DebitAccountID: "Acct:a", CreditAccountID: ledger.RailSettlementID("ACH", "USD"), Amount: 10, Currency: "USD"}}}
	je, err := f.l.PostWith(f.ctx, hold, ports.Records{Transactions: []ports.Transaction{f.txn("Transaction:lost-hold")}})
	require.NoError(t, err)
	assert.Equal(t, int32(1), f.writes.Load(), "known to have committed: not written again")
	assert.Positive(t, je.Seq)
	journal, err := f.l.Journal(f.ctx, 0, 100)
	require.NoError(t, err)
	var stored ledger.JournalEntry
	for _, e := range journal {
		if e.ID == "hold:lost" {
			stored = e
		}
	}
	require.Equal(t, "hold:lost", stored.ID)
	assert.Equal(t, stored.Seq, je.Seq)
	assert.Equal(t, stored.Hash, je.Hash)
	assert.True(t, f.stored("Transaction:lost-hold"))
	a, err := f.l.Account(f.ctx, "Acct:a")
	require.NoError(t, err)
	assert.Equal(t, int64(990), a.Available(), "held once")
}

// A write that did not commit before its reply was lost is written again.
func TestLostReplyOfAWriteThatRolledBack(t *testing.T) {
	f := newLostReplyFixture(t)
	f.rollBack.Store(true)
	f.lose.Store(1)
	require.NoError(t, f.l.WriteRecords(f.ctx, ports.Records{Transactions: []ports.Transaction{f.txn("Transaction:lost-rb")}}))
	assert.True(t, f.stored("Transaction:lost-rb"))
	assert.Equal(t, int32(2), f.writes.Load(), "known to have rolled back: written again")
	hold := ledger.Entry{ID: "hold:lost-rb", Transfers: []ledger.Transfer{{ID: "hold:lost-rb", Kind: ledger.Pending,
		DebitAccountID: "Acct:a", CreditAccountID: ledger.RailSettlementID("ACH", "USD"), Amount: 10, Currency: "USD"}}}
	f.lose.Store(1)
	_, err := f.l.PostWith(f.ctx, hold, ports.Records{})
	require.NoError(t, err)
	a, err := f.l.Account(f.ctx, "Acct:a")
	require.NoError(t, err)
	assert.Equal(t, int64(990), a.Available(), "held once")
}

// A batch of records alone, whose reply was lost, is settled once its
// session's server process has gone: committed when a row it created is
// there, aborted when not, and never while the session may still commit.
func TestSettledWaitsForTheSessionOfALostReply(t *testing.T) {
	f := newLostReplyFixture(t)
	db := f.l.db
	_, err := db.ExecContext(f.ctx, "CREATE TABLE settle_probe (id text PRIMARY KEY)")
	require.NoError(t, err)
	checkSettled(t, f.l, db)
	assert.Empty(t, f.l.settled(&batchLoad{created: rowRef{table: "settle_probe", id: "COMMIT"}}, session{}),
		"without the session's process the outcome is unknown")

	// A later session given the pid of the batch's (the server reuses
	// them) is not waited for: it is told apart by its start.
	conn, err := db.Conn(f.ctx)
	require.NoError(t, err)
	defer discardConn(conn)
	later, err := sessionOf(f.ctx, conn)
	require.NoError(t, err)
	gone := session{pid: later.pid, start: later.start - 1}
	start := time.Now()
	assert.Equal(t, "aborted", f.l.settled(&batchLoad{created: rowRef{table: "settle_probe", id: "reused"}}, gone))
	assert.Less(t, time.Since(start), settledTimeout/2, "waited for the later session")
}

// The settle works for a role without superuser rights, as the service
// usually connects: pg_stat_activity shows such a role its own sessions'
// pid and start.
func TestSettledAsAnOrdinaryRole(t *testing.T) {
	f := newLostReplyFixture(t)
	ctx := f.ctx
	var b [4]byte
	_, _ = rand.Read(b[:])
	role := "corridor_t_role_" + hex.EncodeToString(b[:])
	admin := f.l.db
	var database string
	require.NoError(t, admin.QueryRowContext(ctx, "SELECT current_database()").Scan(&database))
	for _, q := range []string{
		"CREATE ROLE " + role + " LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE",
		"CREATE TABLE settle_probe (id text PRIMARY KEY)",
		"GRANT SELECT, INSERT ON settle_probe TO " + role,
	} {
		_, err := admin.ExecContext(ctx, q)
		require.NoError(t, err, q)
	}
	t.Cleanup(func() {
		_, _ = admin.ExecContext(context.Background(), "DROP OWNED BY "+role)
		_, _ = admin.ExecContext(context.Background(), "DROP ROLE "+role)
	})
	base := os.Getenv("DATABASE_URL")
	if base == "" {
		base = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
	}
	u, err := url.Parse(base)
	require.NoError(t, err)
	u.User, u.Path = url.User(role), "/"+database
	db, err := Open(ctx, u.String())
	require.NoError(t, err)
	l := NewLedger(db, f.l.clock, LedgerOptions{})
	t.Cleanup(func() {
		l.Close()
		_ = db.Close()
	})
	var super bool
	require.NoError(t, db.QueryRowContext(ctx, "SELECT rolsuper FROM pg_roles WHERE rolname = current_user").Scan(&super))
	require.False(t, super)
	checkSettled(t, l, db)
}

// checkSettled holds a session of db with an uncommitted insert into
// settle_probe and checks l settles it only once the session has ended:
// "committed" after COMMIT, "aborted" after ROLLBACK.
func checkSettled(t *testing.T, l *Ledger, db *bun.DB) {
	t.Helper()
	ctx := context.Background()
	for end, want := range map[string]string{"COMMIT": "committed", "ROLLBACK": "aborted"} {
		conn, err := db.Conn(ctx)
		require.NoError(t, err)
		s, err := sessionOf(ctx, conn)
		require.NoError(t, err)
		_, err = conn.ExecContext(ctx, "BEGIN; INSERT INTO settle_probe VALUES ('"+end+"')")
		require.NoError(t, err)
		got := make(chan string, 1)
		go func() { got <- l.settled(&batchLoad{created: rowRef{table: "settle_probe", id: end}}, s) }()
		select {
		case s := <-got:
			t.Fatalf("%s: settled as %q while the session could still commit", end, s)
		case <-time.After(300 * time.Millisecond):
		}
		_, err = conn.ExecContext(ctx, end)
		require.NoError(t, err)
		select {
		case s := <-got:
			t.Fatalf("%s: settled as %q while the session still runs", end, s)
		case <-time.After(100 * time.Millisecond):
		}
		discardConn(conn)
		select {
		case s := <-got:
			assert.Equal(t, want, s, end)
		case <-time.After(settledTimeout):
			t.Fatalf("%s: not settled after the session ended", end)
		}
	}
}
