package httpapi

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"
	"github.com/shopspring/decimal"

	"github.com/corridorpay/corridor/core/lookup"
	"github.com/corridorpay/corridor/ports"
)

// ---- wire models ----

// DecimalNumber is a decimal written as a bare JSON number, digit for
// digit (never through a float).
type DecimalNumber string

// MarshalJSON writes the decimal as a number.
func (d DecimalNumber) MarshalJSON() ([]byte, error) {
	v, err := decimal.NewFromString(string(d))
	if err != nil {
		return nil, err
	}
	return []byte(v.String()), nil
}

// UnmarshalJSON reads a number (or a numeric string).
func (d *DecimalNumber) UnmarshalJSON(b []byte) error {
	var v decimal.Decimal
	if err := v.UnmarshalJSON(b); err != nil {
		return err
	}
	*d = DecimalNumber(v.String())
	return nil
}

// Schema documents a positive number.
func (DecimalNumber) Schema(huma.Registry) *huma.Schema {
	zero := 0.0
	return &huma.Schema{Type: huma.TypeNumber, ExclusiveMinimum: &zero}
}

// CurrencyPreference is one currency a receiver takes.
type CurrencyPreference struct {
	Currency              Currency      `json:"currency"`
	EstimatedExchangeRate DecimalNumber `json:"estimatedExchangeRate" doc:"Estimated units of this currency per unit of the sender's currency; the quote locks the actual rate" example:"18.2"`
	Min                   int64         `json:"min" format:"int64" exclusiveMinimum:"0" doc:"Smallest amount the receiver can be paid, in this currency's smallest unit" example:"1000"`
	Max                   int64         `json:"max" format:"int64" exclusiveMinimum:"0" doc:"Largest amount the receiver can be paid, in this currency's smallest unit" example:"500000000"`
}

// CounterpartyFieldDefinition names one piece of information about a
// party that the other side of a payment needs (a lookup's payer fields,
// an incoming payment's receiver fields).
type CounterpartyFieldDefinition struct {
	Name      string `json:"name" enum:"FULL_NAME,BIRTH_DATE,NATIONALITY,PHONE_NUMBER,EMAIL,POSTAL_ADDRESS,TAX_ID,REGISTRATION_NUMBER,USER_TYPE,COUNTRY_OF_RESIDENCE,ACCOUNT_IDENTIFIER,FI_LEGAL_ENTITY_NAME,FI_ADDRESS,PURPOSE_OF_PAYMENT,ULTIMATE_INSTITUTION_COUNTRY,IDENTIFIER,BUSINESS_TYPE,COMPANY_LEGAL_NAME,ID_TYPE,ID_NUMBER" doc:"The payer field"`
	Mandatory bool   `json:"mandatory" doc:"Whether it must be given"`
}

// ReceiverExternalAccountLookupResponse is what an external account takes
// and needs before it is paid.
type ReceiverExternalAccountLookupResponse struct {
	SupportedCurrencies     []CurrencyPreference          `json:"supportedCurrencies" doc:"Currencies the account can be paid in"`
	RequiredPayerDataFields []CounterpartyFieldDefinition `json:"requiredPayerDataFields" doc:"Payer information the receiving side requires; supply it in the quote's senderCustomerInfo"`
	LookupID                string                        `json:"lookupId" doc:"Lookup:<uuid>; pass it to the quote that follows" example:"Lookup:019542f5-b3e7-1d02-0000-000000000009"`
	AccountID               string                        `json:"accountId" doc:"The external account looked up" example:"ExternalAccount:e85dcbd6-dced-4ec4-b756-3c3a9ea3d965"`
}

// ReceiverUmaLookupResponse is what a UMA address takes and needs before
// it is paid.
type ReceiverUmaLookupResponse struct {
	SupportedCurrencies     []CurrencyPreference          `json:"supportedCurrencies" doc:"Currencies the receiver can be paid in"`
	RequiredPayerDataFields []CounterpartyFieldDefinition `json:"requiredPayerDataFields" doc:"Payer information the receiving side requires; supply it in the quote's senderCustomerInfo"`
	LookupID                string                        `json:"lookupId" doc:"Lookup:<uuid>; pass it to the quote that follows" example:"Lookup:019542f5-b3e7-1d02-0000-000000000009"`
	ReceiverUmaAddress      string                        `json:"receiverUmaAddress" doc:"The UMA address looked up" example:"$success.usd@sandbox.local"`
}

func lookupOut(l ports.Lookup) ReceiverExternalAccountLookupResponse {
	currencies, fields := lookupParts(l)
	return ReceiverExternalAccountLookupResponse{
		SupportedCurrencies: currencies, RequiredPayerDataFields: fields, LookupID: l.ID, AccountID: l.AccountID,
	}
}

func umaLookupOut(l ports.Lookup) ReceiverUmaLookupResponse {
	currencies, fields := lookupParts(l)
	return ReceiverUmaLookupResponse{
		SupportedCurrencies: currencies, RequiredPayerDataFields: fields, LookupID: l.ID, ReceiverUmaAddress: l.ReceiverUmaAddress,
	}
}

