package platforms

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/ports"
)

// secretBytes is the entropy of an issued client secret (256 bits).
const secretBytes = 32

// maxTokenIDLen bounds a configured token id.
const maxTokenIDLen = 255

// ErrCredentialTaken is returned by AddCredential when the token id is
// already registered with a different secret or platform.
var ErrCredentialTaken = errors.New("API token id is already registered with another secret")

// dummyHash is compared against when a token id is unknown, so an unknown
// token costs the same work as a wrong secret.
var dummyHash = sha256.Sum256([]byte("corridor: no such API token"))

// IssueCredential creates a new API credential with every permission for
// the platform (the CLI's and the bootstrap's) and returns its client id
// (the Basic user name) and secret. Only the secret's SHA-256 is stored, so
// the secret is shown this once.
func (s *Service) IssueCredential(ctx context.Context, platformID, name string) (clientID, secret string, err error) {
	c, secret, err := s.issue(ctx, platformID, name, AllPermissions)
	return c.ClientID, secret, err
}

// issue makes a token with a fresh client id and secret and stores it.
func (s *Service) issue(ctx context.Context, platformID, name string, perms []string) (ports.APICredential, string, error) {
	raw := make([]byte, secretBytes)
	if _, err := rand.Read(raw); err != nil {
		return ports.APICredential{}, "", fmt.Errorf("generate client secret: %w", err)
	}
	secret := base64.RawURLEncoding.EncodeToString(raw)
	idRaw := make([]byte, 16)
	if _, err := rand.Read(idRaw); err != nil {
		return ports.APICredential{}, "", fmt.Errorf("generate client id: %w", err)
	}
	// A Basic user name cannot contain ':', so the client id is not the
	// token's "Token:<uuid>" id.
	c := s.credential(platformID, name, "tok_"+hex.EncodeToString(idRaw), secret)
	c.Permissions = perms
	err := s.store.InTx(ctx, func(tx ports.Tx) error {
		if _, err := tx.Platforms().Get(ctx, platformID); err != nil {
			if errors.Is(err, ports.ErrNotFound) {
				return fault.NotFound("NOT_FOUND", "platform not found")
			}
			return fmt.Errorf("get platform %s: %w", platformID, err)
		}
		return tx.Platforms().CreateCredential(ctx, c)
	})
	if err != nil {
		return ports.APICredential{}, "", fmt.Errorf("issue credential: %w", err)
	}
	return c, secret, nil
}

// AddCredential registers a fixed credential (from configuration), with
// every permission, for the platform. Adding the same client id and secret
// to the same platform again is a no-op; a client id already registered
// otherwise (or deleted through the API) is ErrCredentialTaken.
func (s *Service) AddCredential(ctx context.Context, platformID, name, tokenID, secret string) error {
	if err := validTokenID(tokenID); err != nil {
		return err
	}
	if secret == "" {
		return fault.Invalid("secret", "must not be empty")
	}
	c := s.credential(platformID, name, tokenID, secret)
	err := s.store.InTx(ctx, func(tx ports.Tx) error {
		if _, err := tx.Platforms().Get(ctx, platformID); err != nil {
			if errors.Is(err, ports.ErrNotFound) {
				return fault.NotFound("NOT_FOUND", "platform not found")
			}
			return fmt.Errorf("get platform %s: %w", platformID, err)
		}
		old, err := tx.Platforms().CredentialByClientID(ctx, tokenID)
		switch {
		case err == nil:
			return sameCredential(old, c)
		case !errors.Is(err, ports.ErrNotFound):
			return fmt.Errorf("look up token %s: %w", tokenID, err)
		}
		return tx.Platforms().CreateCredential(ctx, c)
	})
	if errors.Is(err, ports.ErrConflict) {
		// Lost a race with a concurrent registration: compare with the winner.
		old, gerr := s.store.Read().Platforms().CredentialByClientID(ctx, tokenID)
		if gerr != nil {
			return fmt.Errorf("add credential %s: %w", tokenID, gerr)
		}
		return sameCredential(old, c)
	}
	if err != nil {
		return fmt.Errorf("add credential %s: %w", tokenID, err)
	}
	return nil
}

func sameCredential(old, c ports.APICredential) error {
	if old.DeletedAt != nil {
		return fmt.Errorf("token %s was deleted: %w", c.ClientID, ErrCredentialTaken)
	}
	if old.PlatformID != c.PlatformID || subtle.ConstantTimeCompare(old.SecretHash, c.SecretHash) != 1 {
		return fmt.Errorf("token %s: %w", c.ClientID, ErrCredentialTaken)
	}
	return nil
}

func (s *Service) credential(platformID, name, tokenID, secret string) ports.APICredential {
	h := sha256.Sum256([]byte(secret))
	now := s.clock.Now().UTC()
	return ports.APICredential{
		ID:          s.ids.New(tokenType),
		ClientID:    tokenID,
		PlatformID:  platformID,
		Name:        name,
		Permissions: AllPermissions,
		SecretHash:  h[:],
		CreatedAt:   now,
		UpdatedAt:   now,
	}
}

func validTokenID(id string) error {
	switch {
	case id == "":
		return fault.Invalid("tokenId", "must not be empty")
	case len(id) > maxTokenIDLen:
		return fault.Invalid("tokenId", fmt.Sprintf("must be at most %d characters", maxTokenIDLen))
	case strings.Contains(id, ":"):
		return fault.Invalid("tokenId", "must not contain ':' (it is a Basic user name)")
	case strings.IndexFunc(id, func(r rune) bool { return !unicode.IsPrint(r) || unicode.IsSpace(r) }) >= 0:
		return fault.Invalid("tokenId", "must be printable without spaces")
	}
	return nil
}

// Authenticate checks a token id and secret and returns the credential; a
// deleted token is refused as an unknown one.
// Hashes are compared in constant time, and an unknown token id does the
// same comparison against a dummy hash, so timing does not reveal which
// token ids exist. An unknown token id and a wrong secret are the same 401
// (errBadCredential), so the answer does not reveal it either.
func (s *Service) Authenticate(ctx context.Context, tokenID, secret string) (ports.APICredential, error) {
	got := sha256.Sum256([]byte(secret))
	unknown := func() (ports.APICredential, error) {
		subtle.ConstantTimeCompare(got[:], dummyHash[:])
		return ports.APICredential{}, errBadCredential()
	}
	if tokenID == "" {
		return unknown()
	}
	c, err := s.store.Read().Platforms().CredentialByClientID(ctx, tokenID)
	if errors.Is(err, ports.ErrNotFound) || err == nil && c.DeletedAt != nil {
		return unknown()
	}
	if err != nil {
		return ports.APICredential{}, fmt.Errorf("authenticate: look up token: %w", err)
	}
	if subtle.ConstantTimeCompare(got[:], c.SecretHash) != 1 {
		return ports.APICredential{}, errBadCredential()
	}
	return c, nil
}

// errBadCredential is the one answer to a token id and secret that do not
// match a credential, whichever of the two is wrong.
func errBadCredential() error {
	return fault.Unauthorized("invalid API token id or client secret")
}
