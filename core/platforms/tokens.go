package platforms

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/ports"
)

// Permissions of an API token (the reference's Permission). Each is a
// grant of its own: VIEW reads, TRANSACT moves money, MANAGE changes the
// platform's configuration, tokens and customers. TRANSACT and MANAGE
// include reading (a token that acts may see what it acted on).
const (
	PermissionView     = "VIEW"
	PermissionTransact = "TRANSACT"
	PermissionManage   = "MANAGE"
)

// AllPermissions are every permission, in their canonical order; the CLI's
// and the configured credentials have them all.
var AllPermissions = []string{PermissionView, PermissionTransact, PermissionManage}

// Allows reports whether a token holding perms may do what needs want:
// holding it, or, for VIEW, holding any permission.
func Allows(perms []string, want string) bool {
	if want == PermissionView {
		return len(perms) > 0
	}
	return slices.Contains(perms, want)
}

const (
	tokenType = "Token"
	// MaxTokenNameLen bounds a token's name (characters).
	MaxTokenNameLen = 255
	// codeTokenNotFound is the reference's 404 code for a token id.
	codeTokenNotFound = "TOKEN_NOT_FOUND"
	// DefaultTokenLimit and MaxTokenLimit bound a page of tokens.
	DefaultTokenLimit = 20
	MaxTokenLimit     = 100
)

// NewToken is a token just created: the stored token and its secret, which
// is never available again.
type NewToken struct {
	Token  ports.APICredential
	Secret string
}

// CreateToken issues a token for the platform with a name and a non-empty
// set of permissions (duplicates are dropped; the order becomes VIEW,
// TRANSACT, MANAGE). granter holds the permissions of the token asking:
// it grants none it does not hold (VIEW, which every permission includes,
// aside: 403 FORBIDDEN naming permissions), so a MANAGE token cannot make
// itself one that moves money.
func (s *Service) CreateToken(ctx context.Context, platformID, name string, permissions, granter []string) (NewToken, error) {
	var errs fault.Collector
	name = strings.TrimSpace(name)
	switch {
	case name == "":
		errs.Add("name", "must not be empty")
	case utf8.RuneCountInString(name) > MaxTokenNameLen:
		errs.Add("name", fmt.Sprintf("must be at most %d characters", MaxTokenNameLen))
	}
	perms, err := canonicalPermissions(permissions)
	if err != nil {
		errs.Add(err.Field, err.Message)
	}
	if err := errs.Err(); err != nil {
		return NewToken{}, err
	}
	for _, p := range perms {
		if !Allows(granter, p) {
			return NewToken{}, &fault.Error{Kind: fault.KindForbidden, Code: "FORBIDDEN",
				Message: "a token grants only permissions it holds itself, and this one lacks " + p,
				Fields:  []fault.FieldError{{Field: "permissions", Message: "includes " + p + ", which the calling token does not hold"}}}
		}
	}
	c, secret, ierr := s.issue(ctx, platformID, name, perms)
	if ierr != nil {
		return NewToken{}, ierr
	}
	return NewToken{Token: c, Secret: secret}, nil
}

// canonicalPermissions checks a requested permission list and returns it
// de-duplicated in canonical order.
func canonicalPermissions(in []string) ([]string, *fault.FieldError) {
	if len(in) == 0 {
		return nil, &fault.FieldError{Field: "permissions", Message: "must name at least one of " + strings.Join(AllPermissions, ", ")}
	}
	for i, p := range in {
		if !slices.Contains(AllPermissions, p) {
			return nil, &fault.FieldError{Field: fmt.Sprintf("permissions[%d]", i),
				Message: "unknown permission " + p + "; one of " + strings.Join(AllPermissions, ", ")}
		}
	}
	var out []string
	for _, p := range AllPermissions {
		if slices.Contains(in, p) {
			out = append(out, p)
		}
	}
	return out, nil
}

// GetToken returns one of the platform's live tokens (never its secret).
func (s *Service) GetToken(ctx context.Context, platformID, id string) (ports.APICredential, error) {
	c, err := s.store.Read().Platforms().Credential(ctx, platformID, id)
	if err != nil {
		return ports.APICredential{}, tokenErr(id, err)
	}
	return c, nil
}

func tokenErr(id string, err error) error {
	if errors.Is(err, ports.ErrNotFound) {
		return fault.NotFound(codeTokenNotFound, "no API token "+id)
	}
	return fmt.Errorf("token %s: %w", id, err)
}

// TokenQuery is the reference's listTokens query. Filter.PlatformID is
// ignored (ListTokens sets it); Limit 0 means DefaultTokenLimit; After
// continues from a previous page's Next.
type TokenQuery struct {
	Filter ports.CredentialFilter
	Limit  int
	After  *ports.Position
}

// TokenPage is one page of tokens, oldest first.
type TokenPage struct {
	Tokens  []ports.APICredential
	HasMore bool
	Next    *ports.Position
	Total   int
}

// ListTokens returns one page of the platform's live tokens matching q.
// Time bounds are inclusive.
func (s *Service) ListTokens(ctx context.Context, platformID string, q TokenQuery) (TokenPage, error) {
	switch {
	case q.Limit == 0:
		q.Limit = DefaultTokenLimit
	case q.Limit < 1 || q.Limit > MaxTokenLimit:
		return TokenPage{}, fault.Invalid("limit", fmt.Sprintf("must be between 1 and %d", MaxTokenLimit))
	}
	f := q.Filter
	f.PlatformID = platformID
	rows, total, err := s.store.Read().Platforms().ListCredentials(ctx, f, ports.Page{Limit: q.Limit, After: q.After})
	if err != nil {
		return TokenPage{}, fmt.Errorf("list tokens: %w", err)
	}
	res := TokenPage{Total: total}
	res.Tokens, res.Next = ports.TrimPage(rows, q.Limit, ports.APICredential.Position)
	res.HasMore = res.Next != nil
	return res, nil
}

// DeleteToken deletes one of the platform's tokens; its next request is
// refused. The platform's last MANAGE token cannot be deleted (400), so a
// platform can always manage its tokens. The platform's live tokens are
// locked while this is decided, so two deletions cannot each leave the
// other's token as the last one and both remove it.
func (s *Service) DeleteToken(ctx context.Context, platformID, id string) (ports.APICredential, error) {
	var deleted ports.APICredential
	err := s.store.InTx(ctx, func(tx ports.Tx) error {
		live, err := tx.Platforms().LiveCredentialsForUpdate(ctx, platformID)
		if err != nil {
			return fmt.Errorf("lock tokens: %w", err)
		}
		i := slices.IndexFunc(live, func(c ports.APICredential) bool { return c.ID == id })
		if i < 0 {
			return tokenErr(id, ports.ErrNotFound)
		}
		deleted = live[i]
		if slices.Contains(deleted.Permissions, PermissionManage) && !otherManager(live, id) {
			return fault.Invalid("tokenId", "this is the platform's last token with the MANAGE permission: "+
				"create another MANAGE token before deleting it")
		}
		now := s.clock.Now().UTC()
		if err := tx.Platforms().DeleteCredential(ctx, platformID, id, now); err != nil {
			return tokenErr(id, err)
		}
		deleted.UpdatedAt, deleted.DeletedAt = now, &now
		return nil
	})
	if err != nil {
		return ports.APICredential{}, err
	}
	return deleted, nil
}

func otherManager(live []ports.APICredential, id string) bool {
	return slices.ContainsFunc(live, func(c ports.APICredential) bool {
		return c.ID != id && slices.Contains(c.Permissions, PermissionManage)
	})
}
