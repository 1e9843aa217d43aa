package storetest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/ports"
)

// testParties holds Parties().Get to what the three repositories' Gets
// return: each part as its own Get reads it, zero where that Get answers
// ErrNotFound.
func testParties(t *testing.T, s ports.Store, _ LedgerReader) {
	ctx := context.Background()
	p, other, c, in, platformIn, ex := partiesFixture(t, s)
	gone := externalAccount(p.ID, c.ID, "USD", at(2))
	createExternals(t, s, gone)
	del := gone
	del.IsDeleted = true
	require.NoError(t, updateExternal(ctx, s, del))

	// What each repository reads, for comparison.
	wantIn, err := s.Read().InternalAccounts().Get(ctx, p.ID, in.ID)
	require.NoError(t, err)
	wantEx, err := s.Read().ExternalAccounts().Get(ctx, p.ID, ex.ID)
	require.NoError(t, err)
	wantC, err := s.Read().Customers().Get(ctx, p.ID, c.ID)
	require.NoError(t, err)

	got, err := s.Read().Parties().Get(ctx, p.ID, in.ID, ex.ID, at(9))
	require.NoError(t, err)
	assert.Equal(t, wantIn, got.Internal)
	assert.Equal(t, wantEx, got.External)
	assert.Equal(t, wantC, got.Customer)
	assert.Zero(t, got.Currency, "a platform without currency settings has none")

	got, err = s.Read().Parties().Get(ctx, p.ID, platformIn.ID, ex.ID, at(9))
	require.NoError(t, err)
	assert.Equal(t, platformIn.ID, got.Internal.ID)
	assert.Zero(t, got.Customer, "a platform account has no customer")

	got, err = s.Read().Parties().Get(ctx, p.ID, in.ID, gone.ID, at(9))
	require.NoError(t, err)
	assert.Equal(t, in.ID, got.Internal.ID)
	assert.Zero(t, got.External, "a deleted external account is absent")

	got, err = s.Read().Parties().Get(ctx, p.ID, newID("InternalAccount"), ex.ID, at(9))
	require.NoError(t, err)
	assert.Zero(t, got.Internal, "an unknown internal account is absent")
	assert.Zero(t, got.Customer)
	assert.Equal(t, ex.ID, got.External.ID)

	got, err = s.Read().Parties().Get(ctx, other.ID, in.ID, ex.ID, at(9))
	require.NoError(t, err)
	assert.Zero(t, got, "another platform's accounts are absent")

	testPartyCurrency(t, s, p, in.ID, ex.ID)

	// The reads above, and one of an unknown external account, at once.
	wallet := testPartySessions(t, s, p.ID, c.ID, ex.ID)
	calls := []partiesCall{{p.ID, in.ID, ex.ID, at(9)}, {p.ID, platformIn.ID, ex.ID, at(9)}, {p.ID, in.ID, gone.ID, at(9)},
		{p.ID, newID("InternalAccount"), ex.ID, at(9)}, {other.ID, in.ID, ex.ID, at(9)},
		{p.ID, platformIn.ID, newID("ExternalAccount"), at(9)}, {p.ID, wallet, ex.ID, at(9)}, {p.ID, wallet, ex.ID, at(30)}}
	checkConcurrentParties(t, s, calls)

	// A deleted customer is read as stored.
	dc := wantC
	dc.IsDeleted = true
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error { return tx.Customers().Update(ctx, dc) })
	got, err = s.Read().Parties().Get(ctx, p.ID, in.ID, ex.ID, at(9))
	require.NoError(t, err)
	assert.True(t, got.Customer.IsDeleted)
	assert.Equal(t, c.ID, got.Customer.ID)

	// Inside a unit of work it sees the unit's own writes.
	in2 := account(p.ID, c.ID, "INTERNAL_FIAT", "USD", at(3))
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error {
		if err := tx.InternalAccounts().Create(ctx, in2); err != nil {
			return err
		}
		got, err := tx.Parties().Get(ctx, p.ID, in2.ID, ex.ID, at(9))
		if err != nil {
			return err
		}
		assert.Equal(t, in2.ID, got.Internal.ID)
		return nil
	})
}

