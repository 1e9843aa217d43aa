package storetest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/ports"
)

var errBoom = errors.New("boom")

// ---- transactions ----

func transaction(platformID, customerID, typ string, created time.Time) ports.Transaction {
	src, dst := newID("InternalAccount"), newID("ExternalAccount")
	if typ == "INCOMING" {
		src, dst = dst, src
	}
	return ports.Transaction{
		ID: newID("Transaction"), PlatformID: platformID, CustomerID: customerID, Type: typ, Status: "PENDING",
		SourceAccountID: src, SourceCurrency: "USD", DestinationAccountID: dst, DestinationCurrency: "USD",
		SenderIdentifiers: []string{src}, ReceiverIdentifiers: []string{dst},
		SentAmount: 1000, ReceivedAmount: 1000,
		CreatedAt: created, UpdatedAt: created,
	}
}

func fullTransaction(platformID, customerID string, created time.Time) ports.Transaction {
	tr := transaction(platformID, customerID, "OUTGOING", created)
	settled := created.Add(90 * time.Second)
	tr.PlatformCustomerID = "pc-1"
	tr.Status = "COMPLETED"
	tr.DestinationCurrency = "EUR"
	tr.PaymentRail = "SEPA_INSTANT"
	tr.RailSelectionMode = "MANUAL"
	tr.ReceiverIdentifiers = append(tr.ReceiverIdentifiers, "DE89370400440532013000")
	tr.SentAmount, tr.ReceivedAmount, tr.Fees, tr.ExchangeRate = 10_000, 9_150, 25, "0.9150"
	tr.Reference = "REF-1"
	tr.Description = "rent"
	tr.RemittanceInformation = "invoice 7"
	tr.PurposeOfPayment = "GOODS"
	tr.FailureReason = ""
	tr.QuoteID = "Quote:1"
	tr.AgentID = "Agent:1"
	tr.SettledAt = &settled
	tr.UpdatedAt = settled
	return tr
}

func normTxn(tr ports.Transaction) ports.Transaction {
	tr.CreatedAt, tr.UpdatedAt = norm(tr.CreatedAt), norm(tr.UpdatedAt)
	if tr.SettledAt != nil {
		s := norm(*tr.SettledAt)
		tr.SettledAt = &s
	}
	if len(tr.SenderIdentifiers) == 0 {
		tr.SenderIdentifiers = nil
	}
	if len(tr.ReceiverIdentifiers) == 0 {
		tr.ReceiverIdentifiers = nil
	}
	return tr
}

func txnID(tr ports.Transaction) string { return tr.ID }
func txnPos(tr ports.Transaction) ports.Position {
	return ports.Position{CreatedAt: tr.CreatedAt, ID: tr.ID}
}

func createTxns(t *testing.T, s ports.Store, trs ...ports.Transaction) {
	t.Helper()
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error {
		for _, tr := range trs {
			if err := tx.Transactions().Create(ctx, tr); err != nil {
				return fmt.Errorf("create %s: %w", tr.ID, err)
			}
		}
		return nil
	})
}

// txnOrder sorts rows the way a list does: by (CreatedAt, ID), newest
// first when desc.
func txnOrder(rows []ports.Transaction, desc bool) []string {
	rows = slices.Clone(rows)
	slices.SortFunc(rows, func(a, b ports.Transaction) int {
		c := norm(a.CreatedAt).Compare(norm(b.CreatedAt))
		if c == 0 {
			c = cmp.Compare(a.ID, b.ID)
		}
		if desc {
			return -c
		}
		return c
	})
	return ids(rows, txnID)
}

