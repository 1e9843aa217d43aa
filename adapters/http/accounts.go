package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/corridorpay/corridor/core/accounts"
	"github.com/corridorpay/corridor/core/money"
)

// ---- wire models ----

// Currency describes a currency on the wire.
type Currency struct {
	Code     string `json:"code" doc:"ISO 4217 code, or a ticker for crypto (BTC, USDC)" example:"USD"`
	Name     string `json:"name" doc:"Full name" example:"United States Dollar"`
	Symbol   string `json:"symbol" doc:"Symbol" example:"$"`
	Decimals int    `json:"decimals" minimum:"0" doc:"Decimal places of the smallest unit" example:"2"`
}

// CurrencyAmount is an amount in the smallest unit of its currency.
type CurrencyAmount struct {
	Amount   int64    `json:"amount" format:"int64" doc:"Amount in the currency's smallest unit (cents, satoshis…)" example:"12550"`
	Currency Currency `json:"currency"`
}

func currencyOf(code string) Currency {
	c, ok := money.Lookup(code)
	if !ok {
		return Currency{Code: code}
	}
	return Currency{Code: c.Code, Name: c.Name, Symbol: c.Symbol, Decimals: c.Decimals}
}

func amountOf(amount int64, code string) CurrencyAmount {
	return CurrencyAmount{Amount: amount, Currency: currencyOf(code)}
}

// PaymentInstructions tell a payer how to send money into an account.
type PaymentInstructions struct {
	InstructionsNotes   string         `json:"instructionsNotes,omitempty" doc:"Human-readable payment notes"`
	IsPlatformAccount   bool           `json:"isPlatformAccount" doc:"Whether the account belongs to the platform rather than a customer"`
	AccountOrWalletInfo map[string]any `json:"accountOrWalletInfo" doc:"Bank account or wallet details to pay to"`
}

// InternalAccount is an account held inside the service.
type InternalAccount struct {
	ID         string `json:"id" doc:"InternalAccount:<uuid>" example:"InternalAccount:0b7a3d0e-3c9e-4b55-9a55-6f3b1de7a001"`
	CustomerID string `json:"customerId,omitempty" doc:"The customer owning the account; absent for a platform account"`
	Type       string `json:"type" enum:"INTERNAL_FIAT,INTERNAL_CRYPTO,EMBEDDED_WALLET" doc:"Fiat holding account, crypto holding account, or self-custodial embedded wallet"`
	Status     string `json:"status" enum:"PENDING,ACTIVE,CLOSED,FROZEN,FAILED" doc:"Only ACTIVE accounts send and receive"`
	// Balance excludes pending and held funds; TotalBalance includes them.
	Balance                    CurrencyAmount        `json:"balance" doc:"Spendable balance, excluding pending and held funds"`
	TotalBalance               CurrencyAmount        `json:"totalBalance" doc:"Balance including pending and held funds"`
	FundingPaymentInstructions []PaymentInstructions `json:"fundingPaymentInstructions" doc:"Where to send deposits into the account"`
	PrivateEnabled             *bool                 `json:"privateEnabled,omitempty" doc:"Wallet privacy (EMBEDDED_WALLET only)"`
	CreatedAt                  time.Time             `json:"createdAt"`
	UpdatedAt                  time.Time             `json:"updatedAt"`
}

func internalAccountOut(a accounts.Account) InternalAccount {
	out := InternalAccount{
		ID:                         a.ID,
		CustomerID:                 a.CustomerID,
		Type:                       a.Type,
		Status:                     a.Status,
		Balance:                    amountOf(a.Balance, a.Currency),
		TotalBalance:               amountOf(a.TotalBalance, a.Currency),
		FundingPaymentInstructions: []PaymentInstructions{},
		CreatedAt:                  a.CreatedAt.UTC(),
		UpdatedAt:                  a.UpdatedAt.UTC(),
	}
	if a.Type == accounts.TypeEmbeddedWallet {
		p := a.PrivateEnabled
		out.PrivateEnabled = &p
	}
	return out
}

func internalAccountsOut(as []accounts.Account) []InternalAccount {
	out := make([]InternalAccount, len(as))
	for i, a := range as {
		out[i] = internalAccountOut(a)
	}
	return out
}

// InternalAccountList is one page of internal accounts.
type InternalAccountList struct {
	Data       []InternalAccount `json:"data"`
	HasMore    bool              `json:"hasMore" doc:"Whether more results follow this page"`
	NextCursor string            `json:"nextCursor,omitempty" doc:"Pass as cursor to get the next page (only when hasMore)"`
	TotalCount int               `json:"totalCount" doc:"Number of results matching the filters, ignoring pagination"`
}

// PlatformInternalAccountList lists the platform's own accounts.
type PlatformInternalAccountList struct {
	Data []InternalAccount `json:"data"`
}

// SandboxFundRequest adds money to an internal account in the sandbox.
type SandboxFundRequest struct {
	Amount int64 `json:"amount" format:"int64" exclusiveMinimum:"0" maximum:"100000000000" doc:"Amount to add, in the smallest unit of the account's currency" example:"100000"`
}

// ---- operations ----

