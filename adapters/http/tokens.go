package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/corridorpay/corridor/core/platforms"
	"github.com/corridorpay/corridor/ports"
)

// ---- wire models ----

// ApiToken is a platform's API token. clientSecret is only in the answer
// to its creation: only its SHA-256 is kept.
type ApiToken struct {
	ID           string    `json:"id" doc:"Token:<uuid>" example:"Token:0b7e4c1a-51f3-4d0e-9c38-2f4d7f1e6a10"`
	Name         string    `json:"name" doc:"The name given at creation"`
	Permissions  []string  `json:"permissions" enum:"VIEW,TRANSACT,MANAGE" doc:"What the token may do: VIEW reads, TRANSACT moves money, MANAGE changes configuration, tokens and customers (TRANSACT and MANAGE also read)"`
	ClientID     string    `json:"clientId" doc:"The HTTP Basic user name of the token" example:"tok_5d41402abc4b2a76b9719d911017c592"`
	ClientSecret string    `json:"clientSecret,omitempty" doc:"The HTTP Basic password; only in the answer to the creation, never again"`
	CreatedAt    time.Time `json:"createdAt"`
	UpdatedAt    time.Time `json:"updatedAt"`
}

// ApiTokenCreateRequest creates a token.
type ApiTokenCreateRequest struct {
	Name        string   `json:"name" minLength:"1" maxLength:"255" doc:"A name to tell the token apart" example:"Reporting job"`
	Permissions []string `json:"permissions" minItems:"1" uniqueItems:"true" enum:"VIEW,TRANSACT,MANAGE" doc:"The permissions to grant (at least one)" example:"[\"VIEW\"]"`
}

// TokenList is one page of tokens.
type TokenList struct {
	Data       []ApiToken `json:"data"`
	HasMore    bool       `json:"hasMore" doc:"Whether more results follow this page"`
	NextCursor string     `json:"nextCursor,omitempty" doc:"Pass as cursor to get the next page (only when hasMore)"`
	TotalCount int        `json:"totalCount" doc:"Number of tokens matching the filters, ignoring pagination"`
}

func tokenOut(c ports.APICredential) ApiToken {
	return ApiToken{ID: c.ID, Name: c.Name, Permissions: c.Permissions, ClientID: c.ClientID,
		CreatedAt: c.CreatedAt.UTC(), UpdatedAt: c.UpdatedAt.UTC()}
}

// ---- operations ----

type createTokenInput struct {
	Body ApiTokenCreateRequest
}

type tokenIDInput struct {
	TokenID string `path:"tokenId" maxLength:"255" doc:"The token's id (Token:<uuid>)"`
}

type listTokensInput struct {
	Name          string    `query:"name" maxLength:"255" doc:"Only tokens with this name"`
	CreatedAfter  time.Time `query:"createdAfter" doc:"Only tokens created at or after this time"`
	CreatedBefore time.Time `query:"createdBefore" doc:"Only tokens created at or before this time"`
	UpdatedAfter  time.Time `query:"updatedAfter" doc:"Only tokens updated at or after this time"`
	UpdatedBefore time.Time `query:"updatedBefore" doc:"Only tokens updated at or before this time"`
	Limit         int       `query:"limit" minimum:"1" maximum:"100" default:"20" doc:"Page size"`
	Cursor        string    `query:"cursor" maxLength:"1024" doc:"nextCursor of the previous page"`
}

type tokenOutput struct{ Body ApiToken }

type tokenListOutput struct{ Body TokenList }

const tokensTag = "API Tokens"

// tokensAPI handles the API token operations.
type tokensAPI struct{ d Deps }

func registerTokens(api huma.API, d Deps) {
	h := tokensAPI{d}
	registerAll(api,
		func(api huma.API) { huma.Register(api, h.createTokenOp(), h.createToken) },
		func(api huma.API) { huma.Register(api, h.listTokensOp(), h.listTokens) },
		func(api huma.API) { huma.Register(api, h.getTokenOp(), h.getToken) },
		func(api huma.API) { huma.Register(api, h.deleteTokenOp(), h.deleteToken) },
	)
}

func (tokensAPI) createTokenOp() huma.Operation {
	return huma.Operation{
		OperationID:   "createToken",
		Method:        http.MethodPost,
		Path:          "/tokens",
		Summary:       "Create an API token",
		Description:   "Issues a token of the platform with the given permissions. The answer carries clientSecret, the only time it is shown: only its SHA-256 is kept. Use clientId and clientSecret as the HTTP Basic user name and password. A token grants only permissions it holds itself: asking for another is 403 FORBIDDEN naming permissions.",
		Tags:          []string{tokensTag},
		DefaultStatus: http.StatusCreated,
		Errors:        []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden},
	}
}