func testTransactions(t *testing.T, s ports.Store, _ LedgerReader) {
	ctx := context.Background()
	p := createPlatform(t, s, at(0))
	q := createPlatform(t, s, at(0))
	c := customer(p.ID, at(0))
	createCustomers(t, s, c)
	full := fullTransaction(p.ID, c.ID, at(1))
	plain := transaction(p.ID, "", "INCOMING", at(2))
	plain.SenderIdentifiers, plain.ReceiverIdentifiers = nil, []string{}
	createTxns(t, s, full, plain)

	for _, want := range []ports.Transaction{full, plain} {
		got, err := s.Read().Transactions().Get(ctx, p.ID, want.ID)
		require.NoError(t, err)
		assert.Equal(t, normTxn(want), got)
		_, err = s.Read().Transactions().Get(ctx, q.ID, want.ID)
		require.ErrorIs(t, err, ports.ErrNotFound, "another platform's transaction")
		inTx(t, s, func(ctx context.Context, tx ports.Tx) error {
			got, err := tx.Transactions().GetForUpdate(ctx, p.ID, want.ID)
			require.NoError(t, err)
			assert.Equal(t, normTxn(want), got)
			_, err = tx.Transactions().GetForUpdate(ctx, q.ID, want.ID)
			require.ErrorIs(t, err, ports.ErrNotFound)
			return nil
		})
	}
	_, err := s.Read().Transactions().Get(ctx, p.ID, newID("Transaction"))
	require.ErrorIs(t, err, ports.ErrNotFound)

	checkConcurrentTxnGets(t, s, p.ID, q.ID, full, plain)

	// Values are copied in and out.
	got, err := s.Read().Transactions().Get(ctx, p.ID, full.ID)
	require.NoError(t, err)
	got.ReceiverIdentifiers[0] = "changed"
	*got.SettledAt = at(100)
	again, err := s.Read().Transactions().Get(ctx, p.ID, full.ID)
	require.NoError(t, err)
	assert.Equal(t, normTxn(full), again)

	// Update changes the mutable fields.
	upd := plain
	upd.Status = "FAILED"
	upd.FailureReason = "ACCOUNT_INVALID"
	upd.SenderIdentifiers = []string{"x"}
	settled := at(3)
	upd.SettledAt = &settled
	upd.UpdatedAt = at(3)
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error {
		require.NoError(t, tx.Transactions().Update(ctx, upd))
		got, err := tx.Transactions().Get(ctx, p.ID, plain.ID)
		require.NoError(t, err)
		assert.Equal(t, normTxn(upd), got, "a unit of work reads its own update")
		return nil
	})
	got, err = s.Read().Transactions().Get(ctx, p.ID, plain.ID)
	require.NoError(t, err)
	assert.Equal(t, normTxn(upd), got)
	// The status filter's total follows the update.
	for status, want := range map[string]int{"FAILED": 1, "PENDING": 0, "COMPLETED": 1} {
		_, total, err := s.Read().Transactions().List(ctx, ports.TransactionFilter{PlatformID: p.ID, Status: status}, ports.Page{Limit: 1})
		require.NoError(t, err)
		assert.Equal(t, want, total, status)
		_, total, err = s.Read().Transactions().List(ctx, ports.TransactionFilter{PlatformID: p.ID, PlatformLevel: true, Status: status, Type: "INCOMING"}, ports.Page{Limit: 1})
		require.NoError(t, err)
		assert.Equal(t, btoi(status == "FAILED"), total, status)
	}

	stolen := upd
	stolen.PlatformID = q.ID
	err = s.InTx(ctx, func(tx ports.Tx) error { return tx.Transactions().Update(ctx, stolen) })
	require.ErrorIs(t, err, ports.ErrNotFound)
	err = s.InTx(ctx, func(tx ports.Tx) error {
		return tx.Transactions().Update(ctx, transaction(p.ID, "", "INCOMING", at(3)))
	})
	require.ErrorIs(t, err, ports.ErrNotFound)

	dup := transaction(q.ID, "", "INCOMING", at(4))
	dup.ID = plain.ID
	err = s.InTx(ctx, func(tx ports.Tx) error { return tx.Transactions().Create(ctx, dup) })
	requireConflict(t, err, "transactions_pkey")

	assert.Error(t, s.Read().Transactions().Create(ctx, transaction(p.ID, "", "INCOMING", at(5))))
	assert.Error(t, s.Read().Transactions().Update(ctx, upd))

	checkRolledBackTxnCreate(t, s, p.ID, c.ID)
}