// partiesFixture stores what the parties tests read: a platform p and
// another, a customer c of p, c's internal account in, p's own account
// platformIn and c's external account ex.
func partiesFixture(t *testing.T, s ports.Store) (p, other ports.Platform, c ports.Customer, in, platformIn ports.InternalAccount,
	ex ports.ExternalAccount) {
	t.Helper()
	p = createPlatform(t, s, at(0))
	other = createPlatform(t, s, at(0))
	c = fullCustomer(p.ID, at(0))
	createCustomers(t, s, c)
	in = account(p.ID, c.ID, "INTERNAL_FIAT", "USD", at(1))
	platformIn = account(p.ID, "", "INTERNAL_FIAT", "USD", at(1))
	createAccounts(t, s, in, platformIn)
	ex = fullExternalAccount(p.ID, c.ID, at(2))
	createExternals(t, s, ex)
	return p, other, c, in, platformIn, ex
}

// testPartyCurrency: once the platform sets its currencies, an internal
// account's parties carry the setting of the account's currency, as the
// platform stores it, and none for a currency without one.
func testPartyCurrency(t *testing.T, s ports.Store, p ports.Platform, inID, exID string) {
	ctx := context.Background()
	usd := ports.CurrencySetting{Code: "USD", MinAmount: 100, MaxAmount: 5000,
		RequiredCounterpartyFields: []ports.CounterpartyField{{Name: "FULL_NAME", Mandatory: true}},
		EnabledTransactionTypes:    []string{"OUTGOING"}}
	eur := ports.CurrencySetting{Code: "EUR", MinAmount: 1, MaxAmount: 9, RequiredCounterpartyFields: []ports.CounterpartyField{},
		EnabledTransactionTypes: []string{"INCOMING", "OUTGOING"}}
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error {
		cur, err := tx.Platforms().GetForUpdate(ctx, p.ID)
		if err != nil {
			return err
		}
		cur.CurrencySettings = []ports.CurrencySetting{eur, usd}
		return tx.Platforms().Update(ctx, cur)
	})
	got, err := s.Read().Parties().Get(ctx, p.ID, inID, exID, time.Time{})
	require.NoError(t, err)
	assert.Equal(t, usd, got.Currency)
	got, err = s.Read().Parties().Get(ctx, p.ID, newID("InternalAccount"), exID, time.Time{})
	require.NoError(t, err)
	assert.Zero(t, got.Currency, "no account, no setting")
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error {
		cur, err := tx.Platforms().GetForUpdate(ctx, p.ID)
		if err != nil {
			return err
		}
		cur.CurrencySettings = []ports.CurrencySetting{eur}
		return tx.Platforms().Update(ctx, cur)
	})
	got, err = s.Read().Parties().Get(ctx, p.ID, inID, exID, time.Time{})
	require.NoError(t, err)
	assert.Zero(t, got.Currency, "no USD setting any more")
}

