package transactions_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/adapters/memory"
	"github.com/corridorpay/corridor/adapters/postgres"
	"github.com/corridorpay/corridor/adapters/system"
	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/core/transactions"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit"
	"github.com/corridorpay/corridor/testkit/pgtest"
)

var start = time.Date(2025, 10, 13, 12, 0, 0, 0, time.UTC)

type backend struct {
	name  string
	store func(t *testing.T) ports.Store
}

var backends = []backend{
	{"memory", func(*testing.T) ports.Store { return memory.NewStore(nil) }},
	{"postgres", func(t *testing.T) ports.Store { return postgres.NewStore(pgtest.NewDB(t)) }},
}

// seed stores transactions directly (their creation is core/transfers'
// business; here only reading matters).
type seed struct {
	t     *testing.T
	store ports.Store
	clock *testkit.FakeClock
	ids   system.IDs
	n     int
}

func (s *seed) insert(mutate func(i int, t *ports.Transaction), count int) []ports.Transaction {
	s.t.Helper()
	ctx := context.Background()
	out := make([]ports.Transaction, 0, count)
	require.NoError(s.t, s.store.InTx(ctx, func(tx ports.Tx) error {
		for range count {
			now := s.clock.Now()
			t := ports.Transaction{
				ID: s.ids.New("Transaction"), PlatformID: "Platform:p", CustomerID: "Customer:a", PlatformCustomerID: "pc-a",
				Type: "OUTGOING", Status: "COMPLETED", SourceAccountID: "InternalAccount:a", SourceCurrency: "USD",
				DestinationAccountID: "ExternalAccount:x", DestinationCurrency: "USD", PaymentRail: "ACH",
				SenderIdentifiers: []string{"InternalAccount:a"}, ReceiverIdentifiers: []string{"ExternalAccount:x", "123456789"},
				SentAmount: 100, ReceivedAmount: 100, Reference: fmt.Sprintf("REF-%05d", s.n), CreatedAt: now, UpdatedAt: now,
			}
			if mutate != nil {
				mutate(s.n, &t)
			}
			s.n++
			if err := tx.Transactions().Create(ctx, t); err != nil {
				return err
			}
			out = append(out, t)
			// Ten transactions share each instant: ties break by id.
			if s.n%10 == 0 {
				s.clock.Advance(time.Millisecond)
			}
		}
		return nil
	}))
	return out
}

// walk pages through the list with limit, inserting `during` transactions
// after every page, and returns the ids seen in order.
func walk(t *testing.T, svc *transactions.Service, s *seed, q transactions.Query, limit, during int) []string {
	t.Helper()
	ctx := context.Background()
	var seen []string
	page := ports.Page{Limit: limit}
	for i := 0; ; i++ {
		require.Less(t, i, 10_000, "the walk must end")
		res, err := svc.List(ctx, "Platform:p", q, page)
		require.NoError(t, err)
		require.LessOrEqual(t, len(res.Transactions), limit)
		for _, tx := range res.Transactions {
			seen = append(seen, tx.ID)
		}
		if !res.HasMore {
			assert.Nil(t, res.Next)
			return seen
		}
		require.NotNil(t, res.Next)
		page.After = res.Next
		s.insert(nil, during)
	}
}

// Walking 1,000 transactions while new ones keep arriving: newest first
// sees exactly the 1,000 that existed when it began, each once; oldest
// first also sees everything inserted during the walk, each once, in order.
func TestListWalkWithInsertsDuringTheWalk(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			s := &seed{t: t, store: b.store(t), clock: testkit.NewFakeClock(start)}
			svc := transactions.New(s.store)
			initial := s.insert(nil, 1_000)

			desc := walk(t, svc, s, transactions.Query{}, 37, 3)
			require.Len(t, desc, 1_000)
			assert.Equal(t, sortedDesc(initial), desc)

			before := s.n
			asc := walk(t, svc, s, transactions.Query{Asc: true}, 41, 2)
			res, err := svc.List(context.Background(), "Platform:p", transactions.Query{Asc: true}, ports.Page{Limit: 1})
			require.NoError(t, err)
			assert.Equal(t, s.n, res.Total)
			assert.Len(t, asc, s.n, "everything, including the %d rows inserted during this walk", s.n-before)
			assertUniqueAndOrdered(t, s, asc)
		})
	}
}

// sortedDesc is the list's newest-first order: createdAt descending, then
// id descending.
func sortedDesc(ts []ports.Transaction) []string {
	c := slices.Clone(ts)
	slices.SortFunc(c, func(a, b ports.Transaction) int {
		if d := b.CreatedAt.Compare(a.CreatedAt); d != 0 {
			return d
		}
		return strings.Compare(b.ID, a.ID)
	})
	out := make([]string, len(c))
	for i, t := range c {
		out[i] = t.ID
	}
	return out
}

func assertUniqueAndOrdered(t *testing.T, s *seed, ids []string) {
	t.Helper()
	res, err := transactions.New(s.store).List(context.Background(), "Platform:p", transactions.Query{}, ports.Page{Limit: 100})
	require.NoError(t, err)
	seen := map[string]bool{}
	for _, id := range ids {
		require.False(t, seen[id], "%s seen twice", id)
		seen[id] = true
	}
	// The newest rows, read afresh, end the ascending walk in reverse.
	for i, tx := range res.Transactions {
		assert.Equal(t, tx.ID, ids[len(ids)-1-i])
	}
}

