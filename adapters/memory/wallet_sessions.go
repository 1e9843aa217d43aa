package memory

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/corridorpay/corridor/ports"
)

type storeSessions struct{ tx *storeTx }

func (tx *storeTx) WalletSessions() ports.WalletSessionRepo { return storeSessions{tx} }

func pickSessions(s *storeState) map[string]ports.WalletSession { return s.sessions }

func storeCopySession(s ports.WalletSession) ports.WalletSession {
	s.CreatedAt, s.ExpiresAt, s.RevokedAt = ports.Stored(s.CreatedAt), ports.Stored(s.ExpiresAt), ports.StoredPtr(s.RevokedAt)
	return s
}

func (r storeSessions) Create(_ context.Context, s ports.WalletSession) error {
	done, err := r.tx.begin(true)
	if err != nil {
		return err
	}
	defer done()
	if _, ok := storeLookup(r.tx, pickSessions, s.ID); ok {
		return storeConflict("wallet_sessions_pkey")
	}
	r.tx.w.state.sessions[s.ID] = storeCopySession(s)
	return nil
}

func (r storeSessions) Get(_ context.Context, platformID, id string) (ports.WalletSession, error) {
	done, err := r.tx.begin(false)
	if err != nil {
		return ports.WalletSession{}, err
	}
	defer done()
	s, ok := storeLookup(r.tx, pickSessions, id)
	if !ok || s.PlatformID != platformID {
		return ports.WalletSession{}, fmt.Errorf("session %s: %w", id, ports.ErrNotFound)
	}
	return storeCopySession(s), nil
}

func (r storeSessions) Active(_ context.Context, platformID, accountID string, now time.Time) ([]ports.WalletSession, error) {
	done, err := r.tx.begin(false)
	if err != nil {
		return nil, err
	}
	defer done()
	out := storeAll(r.tx, pickSessions, func(s ports.WalletSession) bool {
		return s.PlatformID == platformID && s.AccountID == accountID && s.Active(now)
	})
	slices.SortFunc(out, func(a, b ports.WalletSession) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	for i := range out {
		out[i] = storeCopySession(out[i])
	}
	return out, nil
}

func (r storeSessions) Revoke(_ context.Context, platformID, id string, at time.Time) error {
	done, err := r.tx.begin(true)
	if err != nil {
		return err
	}
	defer done()
	s, ok := storeLookup(r.tx, pickSessions, id)
	if !ok || s.PlatformID != platformID {
		return fmt.Errorf("session %s: %w", id, ports.ErrNotFound)
	}
	if s.RevokedAt == nil {
		at = ports.Stored(at)
		s.RevokedAt = &at
	}
	r.tx.w.state.sessions[id] = s
	return nil
}

func (r storeSessions) RevokeCredential(_ context.Context, platformID, credentialID string, at time.Time) error {
	done, err := r.tx.begin(true)
	if err != nil {
		return err
	}
	defer done()
	at = ports.Stored(at)
	for _, s := range storeAll(r.tx, pickSessions, func(s ports.WalletSession) bool {
		return s.PlatformID == platformID && s.CredentialID == credentialID && s.RevokedAt == nil
	}) {
		s.RevokedAt = &at
		r.tx.w.state.sessions[s.ID] = s
	}
	return nil
}

type storeSecrets struct{ tx *storeTx }

func (tx *storeTx) WalletSecrets() ports.WalletSecretRepo { return storeSecrets{tx} }

func pickSecrets(s *storeState) map[string]ports.WalletSecret { return s.secrets }

func (r storeSecrets) Create(_ context.Context, s ports.WalletSecret) error {
	done, err := r.tx.begin(true)
	if err != nil {
		return err
	}
	defer done()
	if _, ok := storeLookup(r.tx, pickSecrets, s.AccountID); ok {
		return storeConflict("wallet_secrets_pkey")
	}
	s.Sealed, s.CreatedAt = slices.Clone(s.Sealed), ports.Stored(s.CreatedAt)
	r.tx.w.state.secrets[s.AccountID] = s
	return nil
}

func (r storeSecrets) Get(_ context.Context, platformID, accountID string) (ports.WalletSecret, error) {
	done, err := r.tx.begin(false)
	if err != nil {
		return ports.WalletSecret{}, err
	}
	defer done()
	s, ok := storeLookup(r.tx, pickSecrets, accountID)
	if !ok || s.PlatformID != platformID {
		return ports.WalletSecret{}, fmt.Errorf("wallet secret of %s: %w", accountID, ports.ErrNotFound)
	}
	s.Sealed = slices.Clone(s.Sealed)
	return s, nil
}
