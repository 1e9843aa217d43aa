package storetest

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/ports"
)

// credential is a live token of the platform with every permission.
func credential(platformID, name string, created time.Time) ports.APICredential {
	return ports.APICredential{
		ID: newID("Token"), ClientID: "tok_" + uuid.NewString(), PlatformID: platformID, Name: name,
		Permissions: []string{"VIEW", "TRANSACT", "MANAGE"},
		SecretHash:  []byte{0x00, 0x01, 0xfe, 0xff, 0x80}, CreatedAt: created, UpdatedAt: created,
	}
}

func createCredentials(t *testing.T, s ports.Store, cs ...ports.APICredential) {
	t.Helper()
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error {
		return eachErr(cs, func(c ports.APICredential) error { return tx.Platforms().CreateCredential(ctx, c) })
	})
}

// eachErr calls fn on each value in turn, stopping at the first error.
func eachErr[T any](vs []T, fn func(T) error) error {
	for _, v := range vs {
		if err := fn(v); err != nil {
			return err
		}
	}
	return nil
}

func ptrTime(t time.Time) *time.Time { return &t }

// errRollback aborts a unit of work on purpose.
var errRollback = errors.New("roll back")

func credentialPos(c ports.APICredential) ports.Position { return c.Position() }

func normCredential(c ports.APICredential) ports.APICredential {
	c.CreatedAt, c.UpdatedAt = norm(c.CreatedAt), norm(c.UpdatedAt)
	if c.DeletedAt != nil {
		d := norm(*c.DeletedAt)
		c.DeletedAt = &d
	}
	return c
}

func testCredentials(t *testing.T, s ports.Store, _ LedgerReader) {
	ctx := context.Background()
	p := createPlatform(t, s, at(0))
	c := credential(p.ID, "default", at(1))
	c.Permissions = []string{"VIEW"}
	createCredentials(t, s, c)
	want := normCredential(c)

	got, err := s.Read().Platforms().CredentialByClientID(ctx, c.ClientID)
	require.NoError(t, err)
	assert.Equal(t, want, got)
	byID, err := s.Read().Platforms().Credential(ctx, p.ID, c.ID)
	require.NoError(t, err)
	assert.Equal(t, want, byID)

	// Copies: changing what a read returned changes nothing stored.
	got.SecretHash[0] = 0x42
	got.Permissions[0] = "MANAGE"
	again, err := s.Read().Platforms().CredentialByClientID(ctx, c.ClientID)
	require.NoError(t, err)
	assert.Equal(t, want.SecretHash, again.SecretHash)
	assert.Equal(t, []string{"VIEW"}, again.Permissions)

	_, err = s.Read().Platforms().CredentialByClientID(ctx, "tok_absent")
	require.ErrorIs(t, err, ports.ErrNotFound)
	_, err = s.Read().Platforms().Credential(ctx, p.ID, newID("Token"))
	require.ErrorIs(t, err, ports.ErrNotFound)
	// Another platform's token is not found by id.
	q := createPlatform(t, s, at(0))
	_, err = s.Read().Platforms().Credential(ctx, q.ID, c.ID)
	require.ErrorIs(t, err, ports.ErrNotFound)

	dup := credential(p.ID, "other", at(2))
	dup.ClientID = c.ClientID
	err = s.InTx(ctx, func(tx ports.Tx) error { return tx.Platforms().CreateCredential(ctx, dup) })
	requireConflict(t, err, ports.UniqueCredentialClientID)
}

func testCredentialDelete(t *testing.T, s ports.Store, _ LedgerReader) {
	ctx := context.Background()
	p := createPlatform(t, s, at(0))
	q := createPlatform(t, s, at(0))
	gone, kept := credential(p.ID, "gone", at(1)), credential(p.ID, "kept", at(2))
	createCredentials(t, s, gone, kept)

	// Another platform cannot delete it.
	err := s.InTx(ctx, func(tx ports.Tx) error { return tx.Platforms().DeleteCredential(ctx, q.ID, gone.ID, at(3)) })
	require.ErrorIs(t, err, ports.ErrNotFound)

	// Inside the unit the deletion is seen; a rolled-back one is not kept.
	_ = s.InTx(ctx, func(tx ports.Tx) error {
		require.NoError(t, tx.Platforms().DeleteCredential(ctx, p.ID, gone.ID, at(3)))
		_, err := tx.Platforms().Credential(ctx, p.ID, gone.ID)
		require.ErrorIs(t, err, ports.ErrNotFound)
		return errRollback
	})
	_, err = s.Read().Platforms().Credential(ctx, p.ID, gone.ID)
	require.NoError(t, err)

	inTx(t, s, func(ctx context.Context, tx ports.Tx) error {
		return tx.Platforms().DeleteCredential(ctx, p.ID, gone.ID, at(3))
	})
	r := s.Read().Platforms()
	byClient, err := r.CredentialByClientID(ctx, gone.ClientID)
	require.NoError(t, err, "a deleted token is still found by client id (core refuses it)")
	wantGone := gone
	wantGone.UpdatedAt, wantGone.DeletedAt = at(3), ptrTime(at(3))
	assert.Equal(t, normCredential(wantGone), byClient)
	_, err = r.Credential(ctx, p.ID, gone.ID)
	require.ErrorIs(t, err, ports.ErrNotFound)
	rows, total, err := r.ListCredentials(ctx, ports.CredentialFilter{PlatformID: p.ID}, ports.Page{})
	require.NoError(t, err)
	assert.Equal(t, 1, total)
	assert.Equal(t, []ports.APICredential{normCredential(kept)}, rows)
	inTx(t, s, func(ctx context.Context, tx ports.Tx) error {
		live, err := tx.Platforms().LiveCredentialsForUpdate(ctx, p.ID)
		assert.Equal(t, []ports.APICredential{normCredential(kept)}, live)
		return err
	})

	// Deleting twice is not found; the client id stays taken.
	err = s.InTx(ctx, func(tx ports.Tx) error { return tx.Platforms().DeleteCredential(ctx, p.ID, gone.ID, at(4)) })
	require.ErrorIs(t, err, ports.ErrNotFound)
	again := credential(p.ID, "again", at(5))
	again.ClientID = gone.ClientID
	err = s.InTx(ctx, func(tx ports.Tx) error { return tx.Platforms().CreateCredential(ctx, again) })
	requireConflict(t, err, ports.UniqueCredentialClientID)
}