func TestListFilters(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			s := &seed{t: t, store: b.store(t), clock: testkit.NewFakeClock(start)}
			svc := transactions.New(s.store)
			ctx := context.Background()
			s.insert(nil, 5) // customer a, outgoing, completed
			platformLevel := s.insert(func(_ int, tx *ports.Transaction) {
				tx.CustomerID, tx.PlatformCustomerID = "", ""
				tx.Type, tx.Status = "INCOMING", "PENDING"
				tx.SenderIdentifiers, tx.ReceiverIdentifiers = []string{"ExternalAccount:y", "987654321"}, []string{"InternalAccount:p"}
			}, 3)
			s.clock.Advance(time.Hour)
			mid := s.clock.Now()
			other := s.insert(func(_ int, tx *ports.Transaction) {
				tx.CustomerID, tx.PlatformCustomerID, tx.Status = "Customer:b", "pc-b", "FAILED"
			}, 2)
			s.insert(func(_ int, tx *ports.Transaction) { tx.PlatformID = "Platform:other" }, 4)

			count := func(q transactions.Query) int {
				t.Helper()
				res, err := svc.List(ctx, "Platform:p", q, ports.Page{Limit: 100})
				require.NoError(t, err)
				assert.Len(t, res.Transactions, res.Total)
				return res.Total
			}
			assert.Equal(t, 10, count(transactions.Query{}), "another platform's are not listed")
			assert.Equal(t, 5, count(transactions.Query{CustomerID: "Customer:a"}))
			assert.Equal(t, 3, count(transactions.Query{CustomerID: "Platform:p"}), "the platform id selects platform-level transactions")
			assert.Equal(t, 2, count(transactions.Query{PlatformCustomerID: "pc-b"}))
			assert.Equal(t, 3, count(transactions.Query{Type: "INCOMING"}))
			assert.Equal(t, 2, count(transactions.Query{Status: "FAILED"}))
			assert.Equal(t, 1, count(transactions.Query{Reference: platformLevel[1].Reference}))
			assert.Equal(t, 3, count(transactions.Query{AccountIdentifier: "987654321"}))
			assert.Equal(t, 7, count(transactions.Query{AccountIdentifier: "123456789"}))
			assert.Equal(t, 3, count(transactions.Query{SenderAccountIdentifier: "ExternalAccount:y"}))
			assert.Zero(t, count(transactions.Query{ReceiverAccountIdentifier: "ExternalAccount:y"}))
			assert.Equal(t, 3, count(transactions.Query{ReceiverAccountIdentifier: "InternalAccount:p"}))
			at := other[0].CreatedAt
			assert.Equal(t, 2, count(transactions.Query{StartDate: &mid}))
			assert.Equal(t, 2, count(transactions.Query{StartDate: &at}), "startDate is inclusive")
			beforeMid := mid.Add(-time.Microsecond)
			assert.Equal(t, 8, count(transactions.Query{EndDate: &beforeMid}))
			assert.Equal(t, 10, count(transactions.Query{EndDate: &at}), "endDate is inclusive")
			assert.Equal(t, 2, count(transactions.Query{StartDate: &at, EndDate: &at}))
			assert.Equal(t, 1, count(transactions.Query{CustomerID: "Customer:b", Status: "FAILED", StartDate: &at, EndDate: &at, Reference: other[0].Reference}))

			got, err := svc.Get(ctx, "Platform:p", other[1].ID)
			require.NoError(t, err)
			assert.Equal(t, other[1].ID, got.ID)
			_, err = svc.Get(ctx, "Platform:other", other[1].ID)
			f, ok := fault.As(err)
			require.True(t, ok, "%v", err)
			assert.Equal(t, fault.KindNotFound, f.Kind)
			assert.Equal(t, "TRANSACTION_NOT_FOUND", f.Code)
		})
	}
}

func TestListValidation(t *testing.T) {
	svc := transactions.New(memory.NewStore(nil))
	ctx := context.Background()
	early, late := start, start.Add(time.Hour)
	for _, tc := range []struct {
		name  string
		q     transactions.Query
		limit int
		field string
	}{
		{"status", transactions.Query{Status: "DONE"}, 0, "status"},
		{"type", transactions.Query{Type: "SIDEWAYS"}, 0, "type"},
		{"dates reversed", transactions.Query{StartDate: &late, EndDate: &early}, 0, "startDate"},
		{"limit too large", transactions.Query{}, 101, "limit"},
		{"limit negative", transactions.Query{}, -1, "limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := svc.List(ctx, "Platform:p", tc.q, ports.Page{Limit: tc.limit})
			f, ok := fault.As(err)
			require.True(t, ok, "%v", err)
			assert.Equal(t, fault.KindInvalid, f.Kind)
			require.Len(t, f.Fields, 1)
			assert.Equal(t, tc.field, f.Fields[0].Field)
		})
	}
	res, err := svc.List(ctx, "Platform:p", transactions.Query{}, ports.Page{})
	require.NoError(t, err)
	assert.Zero(t, res.Total)
	assert.False(t, res.HasMore)
}