// checkConcurrentTxnGets requires concurrent reads (which a store may
// group) each to get their own answer: full and plain (stored on platform
// platformID), or not found for another platform (otherID) and an unknown
// id.
func checkConcurrentTxnGets(t *testing.T, s ports.Store, platformID, otherID string, full, plain ports.Transaction) {
	t.Helper()
	ctx := context.Background()
	type call struct {
		platform, id string
		want         *ports.Transaction
	}
	nf, np := normTxn(full), normTxn(plain)
	calls := []call{{platformID, full.ID, &nf}, {platformID, plain.ID, &np}, {otherID, full.ID, nil}, {platformID, newID("Transaction"), nil}}
	var wg sync.WaitGroup
	for i := range 8 * len(calls) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := calls[i%len(calls)]
			got, err := s.Read().Transactions().Get(ctx, c.platform, c.id)
			if c.want == nil {
				assert.ErrorIs(t, err, ports.ErrNotFound, "concurrent read %d", i)
				return
			}
			if assert.NoError(t, err, "concurrent read %d", i) {
				assert.Equal(t, *c.want, got, "concurrent read %d", i)
			}
		}()
	}
	wg.Wait()
}

// checkRolledBackTxnCreate requires a rolled-back create of one of
// customerID's transactions to leave neither the row nor a count behind,
// on a platform that holds one transaction of customerID's and one at the
// platform level.
func checkRolledBackTxnCreate(t *testing.T, s ports.Store, platformID, customerID string) {
	t.Helper()
	ctx := context.Background()
	gone := transaction(platformID, customerID, "OUTGOING", at(6))
	err := s.InTx(ctx, func(tx ports.Tx) error {
		if err := tx.Transactions().Create(ctx, gone); err != nil {
			return err
		}
		return errBoom
	})
	require.ErrorIs(t, err, errBoom)
	_, err = s.Read().Transactions().Get(ctx, platformID, gone.ID)
	require.ErrorIs(t, err, ports.ErrNotFound)
	for _, f := range []ports.TransactionFilter{
		{PlatformID: platformID}, {PlatformID: platformID, CustomerID: customerID}, {PlatformID: platformID, CustomerID: customerID, Type: "OUTGOING"},
	} {
		_, total, err := s.Read().Transactions().List(ctx, f, ports.Page{Limit: 1})
		require.NoError(t, err)
		assert.Equal(t, 1+btoi(f.CustomerID == ""), total, "%+v", f)
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func testTransactionListFilters(t *testing.T, s ports.Store, _ LedgerReader) {
	ctx := context.Background()
	p := createPlatform(t, s, at(0))
	q := createPlatform(t, s, at(0))
	c1, c2 := customer(p.ID, at(0)), customer(p.ID, at(0))
	createCustomers(t, s, c1, c2)
	fx := createFilterTxns(t, s, p.ID, q.ID, c1.ID, c2.ID)
	a, b, c, d, e, f := fx.a, fx.b, fx.c, fx.d, fx.e, fx.f
	all := []ports.Transaction{a, b, c, d, e, f}

	ptr := func(t time.Time) *time.Time { return &t }
	tests := []struct {
		name string
		f    ports.TransactionFilter
		want []ports.Transaction
	}{
		{"platform", ports.TransactionFilter{}, all},
		{"customer", ports.TransactionFilter{CustomerID: c1.ID}, []ports.Transaction{a, b}},
		{"customer wins over platform level", ports.TransactionFilter{CustomerID: c2.ID, PlatformLevel: true}, []ports.Transaction{c, f}},
		{"platform level", ports.TransactionFilter{PlatformLevel: true}, []ports.Transaction{d, e}},
		{"platformCustomerId", ports.TransactionFilter{PlatformCustomerID: "pc-1"}, []ports.Transaction{a, b}},
		{"account identifier (sender or receiver)", ports.TransactionFilter{AccountIdentifier: "DE89"}, []ports.Transaction{a, b, e}},
		{"account identifier, internal", ports.TransactionFilter{AccountIdentifier: "InternalAccount:p"}, []ports.Transaction{d, e}},
		{"sender identifier", ports.TransactionFilter{SenderAccountIdentifier: "DE89"}, []ports.Transaction{b}},
		{"receiver identifier", ports.TransactionFilter{ReceiverAccountIdentifier: "DE89"}, []ports.Transaction{a, e}},
		{"sender and receiver", ports.TransactionFilter{SenderAccountIdentifier: "InternalAccount:c1", ReceiverAccountIdentifier: "DE89"}, []ports.Transaction{a}},
		{"second identifier", ports.TransactionFilter{AccountIdentifier: "acct-111"}, []ports.Transaction{a, c}},
		{"status", ports.TransactionFilter{Status: "COMPLETED"}, []ports.Transaction{b, d}},
		{"type", ports.TransactionFilter{Type: "OUTGOING"}, []ports.Transaction{a, c, e}},
		{"customer and type", ports.TransactionFilter{CustomerID: c2.ID, Type: "INCOMING"}, []ports.Transaction{f}},
		{"platform level and type", ports.TransactionFilter{PlatformLevel: true, Type: "OUTGOING"}, []ports.Transaction{e}},
		{"reference", ports.TransactionFilter{Reference: "REF-A"}, []ports.Transaction{a, e}},
		{"start date inclusive", ports.TransactionFilter{StartDate: ptr(at(4))}, []ports.Transaction{d, e, f}},
		{"end date inclusive", ports.TransactionFilter{EndDate: ptr(at(2))}, []ports.Transaction{a, b}},
		{"date window", ports.TransactionFilter{StartDate: ptr(at(2)), EndDate: ptr(at(4))}, []ports.Transaction{b, c, d, e}},
		{"date window, microsecond inside", ports.TransactionFilter{StartDate: ptr(at(2).Add(time.Microsecond)), EndDate: ptr(at(3))}, []ports.Transaction{c}},
		{"everything", ports.TransactionFilter{
			CustomerID: c1.ID, PlatformCustomerID: "pc-1", AccountIdentifier: "DE89", SenderAccountIdentifier: "acct-111",
			ReceiverAccountIdentifier: "ExternalAccount:x", Status: "PENDING", Type: "OUTGOING", Reference: "REF-A",
			StartDate: ptr(at(1)), EndDate: ptr(at(1)),
		}, []ports.Transaction{a}},
		{"no match", ports.TransactionFilter{Status: "REFUNDED"}, nil},
		{"other platform's customer", ports.TransactionFilter{CustomerID: "Customer:nobody"}, nil},
	}
	for _, tc := range tests {
		for _, desc := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/desc=%v", tc.name, desc), func(t *testing.T) {
				f := tc.f
				f.PlatformID, f.Desc = p.ID, desc
				checkTxnList(t, s, f, tc.want)
			})
		}
	}

	// The other platform sees only its own.
	rows, total, err := s.Read().Transactions().List(ctx, ports.TransactionFilter{PlatformID: q.ID, Reference: "REF-A"}, ports.Page{Limit: 10})
	require.NoError(t, err)
	assert.Equal(t, 1, total)
	assert.Equal(t, []string{fx.other.ID}, ids(rows, txnID))
	_, total, err = s.Read().Transactions().List(ctx, ports.TransactionFilter{PlatformID: q.ID}, ports.Page{Limit: 10})
	require.NoError(t, err)
	assert.Equal(t, 1, total)

	// A unit of work lists its own uncommitted rows.
	g := transaction(p.ID, c1.ID, "OUTGOING", at(6))
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error {
		require.NoError(t, tx.Transactions().Create(ctx, g))
		rows, total, err := tx.Transactions().List(ctx, ports.TransactionFilter{PlatformID: p.ID, CustomerID: c1.ID, Desc: true}, ports.Page{Limit: 10})
		require.NoError(t, err)
		assert.Equal(t, 3, total)
		assert.Equal(t, []string{g.ID, b.ID, a.ID}, ids(rows, txnID))
		return nil
	})
}