func testCredentialListFilters(t *testing.T, s ports.Store, _ LedgerReader) {
	ctx := context.Background()
	p := createPlatform(t, s, at(0))
	q := createPlatform(t, s, at(0))
	a, b, c := credential(p.ID, "ci", at(1)), credential(p.ID, "ops", at(2)), credential(p.ID, "ci", at(3))
	b.UpdatedAt = at(6)
	createCredentials(t, s, a, b, c, credential(q.ID, "ci", at(1)))
	for _, tc := range []struct {
		name string
		f    ports.CredentialFilter
		want []ports.APICredential
	}{
		{"all", ports.CredentialFilter{}, []ports.APICredential{a, b, c}},
		{"name", ports.CredentialFilter{Name: "ci"}, []ports.APICredential{a, c}},
		{"createdAfter", ports.CredentialFilter{CreatedAfter: ptrTime(at(2))}, []ports.APICredential{b, c}},
		{"createdBefore", ports.CredentialFilter{CreatedBefore: ptrTime(at(2))}, []ports.APICredential{a, b}},
		{"updatedAfter", ports.CredentialFilter{UpdatedAfter: ptrTime(at(4))}, []ports.APICredential{b}},
		{"updatedBefore", ports.CredentialFilter{UpdatedBefore: ptrTime(at(3))}, []ports.APICredential{a, c}},
		{"none", ports.CredentialFilter{Name: "nobody"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := tc.f
			f.PlatformID = p.ID
			rows, total, err := s.Read().Platforms().ListCredentials(ctx, f, ports.Page{})
			require.NoError(t, err)
			assert.Equal(t, len(tc.want), total)
			assert.Equal(t, sortedIDs(tc.want, credentialPos), sortedIDs(rows, credentialPos))
		})
	}
}

func testCredentialPagination(t *testing.T, s ports.Store, _ LedgerReader) {
	ctx := context.Background()
	p := createPlatform(t, s, at(0))
	var all []ports.APICredential
	for i := range 11 {
		all = append(all, credential(p.ID, "t"+strconv.Itoa(i), at(i/3))) // ties break on id
	}
	createCredentials(t, s, all...)
	list := func(page ports.Page) ([]ports.APICredential, int, error) {
		return s.Read().Platforms().ListCredentials(ctx, ports.CredentialFilter{PlatformID: p.ID}, page)
	}
	for _, limit := range []int{1, 2, 3, 10, 11, 100} {
		assert.Equal(t, sortedIDs(all, credentialPos), walk(t, limit, len(all), list, credentialPos), "limit %d", limit)
	}
}

// testCredentialLockSerialises: units that each delete their own token only
// while another live one remains, deciding on LiveCredentialsForUpdate,
// leave exactly one token (without the lock two could both see two and
// delete both).
func testCredentialLockSerialises(t *testing.T, s ports.Store, _ LedgerReader) {
	ctx := context.Background()
	p := createPlatform(t, s, at(0))
	const workers = 6
	var tokens []ports.APICredential
	for i := range workers {
		tokens = append(tokens, credential(p.ID, "t"+strconv.Itoa(i), at(1)))
	}
	createCredentials(t, s, tokens...)
	concurrentUnits(t, s, workers, 1, func(ctx context.Context, tx ports.Tx, w, _ int) error {
		live, err := tx.Platforms().LiveCredentialsForUpdate(ctx, p.ID)
		if err != nil || len(live) < 2 {
			return err
		}
		return tx.Platforms().DeleteCredential(ctx, p.ID, tokens[w].ID, at(2))
	})
	_, total, err := s.Read().Platforms().ListCredentials(ctx, ports.CredentialFilter{PlatformID: p.ID}, ports.Page{})
	require.NoError(t, err)
	assert.Equal(t, 1, total)
}