// testPartySessions: an embedded wallet's parties carry its sessions
// active at the read's time, as WalletSessions().Active reads them, and
// no other account's. It returns the wallet's id.
func testPartySessions(t *testing.T, s ports.Store, platformID, customerID, externalID string) string {
	ctx := context.Background()
	wallet := account(platformID, customerID, "EMBEDDED_WALLET", "USDB", at(1))
	fiat := account(platformID, customerID, "INTERNAL_FIAT", "EUR", at(1))
	createAccounts(t, s, wallet, fiat)
	live := session(platformID, wallet.ID, "AuthMethod:a", "02aa", at(2), 20*time.Hour)
	later := session(platformID, wallet.ID, "AuthMethod:a", "02bb", at(3), 20*time.Hour)
	expired := session(platformID, wallet.ID, "AuthMethod:a", "02cc", at(2), 5*time.Hour)
	revoked := session(platformID, wallet.ID, "AuthMethod:a", "02dd", at(2), 20*time.Hour)
	onFiat := session(platformID, fiat.ID, "AuthMethod:a", "02ee", at(2), 20*time.Hour)
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error {
		for _, x := range []ports.WalletSession{live, later, expired, revoked, onFiat} {
			if err := tx.WalletSessions().Create(ctx, x); err != nil {
				return err
			}
		}
		return tx.WalletSessions().Revoke(ctx, platformID, revoked.ID, at(4))
	})
	want, err := s.Read().WalletSessions().Active(ctx, platformID, wallet.ID, at(9))
	require.NoError(t, err)
	require.Equal(t, []string{live.ID, later.ID}, []string{want[0].ID, want[1].ID})
	got, err := s.Read().Parties().Get(ctx, platformID, wallet.ID, externalID, at(9))
	require.NoError(t, err)
	assert.Equal(t, want, got.Sessions)
	got, err = s.Read().Parties().Get(ctx, platformID, wallet.ID, externalID, time.Time{})
	require.NoError(t, err)
	assert.Equal(t, wallet.ID, got.Internal.ID)
	assert.Empty(t, got.Sessions, "a read for no stamp (zero time) carries no sessions")
	got, err = s.Read().Parties().Get(ctx, platformID, wallet.ID, externalID, at(23))
	require.NoError(t, err)
	assert.Empty(t, got.Sessions, "all expired by then")
	got, err = s.Read().Parties().Get(ctx, platformID, fiat.ID, externalID, at(9))
	require.NoError(t, err)
	assert.Empty(t, got.Sessions, "only an embedded wallet's parties carry sessions")
	got, err = s.Read().Parties().Get(ctx, "Platform:another", wallet.ID, externalID, at(9))
	require.NoError(t, err)
	assert.Empty(t, got.Sessions, "another platform sees none")
	return wallet.ID
}

// partiesCall is the arguments of one Parties().Get.
type partiesCall struct {
	platform, in, ex string
	at               time.Time
}

// checkConcurrentParties requires concurrent reads of calls (which a store
// may group) each to get their own answer, the one a lone read gives.
func checkConcurrentParties(t *testing.T, s ports.Store, calls []partiesCall) {
	t.Helper()
	ctx := context.Background()
	want := make([]ports.Parties, len(calls))
	for i, c := range calls {
		var err error
		want[i], err = s.Read().Parties().Get(ctx, c.platform, c.in, c.ex, c.at)
		require.NoError(t, err)
	}
	const rounds = 8
	results := make([]ports.Parties, rounds*len(calls))
	errs := make([]error, len(results))
	var wg sync.WaitGroup
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := calls[i%len(calls)]
			results[i], errs[i] = s.Read().Parties().Get(ctx, c.platform, c.in, c.ex, c.at)
		}()
	}
	wg.Wait()
	for i := range results {
		require.NoError(t, errs[i])
		assert.Equal(t, want[i%len(calls)], results[i], "concurrent read %d", i)
	}
}

