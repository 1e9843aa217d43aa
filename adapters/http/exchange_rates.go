package httpapi

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/corridorpay/corridor/core/fx"
)

// ---- wire models ----

// ExchangeRateFees are an indication's fees, in the sending currency's
// smallest unit.
type ExchangeRateFees struct {
	Fixed int64 `json:"fixed" format:"int64" minimum:"0" doc:"Fixed fees in the smallest unit of the sending currency" example:"100"`
	Total int64 `json:"total" format:"int64" minimum:"0" doc:"Fixed and variable fees at sendingAmount, in the smallest unit of the sending currency" example:"150"`
}

// ExchangeRate is the indicative price of one currency corridor.
type ExchangeRate struct {
	SourceCurrency         Currency         `json:"sourceCurrency"`
	SendingAmount          int64            `json:"sendingAmount" format:"int64" minimum:"0" doc:"The sending amount priced, in the smallest unit of the source currency (the request's, else 10000)" example:"10000"`
	MinSendingAmount       int64            `json:"minSendingAmount" format:"int64" minimum:"0" doc:"Smallest sending amount the corridor takes (what delivers its minimum), in the smallest unit of the source currency" example:"100"`
	MaxSendingAmount       int64            `json:"maxSendingAmount" format:"int64" minimum:"0" doc:"Largest sending amount a quote with the sending side locked takes (one unit more would deliver above the corridor maximum), in the smallest unit of the source currency" example:"10000000"`
	DestinationCurrency    Currency         `json:"destinationCurrency"`
	DestinationPaymentRail string           `json:"destinationPaymentRail" enum:"ACH,ACH_COLOMBIA,BANK_TRANSFER,BRE_B,CIPS,FAST,FASTER_PAYMENTS,FEDNOW,INSTAPAY,MOBILE_MONEY,NEFT,PAYNOW,PESONET,PIX,RTGS,RTP,SEPA,SEPA_INSTANT,SPEI,SWIFT,UNIONPAY,UPI,WIRE" doc:"The destination currency's default payout rail (bank rails only: corridors paid out on a chain are priced by /quotes)" example:"UPI"`
	ReceivingAmount        int64            `json:"receivingAmount" format:"int64" minimum:"0" doc:"What sendingAmount delivers, in the smallest unit of the destination currency; 0 when sendingAmount is outside the corridor's limits" example:"812502"`
	ExchangeRate           DecimalNumber    `json:"exchangeRate" doc:"Sending currency units per destination currency unit, fees' spread included (as a quote's exchangeRate)" example:"0.012182"`
	Fees                   ExchangeRateFees `json:"fees"`
	UpdatedAt              time.Time        `json:"updatedAt" doc:"When the rate was last refreshed"`
}

// ExchangeRateListResponse is the list of indications.
type ExchangeRateListResponse struct {
	Data []ExchangeRate `json:"data" doc:"Exchange rates matching the filters"`
}

func exchangeRateOut(ind fx.Indication) ExchangeRate {
	return ExchangeRate{
		SourceCurrency:         currencyOf(ind.Sending),
		SendingAmount:          ind.SendingAmount,
		MinSendingAmount:       ind.MinSending,
		MaxSendingAmount:       ind.MaxSending,
		DestinationCurrency:    currencyOf(ind.Receiving),
		DestinationPaymentRail: ind.Rail,
		ReceivingAmount:        ind.ReceivingAmount,
		ExchangeRate:           DecimalNumber(ind.SendingPerReceiving),
		Fees:                   ExchangeRateFees{Fixed: ind.FixedFees, Total: ind.TotalFees},
		UpdatedAt:              ind.UpdatedAt.UTC(),
	}
}

// bankRails are the payment rails an exchange rate can name (the
// reference's PaymentRail values). Corridors paid out on a chain or over
// Lightning/Spark are priced by /quotes and not listed here.
var bankRails = map[string]bool{}

func init() {
	for _, r := range strings.Split(bankRailNames, ",") {
		bankRails[r] = true
	}
}

const bankRailNames = "ACH,ACH_COLOMBIA,BANK_TRANSFER,BRE_B,CIPS,FAST,FASTER_PAYMENTS,FEDNOW,INSTAPAY,MOBILE_MONEY," +
	"NEFT,PAYNOW,PESONET,PIX,RTGS,RTP,SEPA,SEPA_INSTANT,SPEI,SWIFT,UNIONPAY,UPI,WIRE"

// ---- operations ----

type getExchangeRatesInput struct {
	SourceCurrency      string   `query:"sourceCurrency" maxLength:"8" doc:"Only corridors from this currency (e.g. USD)"`
	DestinationCurrency []string `query:"destinationCurrency,explode" doc:"Only corridors into these currencies; repeat the parameter for several (destinationCurrency=INR&destinationCurrency=GBP)"`
	SendingAmount       int64    `query:"sendingAmount" minimum:"0" default:"10000" doc:"Amount to price, in the smallest unit of the source currency"`
}

type exchangeRatesOutput struct {
	Body ExchangeRateListResponse
}

// exchangeRatesAPI handles the exchange-rate board.
type exchangeRatesAPI struct{ d Deps }

func registerExchangeRates(api huma.API, d Deps) {
	h := exchangeRatesAPI{d}
	registerAll(api,
		func(api huma.API) { huma.Register(api, h.getExchangeRatesOp(), h.getExchangeRates) },
	)
}

func (exchangeRatesAPI) getExchangeRatesOp() huma.Operation {
	return huma.Operation{
		OperationID: "getExchangeRates",
		Method:      http.MethodGet,
		Path:        "/exchange-rates",
		Summary:     "Get exchange rates",
		Description: "Indicative rates for the currency corridors, filtered by source and destination currency, " +
			"with the fees and receiving amount at sendingAmount and the sending amounts each corridor takes. " +
			"A quote locks the actual rate.",
		Tags:   []string{"Exchange Rates"},
		Errors: []int{http.StatusBadRequest, http.StatusUnauthorized},
	}
}

func (h exchangeRatesAPI) getExchangeRates(ctx context.Context, in *getExchangeRatesInput) (*exchangeRatesOutput, error) {
	q := fx.BoardQuery{Sending: in.SourceCurrency, Amount: in.SendingAmount}
	for _, v := range in.DestinationCurrency {
		// Comma-separated values are accepted too.
		for _, code := range strings.Split(v, ",") {
			if code = strings.TrimSpace(code); code != "" {
				q.Receiving = append(q.Receiving, code)
			}
		}
	}
	rows, err := h.d.ExchangeRates.List(ctx, q)
	if err != nil {
		return nil, apiError(err)
	}
	out := &exchangeRatesOutput{Body: ExchangeRateListResponse{Data: make([]ExchangeRate, 0, len(rows))}}
	for _, r := range rows {
		if bankRails[r.Rail] {
			out.Body.Data = append(out.Body.Data, exchangeRateOut(r))
		}
	}
	return out, nil
}