type listCustomerAccountsInput struct {
	Currency   string `query:"currency" doc:"Only accounts in this currency"`
	CustomerID string `query:"customerId" maxLength:"255" pattern:"^Customer:" doc:"Only this customer's accounts (a Customer id)"`
	Type       string `query:"type" enum:"INTERNAL_FIAT,INTERNAL_CRYPTO,EMBEDDED_WALLET" doc:"Only accounts of this type"`
	Limit      int    `query:"limit" minimum:"1" maximum:"100" default:"20" doc:"Page size"`
	Cursor     string `query:"cursor" doc:"nextCursor of the previous page"`
}

type listPlatformAccountsInput struct {
	Currency string `query:"currency" doc:"Only accounts in this currency"`
	Type     string `query:"type" enum:"INTERNAL_FIAT,INTERNAL_CRYPTO,EMBEDDED_WALLET" doc:"Only accounts of this type"`
}

type fundInput struct {
	AccountID      string `path:"accountId" doc:"The internal account to fund"`
	IdempotencyKey string `header:"Idempotency-Key" maxLength:"255"`
	Body           SandboxFundRequest
}

type internalAccountListOutput struct{ Body InternalAccountList }

type platformAccountListOutput struct{ Body PlatformInternalAccountList }

type internalAccountOutput struct{ Body InternalAccount }

const accountsTag = "Internal Accounts"

// sandboxTag groups the sandbox-only operations.
const sandboxTag = "Sandbox"

// accountsAPI handles the internal-account operations.
type accountsAPI struct{ d Deps }

func registerAccounts(api huma.API, d Deps) {
	h := accountsAPI{d}
	registerAll(api,
		func(api huma.API) { huma.Register(api, h.listCustomerAccountsOp(), h.listCustomerAccounts) },
		func(api huma.API) { huma.Register(api, h.listPlatformAccountsOp(), h.listPlatformAccounts) },
		func(api huma.API) { huma.Register(api, h.fundOp(), h.fund) },
	)
}

func (accountsAPI) listCustomerAccountsOp() huma.Operation {
	return huma.Operation{
		OperationID: "listCustomerInternalAccounts",
		Method:      http.MethodGet,
		Path:        "/customers/internal-accounts",
		Summary:     "List customer internal accounts",
		Description: "Lists the internal accounts of the platform's customers (or of one customer) with their balances, paginated.",
		Tags:        []string{accountsTag},
		Errors:      []int{http.StatusBadRequest, http.StatusUnauthorized},
	}
}

func (h accountsAPI) listCustomerAccounts(ctx context.Context, in *listCustomerAccountsInput) (*internalAccountListOutput, error) {
	return h.listCustomer(ctx, principal(ctx).PlatformID, accounts.Filter{
		CustomerID: in.CustomerID, Currency: in.Currency, Type: in.Type,
	}, in.Limit, in.Cursor)
}

// listCustomer is one page of platform pid's customer internal accounts
// matching f, for GET /customers/internal-accounts and the agent's own list.
func (h accountsAPI) listCustomer(ctx context.Context, pid string, f accounts.Filter, limit int, cursor string) (*internalAccountListOutput, error) {
	cursors := cursorsOf(h.d, "internal-accounts")
	page, err := cursors.page(limit, cursor)
	if err != nil {
		return nil, err
	}
	res, err := h.d.Accounts.ListCustomerAccounts(ctx, pid, f, page)
	if err != nil {
		return nil, apiError(err)
	}
	out := InternalAccountList{Data: internalAccountsOut(res.Accounts), HasMore: res.HasMore, TotalCount: res.Total}
	out.NextCursor = cursors.next(res.HasMore, res.Next)
	return &internalAccountListOutput{Body: out}, nil
}

func (accountsAPI) listPlatformAccountsOp() huma.Operation {
	return huma.Operation{
		OperationID: "listPlatformInternalAccounts",
		Method:      http.MethodGet,
		Path:        "/platform/internal-accounts",
		Summary:     "List platform internal accounts",
		Description: "Lists the platform's own internal accounts (one per supported currency) with their balances.",
		Tags:        []string{accountsTag},
		Errors:      []int{http.StatusBadRequest, http.StatusUnauthorized},
	}
}

func (h accountsAPI) listPlatformAccounts(ctx context.Context, in *listPlatformAccountsInput) (*platformAccountListOutput, error) {
	res, err := h.d.Accounts.ListPlatformAccounts(ctx, principal(ctx).PlatformID, in.Currency, in.Type)
	if err != nil {
		return nil, apiError(err)
	}
	return &platformAccountListOutput{Body: PlatformInternalAccountList{Data: internalAccountsOut(res)}}, nil
}

func (accountsAPI) fundOp() huma.Operation {
	return huma.Operation{
		OperationID: "sandboxFundInternalAccount",
		Method:      http.MethodPost,
		Path:        "/sandbox/internal-accounts/{accountId}/fund",
		Summary:     "Fund an internal account (sandbox)",
		Description: "Adds money to one of the platform's ACTIVE internal accounts at once, from the sandbox " +
			"funding source. Sandbox only: 403 elsewhere.",
		Tags:   []string{sandboxTag},
		Errors: []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound, http.StatusConflict},
	}
}

func (h accountsAPI) fund(ctx context.Context, in *fundInput) (*internalAccountOutput, error) {
	a, err := h.d.Accounts.Fund(ctx, principal(ctx).PlatformID, in.AccountID, in.Body.Amount, in.IdempotencyKey)
	if err != nil {
		return nil, apiError(err)
	}
	return &internalAccountOutput{Body: internalAccountOut(a)}, nil
}
