package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/ports"
)

func session(platformID, accountID, credentialID, key string, created time.Time, lifetime time.Duration) ports.WalletSession {
	return ports.WalletSession{ID: newID("Session"), PlatformID: platformID, AccountID: accountID, CredentialID: credentialID,
		PublicKey: key, CreatedAt: created, ExpiresAt: created.Add(lifetime)}
}

// Sessions: active ones by account (oldest first), expiry, revoking one
// and every one of a credential, and platform isolation.
func testWalletSessions(t *testing.T, s ports.Store, _ LedgerReader) {
	ctx := context.Background()
	p, q := createPlatform(t, s, at(0)), createPlatform(t, s, at(0))
	acct, cred1, cred2 := newID("InternalAccount"), newID("AuthMethod"), newID("AuthMethod")
	a := session(p.ID, acct, cred1, "02aa", at(1), 10*time.Hour)
	b := session(p.ID, acct, cred2, "03bb", at(2), 10*time.Hour)
	short := session(p.ID, acct, cred1, "02cc", at(3), 90*time.Minute)
	other := session(q.ID, acct, cred1, "02dd", at(1), 10*time.Hour)
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error {
		for _, x := range []ports.WalletSession{a, b, short, other} {
			if err := tx.WalletSessions().Create(ctx, x); err != nil {
				return err
			}
		}
		return nil
	})
	err := s.InTx(ctx, func(tx ports.Tx) error { return tx.WalletSessions().Create(ctx, a) })
	require.ErrorIs(t, err, ports.ErrConflict, "same id twice")

	got, err := s.Read().WalletSessions().Get(ctx, p.ID, a.ID)
	require.NoError(t, err)
	assert.Equal(t, a.PublicKey, got.PublicKey)
	assert.Equal(t, norm(a.ExpiresAt), got.ExpiresAt)
	assert.Nil(t, got.RevokedAt)
	_, err = s.Read().WalletSessions().Get(ctx, q.ID, a.ID)
	require.ErrorIs(t, err, ports.ErrNotFound, "another platform's session")

	keys := func(now time.Time) []string {
		t.Helper()
		rows, err := s.Read().WalletSessions().Active(ctx, p.ID, acct, now)
		require.NoError(t, err)
		out := make([]string, len(rows))
		for i, r := range rows {
			out[i] = r.PublicKey
		}
		return out
	}
	assert.Equal(t, []string{"02aa", "03bb", "02cc"}, keys(at(3)))
	assert.Equal(t, []string{"02aa", "03bb"}, keys(at(3).Add(90*time.Minute)), "an expired session is not active")

	inTx(t, s, func(ctx context.Context, tx ports.Tx) error {
		return tx.WalletSessions().Revoke(ctx, p.ID, b.ID, at(4))
	})
	assert.Equal(t, []string{"02aa", "02cc"}, keys(at(4)))
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error {
		return tx.WalletSessions().Revoke(ctx, p.ID, b.ID, at(5))
	})
	got, err = s.Read().WalletSessions().Get(ctx, p.ID, b.ID)
	require.NoError(t, err)
	require.NotNil(t, got.RevokedAt)
	assert.Equal(t, norm(at(4)), *got.RevokedAt, "revoking again keeps the first time")
	err = s.InTx(ctx, func(tx ports.Tx) error { return tx.WalletSessions().Revoke(ctx, q.ID, a.ID, at(5)) })
	require.ErrorIs(t, err, ports.ErrNotFound, "another platform cannot revoke it")

	inTx(t, s, func(ctx context.Context, tx ports.Tx) error {
		return tx.WalletSessions().RevokeCredential(ctx, p.ID, cred1, at(6))
	})
	assert.Empty(t, keys(at(6)), "revoking a credential ends its sessions")
	rows, err := s.Read().WalletSessions().Active(ctx, q.ID, acct, at(6))
	require.NoError(t, err)
	assert.Len(t, rows, 1, "another platform's session is untouched")
}

// Wallet secrets: one per wallet, read back as stored, per platform.
func testWalletSecrets(t *testing.T, s ports.Store, _ LedgerReader) {
	ctx := context.Background()
	p, q := createPlatform(t, s, at(0)), createPlatform(t, s, at(0))
	sec := ports.WalletSecret{PlatformID: p.ID, AccountID: newID("InternalAccount"), Sealed: []byte{1, 2, 3}, CreatedAt: at(1)}
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error { return tx.WalletSecrets().Create(ctx, sec) })
	got, err := s.Read().WalletSecrets().Get(ctx, p.ID, sec.AccountID)
	require.NoError(t, err)
	assert.Equal(t, sec.Sealed, got.Sealed)
	assert.Equal(t, norm(sec.CreatedAt), got.CreatedAt)
	_, err = s.Read().WalletSecrets().Get(ctx, q.ID, sec.AccountID)
	require.ErrorIs(t, err, ports.ErrNotFound, "another platform's")
	err = s.InTx(ctx, func(tx ports.Tx) error { return tx.WalletSecrets().Create(ctx, sec) })
	require.ErrorIs(t, err, ports.ErrConflict, "one secret per wallet")
}