// filterTxns are the transactions testTransactionListFilters lists: a to
// f on its platform (a, b of the first customer, c, f of the second, d, e
// at the platform level), other on another platform.
type filterTxns struct {
	a, b, c, d, e, f, other ports.Transaction
}

// createFilterTxns stores the transactions of testTransactionListFilters,
// each with the identifiers, status and reference its filters pick on, in
// an order other than the lists'.
func createFilterTxns(t *testing.T, s ports.Store, platformID, otherID, customer1, customer2 string) filterTxns {
	t.Helper()
	mk := func(customerID, typ string, h int, edit func(*ports.Transaction)) ports.Transaction {
		tr := transaction(platformID, customerID, typ, at(h))
		if edit != nil {
			edit(&tr)
		}
		return tr
	}
	a := mk(customer1, "OUTGOING", 1, func(tr *ports.Transaction) {
		tr.PlatformCustomerID = "pc-1"
		tr.SenderIdentifiers = []string{"InternalAccount:c1", "acct-111"}
		tr.ReceiverIdentifiers = []string{"ExternalAccount:x", "DE89"}
		tr.Reference = "REF-A"
	})
	b := mk(customer1, "INCOMING", 2, func(tr *ports.Transaction) {
		tr.PlatformCustomerID = "pc-1"
		tr.SenderIdentifiers = []string{"DE89"}
		tr.ReceiverIdentifiers = []string{"InternalAccount:c1"}
		tr.Status = "COMPLETED"
	})
	c := mk(customer2, "OUTGOING", 3, func(tr *ports.Transaction) {
		tr.PlatformCustomerID = "pc-2"
		tr.SenderIdentifiers = []string{"InternalAccount:c2"}
		tr.ReceiverIdentifiers = []string{"acct-111"}
		tr.Status = "FAILED"
		tr.Reference = "REF-C"
	})
	d := mk("", "INCOMING", 4, func(tr *ports.Transaction) {
		tr.SenderIdentifiers = []string{"ExternalAccount:y"}
		tr.ReceiverIdentifiers = []string{"InternalAccount:p"}
		tr.Status = "COMPLETED"
	})
	e := mk("", "OUTGOING", 4, func(tr *ports.Transaction) { // same time as d: ties break on id
		tr.SenderIdentifiers = []string{"InternalAccount:p"}
		tr.ReceiverIdentifiers = []string{"DE89"}
		tr.Reference = "REF-A"
	})
	f := mk(customer2, "INCOMING", 5, nil)
	other := transaction(otherID, "", "OUTGOING", at(1))
	other.SenderIdentifiers = []string{"DE89"}
	other.Reference = "REF-A"
	createTxns(t, s, f, other, c, a, e, b, d)
	return filterTxns{a: a, b: b, c: c, d: d, e: e, f: f, other: other}
}