func lookupParts(l ports.Lookup) ([]CurrencyPreference, []CounterpartyFieldDefinition) {
	currencies := make([]CurrencyPreference, len(l.Currencies))
	for i, c := range l.Currencies {
		currencies[i] = CurrencyPreference{
			Currency: currencyOf(c.Currency), EstimatedExchangeRate: DecimalNumber(c.EstimatedRate), Min: c.Min, Max: c.Max,
		}
	}
	fields := make([]CounterpartyFieldDefinition, len(l.RequiredPayerData))
	for i, f := range l.RequiredPayerData {
		fields[i] = CounterpartyFieldDefinition{Name: f.Name, Mandatory: f.Mandatory}
	}
	return currencies, fields
}

// ---- operations ----

type lookupExternalAccountInput struct {
	AccountID        string `path:"accountId" doc:"ExternalAccount:<uuid>"`
	SenderUmaAddress string `query:"senderUmaAddress" maxLength:"255" doc:"UMA address of the sender, one of the platform's customers (optional if customerId is given)"`
	CustomerID       string `query:"customerId" maxLength:"255" doc:"The sending customer (optional if senderUmaAddress is given)"`
}

type lookupOutput struct {
	Body ReceiverExternalAccountLookupResponse
}

type lookupUmaInput struct {
	// The address is checked by the service (400 INVALID_UMA_ADDRESS), not
	// by the schema, so a malformed one gets the reference's code.
	ReceiverUmaAddress string `path:"receiverUmaAddress" doc:"UMA address of the receiver ($user@domain)"`
	SenderUmaAddress   string `query:"senderUmaAddress" maxLength:"255" doc:"UMA address of the sender, one of the platform's customers (optional if customerId is given)"`
	CustomerID         string `query:"customerId" maxLength:"255" doc:"The sending customer (optional if senderUmaAddress is given)"`
}

type umaLookupOutput struct {
	Body ReceiverUmaLookupResponse
}

// lookupAPI handles the receiver lookups.
type lookupAPI struct{ d Deps }

func registerLookup(api huma.API, d Deps) {
	h := lookupAPI{d}
	registerAll(api,
		func(api huma.API) { huma.Register(api, h.lookupExternalAccountOp(), h.lookupExternalAccount) },
		func(api huma.API) { huma.Register(api, h.lookupUmaOp(), h.lookupUma) },
	)
}

func (lookupAPI) lookupExternalAccountOp() huma.Operation {
	return huma.Operation{
		OperationID: "lookupExternalAccount",
		Method:      http.MethodGet,
		Path:        "/receiver/external-account/{accountId}",
		Summary:     "Look up an external account for payment",
		Description: "Tells what one of the platform's external accounts can be paid in: its currency, the estimated " +
			"rate from the sender's currency (the sending customer's first currency), the smallest and largest " +
			"amounts it can receive, and the payer information the receiving side requires. Name the sender by " +
			"customerId or senderUmaAddress (at least one). The answer is kept under lookupId for the quote that follows.",
		Tags:   []string{crossCurrencyTag},
		Errors: []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusNotFound},
	}
}

func (h lookupAPI) lookupExternalAccount(ctx context.Context, in *lookupExternalAccountInput) (*lookupOutput, error) {
	l, err := h.d.Lookup.Lookup(ctx, principal(ctx).PlatformID, lookup.Query{
		AccountID: in.AccountID, CustomerID: in.CustomerID, SenderUmaAddress: in.SenderUmaAddress,
	})
	if err != nil {
		return nil, apiError(err)
	}
	return &lookupOutput{Body: lookupOut(l)}, nil
}

func (lookupAPI) lookupUmaOp() huma.Operation {
	return huma.Operation{
		OperationID: "lookupUma",
		Method:      http.MethodGet,
		Path:        "/receiver/uma/{receiverUmaAddress}",
		Summary:     "Look up a UMA address for payment",
		Description: "Asks the UMA receiver at an address which currencies it takes: each with the estimated rate " +
			"from the sender's currency and the smallest and largest amounts it can receive, and the payer " +
			"information the receiving side requires. Name the sender by customerId or senderUmaAddress (at " +
			"least one). The answer is kept under lookupId for the quote that follows (a UMA_ADDRESS destination " +
			"requires it). In the sandbox the receivers are $success.usd, $success.eur, $success.mxn, " +
			"$pending.long.usd and $fail.compliance.usd at the sandbox UMA domain.",
		Tags:   []string{crossCurrencyTag},
		Errors: []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusNotFound},
	}
}

func (h lookupAPI) lookupUma(ctx context.Context, in *lookupUmaInput) (*umaLookupOutput, error) {
	l, err := h.d.Lookup.LookupUma(ctx, principal(ctx).PlatformID, lookup.UmaQuery{
		ReceiverUmaAddress: in.ReceiverUmaAddress, CustomerID: in.CustomerID, SenderUmaAddress: in.SenderUmaAddress,
	})
	if err != nil {
		return nil, apiError(err)
	}
	return &umaLookupOutput{Body: umaLookupOut(l)}, nil
}

// counterpartyDefinitions are the wire form of fields (never null).
func counterpartyDefinitions(fields []ports.CounterpartyField) []CounterpartyFieldDefinition {
	out := make([]CounterpartyFieldDefinition, len(fields))
	for i, f := range fields {
		out[i] = CounterpartyFieldDefinition{Name: f.Name, Mandatory: f.Mandatory}
	}
	return out
}