// testQuoteParties holds Parties().OfQuote to what Quotes().Get and
// Parties().Get of the quote's source and destination return, alone, at
// once (a store may group the reads) and inside a unit of work.
func testQuoteParties(t *testing.T, s ports.Store, _ LedgerReader) {
	ctx := context.Background()
	p, other, c, in, platformIn, ex := partiesFixture(t, s)
	wallet := testPartySessions(t, s, p.ID, c.ID, ex.ID)

	quote := func(source, destination string) ports.Quote {
		q := bareQuote(p.ID, at(3))
		q.CustomerID, q.SourceAccountID, q.DestinationAccountID = c.ID, source, destination
		return q
	}
	toExternal := quote(in.ID, ex.ID)
	toUma := quote(platformIn.ID, "")
	toUma.DestinationType, toUma.DestinationUmaAddress = "UMA_ADDRESS", "$bob@other.example"
	fromWallet := quote(wallet, ex.ID)
	fromNowhere := quote(newID("InternalAccount"), newID("ExternalAccount"))
	quotes := []ports.Quote{toExternal, toUma, fromWallet, fromNowhere}
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error {
		for _, q := range quotes {
			if err := tx.Quotes().Create(ctx, q); err != nil {
				return err
			}
		}
		return nil
	})

	type answer struct {
		quote   ports.Quote
		parties ports.Parties
		err     error
	}
	// want is what Quotes().Get and Parties().Get answer for quoteID.
	want := func(platformID, quoteID string, sessionsAt time.Time) answer {
		q, err := s.Read().Quotes().Get(ctx, platformID, quoteID)
		if err != nil {
			return answer{err: err}
		}
		parties, err := s.Read().Parties().Get(ctx, platformID, q.SourceAccountID, q.DestinationAccountID, sessionsAt)
		require.NoError(t, err)
		return answer{quote: q, parties: parties}
	}
	type call struct {
		platform, quote string
		at              time.Time
	}
	calls := []call{{p.ID, toExternal.ID, at(9)}, {p.ID, toUma.ID, at(9)}, {p.ID, fromWallet.ID, at(9)},
		{p.ID, fromWallet.ID, time.Time{}}, {p.ID, fromNowhere.ID, at(9)}, {other.ID, toExternal.ID, at(9)},
		{p.ID, newID("Quote"), at(9)}}
	wants := make([]answer, len(calls))
	for i, c := range calls {
		wants[i] = want(c.platform, c.quote, c.at)
		q, parties, err := s.Read().Parties().OfQuote(ctx, c.platform, c.quote, c.at)
		if wants[i].err != nil {
			assert.ErrorIs(t, err, ports.ErrNotFound, "call %d", i)
			assert.Zero(t, q, "call %d", i)
			continue
		}
		require.NoError(t, err, "call %d", i)
		assert.Equal(t, wants[i].quote, q, "call %d", i)
		assert.Equal(t, wants[i].parties, parties, "call %d", i)
	}
	assert.Equal(t, in.ID, wants[0].parties.Internal.ID)
	assert.Equal(t, ex.ID, wants[0].parties.External.ID)
	assert.Equal(t, c.ID, wants[0].parties.Customer.ID)
	assert.Zero(t, wants[1].parties.External, "a quote to a UMA address has no external account")
	assert.Len(t, wants[2].parties.Sessions, 2, "a wallet's quote read for a stamp carries its active sessions")
	assert.Empty(t, wants[3].parties.Sessions)
	assert.Zero(t, wants[4].parties, "a quote whose accounts are gone has no parties")
	assert.ErrorIs(t, wants[5].err, ports.ErrNotFound, "another platform's quote is absent")

	// The same reads at once.
	const rounds = 8
	got := make([]answer, rounds*len(calls))
	var wg sync.WaitGroup
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := calls[i%len(calls)]
			got[i].quote, got[i].parties, got[i].err = s.Read().Parties().OfQuote(ctx, c.platform, c.quote, c.at)
		}()
	}
	wg.Wait()
	for i, g := range got {
		w := wants[i%len(calls)]
		if w.err != nil {
			assert.ErrorIs(t, g.err, ports.ErrNotFound, "concurrent read %d", i)
			continue
		}
		require.NoError(t, g.err, "concurrent read %d", i)
		assert.Equal(t, w.quote, g.quote, "concurrent read %d", i)
		assert.Equal(t, w.parties, g.parties, "concurrent read %d", i)
	}

	// Inside a unit of work it sees the unit's own writes.
	fresh := quote(in.ID, ex.ID)
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error {
		if err := tx.Quotes().Create(ctx, fresh); err != nil {
			return err
		}
		q, parties, err := tx.Parties().OfQuote(ctx, p.ID, fresh.ID, at(9))
		if err != nil {
			return err
		}
		assert.Equal(t, fresh.ID, q.ID)
		assert.Equal(t, in.ID, parties.Internal.ID)
		return nil
	})
}