// checkTxnList lists f (one page of 10) and requires exactly want, in the
// list's order, each row as stored.
func checkTxnList(t *testing.T, s ports.Store, f ports.TransactionFilter, want []ports.Transaction) {
	t.Helper()
	rows, total, err := s.Read().Transactions().List(context.Background(), f, ports.Page{Limit: 10})
	require.NoError(t, err)
	assert.Equal(t, len(want), total)
	assert.Equal(t, txnOrder(want, f.Desc), ids(rows, txnID))
	byID := map[string]ports.Transaction{}
	for _, w := range want {
		byID[w.ID] = w
	}
	for _, r := range rows {
		assert.Equal(t, normTxn(byID[r.ID]), r)
	}
}

// testTransactionPaginationWalk walks 1,000 transactions in both
// directions, under several filters, while new transactions are inserted
// between pages (some sorting before the cursor, some after): no row is
// seen twice, every row that existed when the walk began is seen, the
// order never goes backwards, and the total follows the inserts.
func testTransactionPaginationWalk(t *testing.T, s ports.Store, _ LedgerReader) {
	ctx := context.Background()
	p := createPlatform(t, s, at(0))
	customers := []ports.Customer{customer(p.ID, at(0)), customer(p.ID, at(0)), customer(p.ID, at(0))}
	createCustomers(t, s, customers...)
	const n = 1000
	var rows []ports.Transaction
	for i := range n {
		customerID := ""
		if i%4 != 3 {
			customerID = customers[i%3].ID
		}
		tr := transaction(p.ID, customerID, []string{"OUTGOING", "INCOMING"}[i%2], t0.Add(time.Duration(i/5)*time.Second)) // 5 per instant
		if i%7 == 0 {
			tr.Status = "COMPLETED"
		}
		rows = append(rows, tr)
	}
	for chunk := range slices.Chunk(rows, 250) {
		createTxns(t, s, chunk...)
	}

	since := t0.Add(100 * time.Second)
	filters := []struct {
		name  string
		f     ports.TransactionFilter
		match func(ports.Transaction) bool
	}{
		{"platform", ports.TransactionFilter{PlatformID: p.ID}, func(ports.Transaction) bool { return true }},
		{"customer", ports.TransactionFilter{PlatformID: p.ID, CustomerID: customers[1].ID},
			func(tr ports.Transaction) bool { return tr.CustomerID == customers[1].ID }},
		{"customer and type", ports.TransactionFilter{PlatformID: p.ID, CustomerID: customers[2].ID, Type: "INCOMING"},
			func(tr ports.Transaction) bool { return tr.CustomerID == customers[2].ID && tr.Type == "INCOMING" }},
		{"status", ports.TransactionFilter{PlatformID: p.ID, Status: "COMPLETED"},
			func(tr ports.Transaction) bool { return tr.Status == "COMPLETED" }},
		{"start date", ports.TransactionFilter{PlatformID: p.ID, StartDate: &since},
			func(tr ports.Transaction) bool { return !norm(tr.CreatedAt).Before(norm(since)) }},
	}
	inserted := 0
	for _, fl := range filters {
		for _, desc := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/desc=%v", fl.name, desc), func(t *testing.T) {
				f := fl.f
				f.Desc = desc
				walkTxnsWhileInserting(t, s, f, fl.match, rows, &inserted)
			})
		}
	}
	require.Positive(t, inserted)

	// Every page of a finished walk matches one List of all the rows.
	all, total, err := s.Read().Transactions().List(ctx, ports.TransactionFilter{PlatformID: p.ID}, ports.Page{})
	require.NoError(t, err)
	assert.Equal(t, n+inserted, total)
	assert.Len(t, all, total)
	assert.Equal(t, txnOrder(all, false), ids(all, txnID))
	got := walk(t, 97, total, func(page ports.Page) ([]ports.Transaction, int, error) {
		return s.Read().Transactions().List(ctx, ports.TransactionFilter{PlatformID: p.ID}, page)
	}, txnPos)
	assert.Equal(t, ids(all, txnID), got)
}