func (h tokensAPI) createToken(ctx context.Context, in *createTokenInput) (*tokenOutput, error) {
	t, err := h.d.Platforms.CreateToken(ctx, principal(ctx).PlatformID, in.Body.Name, in.Body.Permissions, principal(ctx).Permissions)
	if err != nil {
		return nil, apiError(err)
	}
	out := tokenOut(t.Token)
	out.ClientSecret = t.Secret
	return &tokenOutput{Body: out}, nil
}

func (tokensAPI) listTokensOp() huma.Operation {
	return huma.Operation{
		OperationID: "listTokens",
		Method:      http.MethodGet,
		Path:        "/tokens",
		Summary:     "List API tokens",
		Description: "Lists the platform's tokens (deleted ones never), oldest first, filtered and paginated. Time bounds are inclusive. Secrets are never listed.",
		Tags:        []string{tokensTag},
		Errors:      []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden},
	}
}

func (h tokensAPI) listTokens(ctx context.Context, in *listTokensInput) (*tokenListOutput, error) {
	if err := checkWindows(window{"createdAfter", in.CreatedAfter, "createdBefore", in.CreatedBefore},
		window{"updatedAfter", in.UpdatedAfter, "updatedBefore", in.UpdatedBefore}); err != nil {
		return nil, err
	}
	cursors := cursorsOf(h.d, "tokens")
	page, err := cursors.page(in.Limit, in.Cursor)
	if err != nil {
		return nil, err
	}
	res, err := h.d.Platforms.ListTokens(ctx, principal(ctx).PlatformID, platforms.TokenQuery{
		Limit: page.Limit, After: page.After,
		Filter: ports.CredentialFilter{
			Name:          in.Name,
			CreatedAfter:  optTime(in.CreatedAfter),
			CreatedBefore: optTime(in.CreatedBefore),
			UpdatedAfter:  optTime(in.UpdatedAfter),
			UpdatedBefore: optTime(in.UpdatedBefore),
		},
	})
	if err != nil {
		return nil, apiError(err)
	}
	out := TokenList{Data: make([]ApiToken, len(res.Tokens)), HasMore: res.HasMore, TotalCount: res.Total}
	for i, t := range res.Tokens {
		out.Data[i] = tokenOut(t)
	}
	out.NextCursor = cursors.next(res.HasMore, res.Next)
	return &tokenListOutput{Body: out}, nil
}

func (tokensAPI) getTokenOp() huma.Operation {
	return huma.Operation{
		OperationID: "getTokenById",
		Method:      http.MethodGet,
		Path:        "/tokens/{tokenId}",
		Summary:     "Get an API token",
		Description: "Returns one of the platform's live tokens, without its secret. 404 TOKEN_NOT_FOUND for a deleted token or another platform's.",
		Tags:        []string{tokensTag},
		Errors:      []int{http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound},
	}
}

func (h tokensAPI) getToken(ctx context.Context, in *tokenIDInput) (*tokenOutput, error) {
	t, err := h.d.Platforms.GetToken(ctx, principal(ctx).PlatformID, in.TokenID)
	if err != nil {
		return nil, apiError(err)
	}
	return &tokenOutput{Body: tokenOut(t)}, nil
}

func (tokensAPI) deleteTokenOp() huma.Operation {
	return huma.Operation{
		OperationID:   "deleteTokenById",
		Method:        http.MethodDelete,
		Path:          "/tokens/{tokenId}",
		DefaultStatus: http.StatusNoContent,
		Summary:       "Delete an API token",
		Description:   "Deletes one of the platform's tokens: its next request is refused (401), the token used for this call included. 400 INVALID_INPUT naming tokenId when it is the platform's last token with MANAGE (create another first); 404 TOKEN_NOT_FOUND for a deleted token or another platform's.",
		Tags:          []string{tokensTag},
		Errors:        []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound},
	}
}

func (h tokensAPI) deleteToken(ctx context.Context, in *tokenIDInput) (*struct{}, error) {
	t, err := h.d.Platforms.DeleteToken(ctx, principal(ctx).PlatformID, in.TokenID)
	if err != nil {
		return nil, apiError(err)
	}
	verified.forget(h.d.Platforms, t.ClientID)
	return nil, nil
}
