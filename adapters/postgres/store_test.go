package postgres_test

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"

	"github.com/corridorpay/corridor/adapters/postgres"
	"github.com/corridorpay/corridor/ledger"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit/pgtest"
	"github.com/corridorpay/corridor/testkit/storetest"
)

func TestStoreContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) (ports.Store, storetest.LedgerReader) {
		db := pgtest.NewDB(t)
		return postgres.NewStore(db), storeLedgerReader{db}
	})
}

func TestStorePing(t *testing.T) {
	s := postgres.NewStore(pgtest.NewDB(t))
	require.NoError(t, s.Ping(context.Background()))
}

// storeLedgerReader reads ledger_accounts directly, so the store's suite
// does not depend on the ledger store's implementation.
type storeLedgerReader struct{ db *bun.DB }

func (r storeLedgerReader) Accounts(ctx context.Context, ids ...string) ([]ledger.Account, error) {
	var out []ledger.Account
	for _, id := range ids {
		var a ledger.Account
		var flags int
		err := r.db.QueryRowContext(ctx,
			`SELECT id, currency, kind, platform_id, flags, debits_pending, debits_posted, credits_pending, credits_posted, created_at
			 FROM ledger_accounts WHERE id = ?`, id).
			Scan(&a.ID, &a.Currency, &a.Kind, &a.PlatformID, &flags, &a.DebitsPending, &a.DebitsPosted, &a.CreditsPending, &a.CreditsPosted, &a.CreatedAt)
		if err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				continue
			}
			return nil, err
		}
		a.Flags = ledger.AccountFlags(flags)
		out = append(out, a)
	}
	return out, nil
}

// TestStoreRetriesDeadlock makes two units of work lock two customers in
// opposite orders: PostgreSQL aborts one with a deadlock, and InTx runs it
// again, so both succeed.
func TestStoreRetriesDeadlock(t *testing.T) {
	ctx := context.Background()
	s := postgres.NewStore(pgtest.NewDB(t))
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := ports.Platform{ID: "Platform:" + uuid.NewString(), Name: "p", CreatedAt: now, UpdatedAt: now}
	a := ports.Customer{ID: "Customer:a", PlatformID: p.ID, CustomerType: "INDIVIDUAL", UmaAddress: "$a@p", PhoneNumber: "0", CreatedAt: now, UpdatedAt: now}
	b := a
	b.ID, b.UmaAddress = "Customer:b", "$b@p"
	require.NoError(t, s.InTx(ctx, func(tx ports.Tx) error {
		return errors.Join(tx.Platforms().Create(ctx, p), tx.Customers().Create(ctx, a), tx.Customers().Create(ctx, b))
	}))

	var attempts atomic.Int32
	var bothLocked sync.WaitGroup
	bothLocked.Add(2)
	lockBoth := func(first, second string) error {
		try := 0
		return s.InTx(ctx, func(tx ports.Tx) error {
			attempts.Add(1)
			try++
			for i, id := range []string{first, second} {
				c, err := tx.Customers().GetForUpdate(ctx, p.ID, id)
				if err != nil {
					return err
				}
				if i == 0 && try == 1 {
					bothLocked.Done()
					bothLocked.Wait()
				}
				n, _ := strconv.Atoi(c.PhoneNumber)
				c.PhoneNumber = strconv.Itoa(n + 1)
				if err := tx.Customers().Update(ctx, c); err != nil {
					return err
				}
			}
			return nil
		})
	}
	var wg sync.WaitGroup
	errs := make([]error, 2)
	wg.Go(func() { errs[0] = lockBoth(a.ID, b.ID) })
	wg.Go(func() { errs[1] = lockBoth(b.ID, a.ID) })
	wg.Wait()
	require.NoError(t, errs[0])
	require.NoError(t, errs[1])
	// One of the two ran again after the deadlock. On a busy machine its
	// second run (5 ms later) may lock its first row before the other,
	// woken by the abort, has locked that row (a row lock is taken by the
	// woken transaction itself, not handed over), and the two deadlock once
	// more: a third run. Each customer is still changed once by each
	// (below).
	assert.GreaterOrEqual(t, attempts.Load(), int32(3), "a deadlock made one unit of work run again")
	for _, id := range []string{a.ID, b.ID} {
		c, err := s.Read().Customers().Get(ctx, p.ID, id)
		require.NoError(t, err)
		assert.Equal(t, "2", c.PhoneNumber)
	}
}
