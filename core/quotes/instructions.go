package quotes

import (
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/big"
	"strconv"
	"time"

	"github.com/corridorpay/corridor/core/external"
	"github.com/corridorpay/corridor/ports"
)

// Real-time funding: how the payer of a REALTIME_FUNDING quote sends the
// money, per sending currency (and network, for crypto). Each method names
// the rail the funds arrive on: its settlement account is the source of the
// quote's ledger holds. Every value is derived from the quote id (and the
// transaction's reference), so the instructions are stable for the quote
// and need no stored secrets; a live deployment's adapter would hand out
// the provider's virtual accounts instead.
type fundingMethod struct {
	rail string
	// build writes the accountOrWalletInfo of the instruction.
	build func(q ports.Quote, reference string) map[string]any
}

// Sandbox receiving bank of USD funding (a valid ABA routing number).
const (
	sandboxBankName      = "Corridor Sandbox Bank"
	sandboxRoutingNumber = "011000015"
)

// fundingNetworks are the chains a USDC quote can be funded on.
var fundingNetworks = map[string]string{
	"SOLANA": "SOLANA_WALLET", "BASE": "BASE_WALLET", "POLYGON": "POLYGON_WALLET", "ETHEREUM": "ETHEREUM_WALLET",
}

// fundingFor is the funding method of a currency and network, or an error
// naming the field that cannot be served.
func fundingFor(currency, network string) (fundingMethod, string, string) {
	switch currency {
	case "USD":
		if network != "" {
			return fundingMethod{}, "source.cryptoNetwork", "applies to crypto currencies only"
		}
		return fundingMethod{rail: "RTP", build: usdInstructions}, "", ""
	case "BTC":
		switch network {
		case "", "SPARK":
			return fundingMethod{rail: "SPARK", build: sparkInstructions}, "", ""
		case "LIGHTNING":
			return fundingMethod{rail: "LIGHTNING", build: lightningInstructions}, "", ""
		}
		return fundingMethod{}, "source.cryptoNetwork", "BTC is funded on SPARK or LIGHTNING"
	case "USDC":
		typ, ok := fundingNetworks[network]
		if !ok {
			return fundingMethod{}, "source.cryptoNetwork", "is required for USDC: one of SOLANA, BASE, POLYGON, ETHEREUM"
		}
		return fundingMethod{rail: network, build: walletInstructions(typ, network)}, "", ""
	}
	return fundingMethod{}, "source.currency", "real-time funding is available in USD, BTC and USDC"
}

// fundingRail is the rail a REALTIME_FUNDING quote's funds arrive on.
func fundingRail(q ports.Quote) string {
	m, _, _ := fundingFor(q.SendingCurrency, q.CryptoNetwork)
	return m.rail
}

func seed(q ports.Quote, purpose string) []byte {
	s := sha256.Sum256([]byte(purpose + "|" + q.ID))
	return s[:]
}

func usdInstructions(q ports.Quote, reference string) map[string]any {
	// A 12-digit virtual account number per quote.
	n := new(big.Int).SetBytes(seed(q, "usd-account")[:8])
	number := fmt.Sprintf("%012s", new(big.Int).Mod(n, big.NewInt(1_000_000_000_000)).String())
	return map[string]any{
		"accountType":   "USD_ACCOUNT",
		"paymentRails":  []any{"RTP", "FEDNOW"},
		"accountNumber": number,
		"routingNumber": sandboxRoutingNumber,
		"bankName":      sandboxBankName,
		"reference":     reference,
	}
}

func sparkInstructions(q ports.Quote, _ string) map[string]any {
	return map[string]any{
		"accountType": "SPARK_WALLET",
		"assetType":   "BTC",
		"address":     sparkAddress(q),
		"invoice":     invoice(q),
	}
}

func lightningInstructions(q ports.Quote, _ string) map[string]any {
	return map[string]any{"accountType": "LIGHTNING", "invoice": invoice(q)}
}