// walkTxnsWhileInserting pages through f (which names its platform) 23
// rows at a time and, after every page but the last, inserts three
// transactions matching f (one long before the cursor, one at its instant,
// one long after), counting them in inserted. It requires every row to
// match (match is the suite's reading of f), no row twice, the order never
// to go backwards, the total to follow the inserts, and every row of rows
// matching f to be seen.
func walkTxnsWhileInserting(t *testing.T, s ports.Store, f ports.TransactionFilter, match func(ports.Transaction) bool, rows []ports.Transaction, inserted *int) {
	ctx := context.Background()
	existing := map[string]bool{}
	wantTotal := 0
	for _, r := range rows {
		if match(r) {
			existing[r.ID] = true
			wantTotal++
		}
	}
	// Rows inserted before the walk by earlier subtests also exist.
	_, total, err := s.Read().Transactions().List(ctx, f, ports.Page{Limit: 1})
	require.NoError(t, err)
	require.GreaterOrEqual(t, total, wantTotal)
	wantTotal = total

	seen := map[string]bool{}
	var last *ports.Position
	page := ports.Page{Limit: 23}
	for i := 0; ; i++ {
		require.Less(t, i, 2*len(rows), "pagination does not end")
		got, total, err := s.Read().Transactions().List(ctx, f, page)
		require.NoError(t, err)
		require.Equal(t, wantTotal, total, "total on page %d", i)
		require.LessOrEqual(t, len(got), page.Limit+1)
		hasMore := len(got) > page.Limit
		if hasMore {
			got = got[:page.Limit]
		}
		for _, r := range got {
			require.True(t, match(r), "row %s does not match the filter", r.ID)
			require.False(t, seen[r.ID], "row %s seen twice", r.ID)
			seen[r.ID] = true
			pos := txnPos(r)
			if last != nil {
				c := pos.CreatedAt.Compare(last.CreatedAt)
				if c == 0 {
					c = cmp.Compare(pos.ID, last.ID)
				}
				if f.Desc {
					c = -c
				}
				require.Positive(t, c, "order goes backwards at %s", r.ID)
			}
			last = &pos
		}
		if !hasMore {
			break
		}
		page.After = last
		// Insert rows matching the filter: one sorting long before the
		// cursor, one at the cursor's instant, one long after it.
		for _, h := range []time.Duration{-time.Hour, 0, time.Hour} {
			tr := transaction(f.PlatformID, f.CustomerID, "INCOMING", last.CreatedAt.Add(h))
			if f.Status != "" {
				tr.Status = f.Status
			}
			createTxns(t, s, tr)
			*inserted++
			if match(tr) {
				wantTotal++
			}
		}
	}
	for id := range existing {
		require.True(t, seen[id], "row %s that existed when the walk began was skipped", id)
	}
}