func walletInstructions(accountType, network string) func(ports.Quote, string) map[string]any {
	return func(q ports.Quote, _ string) map[string]any {
		addr := "0x" + hex.EncodeToString(seed(q, network)[:20])
		if network == "SOLANA" {
			addr = external.Base58Encode(seed(q, network))
		}
		return map[string]any{"accountType": accountType, "address": addr, "assetType": "USDC"}
	}
}

// sparkAddress is a regtest Spark address (bech32m) whose identity key is
// derived from the quote.
func sparkAddress(q ports.Quote) string {
	payload := append([]byte{0x0a, 0x21, 0x02}, seed(q, "spark")...)
	return external.Bech32Encode("sparkrt", external.Bits5(payload), external.Bech32m)
}

// invoice is a regtest BOLT 11 invoice for the quote's sending amount (in
// satoshis): timestamp, payment hash and a signature-sized tail derived
// from the quote. It is shaped and checksummed like an invoice; the sandbox
// pays it by POST /sandbox/send.
func invoice(q ports.Quote) string {
	hrp := "lnbcrt" + strconv.FormatInt(q.TotalSendingAmount*10, 10) + "n" // 1 sat = 10 nano-BTC
	var data []byte
	ts := q.CreatedAt.Unix()
	for i := 6; i >= 0; i-- {
		data = append(data, byte(ts>>(5*uint(i))&31))
	}
	hash := external.Bits5(seed(q, "payment-hash"))                // 52 groups
	data = append(data, 1, byte(len(hash)>>5), byte(len(hash)&31)) // tag p, length
	data = append(data, hash...)
	sig := sha512.Sum512([]byte("signature|" + q.ID))
	sigBytes := append(sig[:], seed(q, "signature-tail")[:1]...) // 65 bytes = 104 groups
	data = append(data, external.Bits5(sigBytes)...)
	return external.Bech32Encode(hrp, data, external.Bech32)
}

// payloadToSign is what an embedded wallet's holder authorises when it
// executes the quote: canonical JSON (fixed field order, no spaces) of the
// quote's identity, amounts, currencies, destination and expiry.
func payloadToSign(q ports.Quote) string {
	type dest struct {
		DestinationType string `json:"destinationType"`
		AccountID       string `json:"accountId,omitempty"`
		UmaAddress      string `json:"umaAddress,omitempty"`
	}
	b, err := json.Marshal(struct {
		QuoteID              string `json:"quoteId"`
		TransactionID        string `json:"transactionId"`
		SourceAccountID      string `json:"sourceAccountId"`
		Destination          dest   `json:"destination"`
		SendingCurrency      string `json:"sendingCurrency"`
		ReceivingCurrency    string `json:"receivingCurrency"`
		TotalSendingAmount   int64  `json:"totalSendingAmount"`
		TotalReceivingAmount int64  `json:"totalReceivingAmount"`
		FeesIncluded         int64  `json:"feesIncluded"`
		ExchangeRate         string `json:"exchangeRate"`
		ExpiresAt            string `json:"expiresAt"`
	}{
		QuoteID: q.ID, TransactionID: q.TransactionID, SourceAccountID: q.SourceAccountID,
		Destination:     dest{DestinationType: q.DestinationType, AccountID: q.DestinationAccountID, UmaAddress: q.DestinationUmaAddress},
		SendingCurrency: q.SendingCurrency, ReceivingCurrency: q.ReceivingCurrency,
		TotalSendingAmount: q.TotalSendingAmount, TotalReceivingAmount: q.TotalReceivingAmount,
		FeesIncluded: q.FeesIncluded, ExchangeRate: q.ExchangeRate,
		ExpiresAt: q.ExpiresAt.UTC().Format(time.RFC3339Nano),
	})
	if err != nil {
		// Strings and integers always marshal.
		panic("quotes: payloadToSign: " + err.Error())
	}
	return string(b)
}

// storedPayload is the payloadToSign recorded in the quote's instructions.
func storedPayload(q ports.Quote) string {
	for _, pi := range q.PaymentInstructions {
		if p, ok := pi.Info["payloadToSign"].(string); ok {
			return p
		}
	}
	return ""
}