// testTransactionConcurrentWrites has concurrent units of work insert and
// update transactions (two of different customers and types per unit):
// every unit succeeds, and the totals (kept by counters in a SQL store)
// equal a row count, for every filter shape that may use them.
func testTransactionConcurrentWrites(t *testing.T, s ports.Store, _ LedgerReader) {
	ctx := context.Background()
	p := createPlatform(t, s, at(0))
	cs := []ports.Customer{customer(p.ID, at(0)), customer(p.ID, at(0)), customer(p.ID, at(0))}
	createCustomers(t, s, cs...)
	const workers, rounds = 6, 15
	concurrentUnits(t, s, workers, rounds, func(ctx context.Context, tx ports.Tx, w, r int) error {
		a := transaction(p.ID, cs[(w+r)%3].ID, "OUTGOING", at(r))
		b := transaction(p.ID, "", "INCOMING", at(r))
		if (w+r)%2 == 0 {
			a, b = b, a // the other order too
		}
		if err := tx.Transactions().Create(ctx, a); err != nil {
			return err
		}
		if err := tx.Transactions().Create(ctx, b); err != nil {
			return err
		}
		a.Status = "COMPLETED"
		return tx.Transactions().Update(ctx, a)
	})
	all, _, err := s.Read().Transactions().List(ctx, ports.TransactionFilter{PlatformID: p.ID}, ports.Page{})
	require.NoError(t, err)
	require.Len(t, all, 2*workers*rounds)
	filters := []ports.TransactionFilter{{}, {PlatformLevel: true}, {Type: "OUTGOING"}, {Status: "COMPLETED"}, {Status: "PENDING", Type: "INCOMING"}}
	for _, c := range cs {
		filters = append(filters, ports.TransactionFilter{CustomerID: c.ID}, ports.TransactionFilter{CustomerID: c.ID, Status: "COMPLETED"})
	}
	for _, f := range filters {
		f.PlatformID = p.ID
		want := 0
		for _, tr := range all {
			if storeTxnMatchesForTest(tr, f) {
				want++
			}
		}
		_, total, err := s.Read().Transactions().List(ctx, f, ports.Page{Limit: 1})
		require.NoError(t, err)
		assert.Equal(t, want, total, "%+v", f)
	}
}

// storeTxnMatchesForTest is the suite's own reading of the filters this
// test uses (platform, customer or platform level, type, status).
func storeTxnMatchesForTest(tr ports.Transaction, f ports.TransactionFilter) bool {
	switch {
	case tr.PlatformID != f.PlatformID,
		f.CustomerID != "" && tr.CustomerID != f.CustomerID,
		f.CustomerID == "" && f.PlatformLevel && tr.CustomerID != "",
		f.Type != "" && tr.Type != f.Type,
		f.Status != "" && tr.Status != f.Status:
		return false
	}
	return true
}
