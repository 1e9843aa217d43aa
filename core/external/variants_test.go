package external_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/core/external"
	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit/externalfixture"
)

var today = time.Date(2026, 3, 4, 0, 0, 0, 0, time.UTC)

// fieldsOf returns the bad fields a validation error names.
func fieldsOf(t *testing.T, err error) []string {
	t.Helper()
	require.Error(t, err)
	f, ok := fault.As(err)
	require.Truef(t, ok, "%v is a fault", err)
	assert.Equal(t, fault.KindInvalid, f.Kind)
	assert.Equal(t, "INVALID_INPUT", f.Code)
	var out []string
	for _, fe := range f.Fields {
		out = append(out, fe.Field)
	}
	return out
}

func TestEveryVariantHasAFixture(t *testing.T) {
	assert.ElementsMatch(t, external.AccountTypes(), externalfixture.Types())
	for _, must := range []string{"USD_ACCOUNT", "AED_ACCOUNT", "EUR_ACCOUNT", "MXN_ACCOUNT", "BRL_ACCOUNT", "GBP_ACCOUNT",
		"INR_ACCOUNT", "NGN_ACCOUNT", "CAD_ACCOUNT", "SPARK_WALLET", "LIGHTNING", "SOLANA_WALLET", "BASE_WALLET", "POLYGON_WALLET"} {
		assert.Contains(t, external.AccountTypes(), must)
	}
}

func TestValidFixtures(t *testing.T) {
	shapes := map[string][]string{
		"BRL_ACCOUNT":   {"EMAIL", "PHONE", "CPF", "RANDOM"},
		"LIGHTNING":     {"address", "invoice", "bolt12"},
		"INR_ACCOUNT":   {"", "UPI"},
		"SOLANA_WALLET": {""},
	}
	for _, typ := range externalfixture.Types() {
		variants := shapes[typ]
		if variants == nil {
			variants = []string{""}
		}
		for _, v := range variants {
			suffixes := []string{"789", "002", "005", "103"}
			for _, s := range suffixes {
				if skipSuffix(typ, v, s) {
					continue
				}
				info := externalfixture.InfoVariant(typ, s, v)
				assert.NoError(t, external.Validate(externalfixture.Currency[typ], info, today), "%s %s %s: %+v", typ, v, s, info)
				assert.Equal(t, s, external.SandboxSuffix(info), "%s %s", typ, v)
			}
		}
	}
}

// skipSuffix: alphabets that cannot end in a suffix (bech32 has no 1,
// base58 no 0).
func skipSuffix(typ, variant, s string) bool {
	bech32 := typ == "SPARK_WALLET" || (typ == "LIGHTNING" && variant != "address")
	return (bech32 && strings.Contains(s, "1")) || (typ == "SOLANA_WALLET" && strings.Contains(s, "0"))
}

func TestValidWithBusinessBeneficiaryAndOptionalFields(t *testing.T) {
	info := externalfixture.Info("USD_ACCOUNT", "")
	info.IntermediaryBankName = "Correspondent Bank"
	info.IntermediaryRoutingNumber = "011000015"
	info.FiToFiInformation = "/BNF/Invoice 7"
	info.Beneficiary = &ports.Beneficiary{BeneficiaryType: "BUSINESS", LegalName: "Acme Ltd", RegistrationNumber: "R-1",
		TaxID: "47-1234567", Email: "pay@acme.example", PhoneNumber: "+14155550100", CountryOfResidence: "US"}
	assert.NoError(t, external.Validate("USD", info, today))

	w := externalfixture.Info("SOLANA_WALLET", "")
	w.VaspName = "Example Exchange"
	w.Beneficiary = &ports.Beneficiary{BeneficiaryType: "INDIVIDUAL", FullName: "Ana Silva", CountryOfResidence: "BR"}
	assert.NoError(t, external.Validate("USDC", w, today))

	c := externalfixture.Info("CAD_ACCOUNT", "")
	c.Beneficiary.RegistrationNumber = "123"
	assert.NoError(t, external.Validate("CAD", c, today))

	s := externalfixture.Info("SWIFT_ACCOUNT", "")
	s.AccountNumber, s.IBAN = "", "GB82WEST12345698765432"
	assert.NoError(t, external.Validate("GBP", s, today))
}

func TestInvalidFixtures(t *testing.T) {
	type mut func(i *ports.AccountInfo)
	cases := []struct {
		name     string
		typ      string
		currency string // "" = the fixture's
		mutate   mut
		field    string
	}{
		{"usd routing checksum", "USD_ACCOUNT", "", func(i *ports.AccountInfo) { i.RoutingNumber = "021000022" }, "accountInfo.routingNumber"},
		{"usd routing shape", "USD_ACCOUNT", "", func(i *ports.AccountInfo) { i.RoutingNumber = "02100002" }, "accountInfo.routingNumber"},
		{"usd routing missing", "USD_ACCOUNT", "", func(i *ports.AccountInfo) { i.RoutingNumber = "" }, "accountInfo.routingNumber"},
		{"usd account letters", "USD_ACCOUNT", "", func(i *ports.AccountInfo) { i.AccountNumber = "12AB5678" }, "accountInfo.accountNumber"},
		{"usd account missing", "USD_ACCOUNT", "", func(i *ports.AccountInfo) { i.AccountNumber = "" }, "accountInfo.accountNumber"},
		{"usd bank account type", "USD_ACCOUNT", "", func(i *ports.AccountInfo) { i.BankAccountType = "BROKERAGE" }, "accountInfo.bankAccountType"},
		{"usd intermediary checksum", "USD_ACCOUNT", "", func(i *ports.AccountInfo) { i.IntermediaryRoutingNumber = "011000016" }, "accountInfo.intermediaryRoutingNumber"},
		{"usd fi to fi too long", "USD_ACCOUNT", "", func(i *ports.AccountInfo) { i.FiToFiInformation = strings.Repeat("x", 211) }, "accountInfo.fiToFiInformation"},
		{"usd iban is another variant's", "USD_ACCOUNT", "", func(i *ports.AccountInfo) { i.IBAN = "DE89370400440532013000" }, "accountInfo.iban"},
		{"usd in eur", "USD_ACCOUNT", "EUR", func(*ports.AccountInfo) {}, "currency"},
		{"usd unknown currency", "USD_ACCOUNT", "XYZ", func(*ports.AccountInfo) {}, "currency"},
		{"usd no beneficiary", "USD_ACCOUNT", "", func(i *ports.AccountInfo) { i.Beneficiary = nil }, "accountInfo.beneficiary"},
		{"usd beneficiary no name", "USD_ACCOUNT", "", func(i *ports.AccountInfo) { i.Beneficiary.FullName = "" }, "accountInfo.beneficiary.fullName"},
		{"usd beneficiary type", "USD_ACCOUNT", "", func(i *ports.AccountInfo) { i.Beneficiary.BeneficiaryType = "TRUST" }, "accountInfo.beneficiary.beneficiaryType"},
		{"usd beneficiary birth date", "USD_ACCOUNT", "", func(i *ports.AccountInfo) { i.Beneficiary.BirthDate = "1990-02-30" }, "accountInfo.beneficiary.birthDate"},
		{"usd beneficiary born tomorrow", "USD_ACCOUNT", "", func(i *ports.AccountInfo) { i.Beneficiary.BirthDate = "2026-03-05" }, "accountInfo.beneficiary.birthDate"},
		{"usd beneficiary nationality", "USD_ACCOUNT", "", func(i *ports.AccountInfo) { i.Beneficiary.Nationality = "XX" }, "accountInfo.beneficiary.nationality"},
		{"usd beneficiary email", "USD_ACCOUNT", "", func(i *ports.AccountInfo) { i.Beneficiary.Email = "not-an-email" }, "accountInfo.beneficiary.email"},
		{"usd beneficiary phone", "USD_ACCOUNT", "", func(i *ports.AccountInfo) { i.Beneficiary.PhoneNumber = "4155550100" }, "accountInfo.beneficiary.phoneNumber"},
		{"usd beneficiary address postal code", "USD_ACCOUNT", "", func(i *ports.AccountInfo) { i.Beneficiary.Address.PostalCode = "" }, "accountInfo.beneficiary.address.postalCode"},
		{"usd beneficiary address country", "USD_ACCOUNT", "", func(i *ports.AccountInfo) { i.Beneficiary.Address.Country = "USA" }, "accountInfo.beneficiary.address.country"},
		{"usd individual with legal name", "USD_ACCOUNT", "", func(i *ports.AccountInfo) { i.Beneficiary.LegalName = "Acme" }, "accountInfo.beneficiary.legalName"},
		{"usd business without legal name", "USD_ACCOUNT", "", func(i *ports.AccountInfo) {
			i.Beneficiary = &ports.Beneficiary{BeneficiaryType: "BUSINESS"}
		}, "accountInfo.beneficiary.legalName"},
		{"usd business with birth date", "USD_ACCOUNT", "", func(i *ports.AccountInfo) {
			i.Beneficiary = &ports.Beneficiary{BeneficiaryType: "BUSINESS", LegalName: "Acme", BirthDate: "1990-01-01"}
		}, "accountInfo.beneficiary.birthDate"},
		{"aed iban shape", "AED_ACCOUNT", "", func(i *ports.AccountInfo) { i.IBAN = "DE89370400440532013000" }, "accountInfo.iban"},
		{"aed iban check digits", "AED_ACCOUNT", "", func(i *ports.AccountInfo) { i.IBAN = "AE070331234567890123457" }, "accountInfo.iban"},
		{"aed swift", "AED_ACCOUNT", "", func(i *ports.AccountInfo) { i.SwiftCode = "EBIL" }, "accountInfo.swiftCode"},
		{"aed individual without address", "AED_ACCOUNT", "", func(i *ports.AccountInfo) { i.Beneficiary.Address = nil }, "accountInfo.beneficiary.address"},
		{"eur iban mod 97", "EUR_ACCOUNT", "", func(i *ports.AccountInfo) { i.IBAN = "DE89370400440532013001" }, "accountInfo.iban"},
		{"eur iban length", "EUR_ACCOUNT", "", func(i *ports.AccountInfo) { i.IBAN = "DE8937040044053201300099" }, "accountInfo.iban"},
		{"eur iban outside sepa", "EUR_ACCOUNT", "", func(i *ports.AccountInfo) { i.IBAN = "AE070331234567890123456" }, "accountInfo.iban"},
		{"eur bic country", "EUR_ACCOUNT", "", func(i *ports.AccountInfo) { i.SwiftCode = "COBAXXFF" }, "accountInfo.swiftCode"},
		{"eur individual without residence", "EUR_ACCOUNT", "", func(i *ports.AccountInfo) { i.Beneficiary.CountryOfResidence = "" }, "accountInfo.beneficiary.countryOfResidence"},
		{"mxn clabe check digit", "MXN_ACCOUNT", "", func(i *ports.AccountInfo) { i.ClabeNumber = "032180000118359718" }, "accountInfo.clabeNumber"},
		{"mxn clabe length", "MXN_ACCOUNT", "", func(i *ports.AccountInfo) { i.ClabeNumber = "03218000011835971" }, "accountInfo.clabeNumber"},
		{"mxn in usd", "MXN_ACCOUNT", "USD", func(*ports.AccountInfo) {}, "currency"},
		{"brl email key", "BRL_ACCOUNT", "", func(i *ports.AccountInfo) { i.PixKey = "not an email" }, "accountInfo.pixKey"},
		{"brl cpf key check digits", "BRL_ACCOUNT", "", func(i *ports.AccountInfo) { i.PixKeyType, i.PixKey = "CPF", "52998224726" }, "accountInfo.pixKey"},
		{"brl cnpj key", "BRL_ACCOUNT", "", func(i *ports.AccountInfo) { i.PixKeyType, i.PixKey = "CNPJ", "11222333000180" }, "accountInfo.pixKey"},
		{"brl phone key not brazilian", "BRL_ACCOUNT", "", func(i *ports.AccountInfo) { i.PixKeyType, i.PixKey = "PHONE", "+14155550100" }, "accountInfo.pixKey"},
		{"brl random key", "BRL_ACCOUNT", "", func(i *ports.AccountInfo) { i.PixKeyType, i.PixKey = "RANDOM", "not-a-uuid" }, "accountInfo.pixKey"},
		{"brl key type", "BRL_ACCOUNT", "", func(i *ports.AccountInfo) { i.PixKeyType = "IBAN" }, "accountInfo.pixKeyType"},
		{"brl tax id", "BRL_ACCOUNT", "", func(i *ports.AccountInfo) { i.TaxID = "52998224726" }, "accountInfo.taxId"},
		{"brl tax id length", "BRL_ACCOUNT", "", func(i *ports.AccountInfo) { i.TaxID = "123456789012" }, "accountInfo.taxId"},
		{"gbp sort code", "GBP_ACCOUNT", "", func(i *ports.AccountInfo) { i.SortCode = "04-00-04" }, "accountInfo.sortCode"},
		{"gbp account number", "GBP_ACCOUNT", "", func(i *ports.AccountInfo) { i.AccountNumber = "1234567" }, "accountInfo.accountNumber"},
		{"inr nothing to pay to", "INR_ACCOUNT", "", func(i *ports.AccountInfo) { i.AccountNumber, i.IFSC, i.Rail = "", "", "" }, "accountInfo.vpa"},
		{"inr ifsc", "INR_ACCOUNT", "", func(i *ports.AccountInfo) { i.IFSC = "HDFC1001234" }, "accountInfo.ifsc"},
		{"inr vpa", "INR_ACCOUNT", "", func(i *ports.AccountInfo) { i.VPA = "ana@up-i" }, "accountInfo.vpa"},
		{"inr upi without vpa", "INR_ACCOUNT", "", func(i *ports.AccountInfo) { i.Rail = "UPI" }, "accountInfo.rail"},
		{"inr unknown rail", "INR_ACCOUNT", "", func(i *ports.AccountInfo) { i.Rail = "IMPS" }, "accountInfo.rail"},
		{"ngn account number", "NGN_ACCOUNT", "", func(i *ports.AccountInfo) { i.AccountNumber = "123456789" }, "accountInfo.accountNumber"},
		{"ngn bank name", "NGN_ACCOUNT", "", func(i *ports.AccountInfo) { i.BankName = "" }, "accountInfo.bankName"},
		{"cad bank code", "CAD_ACCOUNT", "", func(i *ports.AccountInfo) { i.BankCode = "01" }, "accountInfo.bankCode"},
		{"cad branch code", "CAD_ACCOUNT", "", func(i *ports.AccountInfo) { i.BranchCode = "0001" }, "accountInfo.branchCode"},
		{"cad account number", "CAD_ACCOUNT", "", func(i *ports.AccountInfo) { i.AccountNumber = "123456" }, "accountInfo.accountNumber"},
		{"swift country", "SWIFT_ACCOUNT", "", func(i *ports.AccountInfo) { i.Country = "XX" }, "accountInfo.country"},
		{"swift bic", "SWIFT_ACCOUNT", "", func(i *ports.AccountInfo) { i.SwiftCode = "" }, "accountInfo.swiftCode"},
		{"swift no account", "SWIFT_ACCOUNT", "", func(i *ports.AccountInfo) { i.AccountNumber = "" }, "accountInfo.iban"},
		{"swift iban", "SWIFT_ACCOUNT", "", func(i *ports.AccountInfo) { i.IBAN = "GB82WEST12345698765433" }, "accountInfo.iban"},
		{"swift crypto currency", "SWIFT_ACCOUNT", "USDC", func(*ports.AccountInfo) {}, "currency"},
		{"spark checksum", "SPARK_WALLET", "", func(i *ports.AccountInfo) { i.Address = i.Address[:len(i.Address)-1] + "q" }, "accountInfo.address"},
		{"spark bitcoin address", "SPARK_WALLET", "", func(i *ports.AccountInfo) { i.Address = "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq" }, "accountInfo.address"},
		{"spark in usdc", "SPARK_WALLET", "USDC", func(*ports.AccountInfo) {}, "currency"},
		{"spark missing address", "SPARK_WALLET", "", func(i *ports.AccountInfo) { i.Address = "" }, "accountInfo.address"},
		{"wallet individual without residence", "SPARK_WALLET", "", func(i *ports.AccountInfo) {
			i.Beneficiary = &ports.Beneficiary{BeneficiaryType: "INDIVIDUAL", FullName: "Ana"}
		}, "accountInfo.beneficiary.countryOfResidence"},
		{"wallet individual with birth date", "BASE_WALLET", "", func(i *ports.AccountInfo) {
			i.Beneficiary = &ports.Beneficiary{BeneficiaryType: "INDIVIDUAL", FullName: "Ana", CountryOfResidence: "BR", BirthDate: "1990-01-01"}
		}, "accountInfo.beneficiary.birthDate"},
		{"lightning nothing", "LIGHTNING", "", func(i *ports.AccountInfo) { i.LightningAddress = "" }, "accountInfo.invoice"},
		{"lightning two destinations", "LIGHTNING", "", func(i *ports.AccountInfo) {
			i.Invoice = externalfixture.Bolt11("789")
		}, "accountInfo.lightningAddress"},
		{"lightning address", "LIGHTNING", "", func(i *ports.AccountInfo) { i.LightningAddress = "ana" }, "accountInfo.lightningAddress"},
		{"lightning invoice checksum", "LIGHTNING", "", func(i *ports.AccountInfo) {
			inv := externalfixture.Bolt11("789")
			i.LightningAddress, i.Invoice = "", inv[:len(inv)-1]+"8"
		}, "accountInfo.invoice"},
		{"lightning bolt12", "LIGHTNING", "", func(i *ports.AccountInfo) { i.LightningAddress, i.Bolt12 = "", "lnbc1xyz" }, "accountInfo.bolt12"},
		{"lightning beneficiary", "LIGHTNING", "", func(i *ports.AccountInfo) {
			i.Beneficiary = &ports.Beneficiary{BeneficiaryType: "INDIVIDUAL", FullName: "Ana", CountryOfResidence: "BR"}
		}, "accountInfo.beneficiary"},
		{"solana not base58", "SOLANA_WALLET", "", func(i *ports.AccountInfo) { i.Address = "0x52908400098527886e0f7030069857d2e4169789" }, "accountInfo.address"},
		{"solana wrong length", "SOLANA_WALLET", "", func(i *ports.AccountInfo) { i.Address = i.Address[:30] }, "accountInfo.address"},
		{"solana in btc", "SOLANA_WALLET", "BTC", func(*ports.AccountInfo) {}, "currency"},
		{"base not hex", "BASE_WALLET", "", func(i *ports.AccountInfo) { i.Address = "0x52908400098527886e0f7030069857d2e416978g" }, "accountInfo.address"},
		{"base eip55", "BASE_WALLET", "", func(i *ports.AccountInfo) { i.Address = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD" }, "accountInfo.address"},
		{"base solana address", "BASE_WALLET", "", func(i *ports.AccountInfo) { i.Address = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA" }, "accountInfo.address"},
		{"polygon short", "POLYGON_WALLET", "", func(i *ports.AccountInfo) { i.Address = "0x1234" }, "accountInfo.address"},
		{"polygon with iban", "POLYGON_WALLET", "", func(i *ports.AccountInfo) { i.IBAN = "DE89370400440532013000" }, "accountInfo.iban"},
		{"ethereum zero address", "ETHEREUM_WALLET", "", func(i *ports.AccountInfo) { i.Address = "0x" + strings.Repeat("0", 40) }, "accountInfo.address"},
	}
	seen := map[string]bool{}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			seen[c.typ] = true
			info := externalfixture.Info(c.typ, "")
			c.mutate(&info)
			cur := c.currency
			if cur == "" {
				cur = externalfixture.Currency[c.typ]
			}
			assert.Contains(t, fieldsOf(t, external.Validate(cur, info, today)), c.field)
		})
	}
	for _, typ := range external.AccountTypes() {
		assert.Truef(t, seen[typ], "no invalid fixture for %s", typ)
	}
}

func TestValidateUnknownTypeAndManyErrors(t *testing.T) {
	assert.Equal(t, []string{"accountInfo.accountType"}, fieldsOf(t, external.Validate("USD", ports.AccountInfo{AccountType: "ZZZ_ACCOUNT"}, today)))
	assert.Equal(t, []string{"accountInfo.accountType"}, fieldsOf(t, external.Validate("USD", ports.AccountInfo{}, today)))
	// Every bad field is named, not just the first.
	info := externalfixture.Info("USD_ACCOUNT", "")
	info.RoutingNumber, info.AccountNumber, info.Beneficiary.FullName = "021000022", "x", ""
	got := fieldsOf(t, external.Validate("", info, today))
	for _, f := range []string{"currency", "accountInfo.routingNumber", "accountInfo.accountNumber", "accountInfo.beneficiary.fullName"} {
		assert.Contains(t, got, f)
	}
}

func TestPaymentRails(t *testing.T) {
	assert.Equal(t, []string{"ACH", "WIRE", "RTP", "FEDNOW"}, external.PaymentRails(externalfixture.Info("USD_ACCOUNT", "")))
	assert.Equal(t, []string{"SEPA", "SEPA_INSTANT"}, external.PaymentRails(externalfixture.Info("EUR_ACCOUNT", "")))
	assert.Equal(t, []string{"SPEI"}, external.PaymentRails(externalfixture.Info("MXN_ACCOUNT", "")))
	assert.Equal(t, []string{"PIX"}, external.PaymentRails(externalfixture.Info("BRL_ACCOUNT", "")))
	assert.Equal(t, []string{"NEFT", "RTGS"}, external.PaymentRails(externalfixture.Info("INR_ACCOUNT", "")))
	assert.Equal(t, []string{"UPI"}, external.PaymentRails(externalfixture.InfoVariant("INR_ACCOUNT", "", "UPI")))
	assert.Empty(t, external.PaymentRails(externalfixture.Info("SPARK_WALLET", "")))
	for _, v := range external.Variants() {
		assert.Equal(t, v.Wallet, len(v.Rails) == 0, v.AccountType)
		assert.NotEmpty(t, v.Currencies, v.AccountType)
		assert.NotEmpty(t, v.Primary, v.AccountType)
		for _, p := range v.Primary {
			assert.Truef(t, slices.ContainsFunc(v.Fields, func(f external.Field) bool { return f.Name == p }), "%s primary %s", v.AccountType, p)
		}
	}
}

func TestPrimaryIdentifierAndSandboxSuffix(t *testing.T) {
	cases := []struct {
		info   ports.AccountInfo
		id     string
		suffix string
	}{
		{ports.AccountInfo{AccountType: "USD_ACCOUNT", AccountNumber: "000123105"}, "000123105", "105"},
		{ports.AccountInfo{AccountType: "EUR_ACCOUNT", IBAN: "DE89370400440532013000"}, "DE89370400440532013000", "000"},
		{ports.AccountInfo{AccountType: "MXN_ACCOUNT", ClabeNumber: "032180000118359719"}, "032180000118359719", "719"},
		{ports.AccountInfo{AccountType: "BRL_ACCOUNT", PixKey: "ana102@example.com"}, "ana102@example.com", "102"},
		{ports.AccountInfo{AccountType: "BRL_ACCOUNT", PixKey: "ana@example.com"}, "ana@example.com", ""},
		{ports.AccountInfo{AccountType: "INR_ACCOUNT", VPA: "ana104@upi"}, "ana104@upi", "104"},
		{ports.AccountInfo{AccountType: "INR_ACCOUNT", VPA: "ana104@upi", AccountNumber: "000111222333"}, "000111222333", "333"},
		{ports.AccountInfo{AccountType: "LIGHTNING", LightningAddress: "bob003@wallet.example"}, "bob003@wallet.example", "003"},
		{ports.AccountInfo{AccountType: "BASE_WALLET", Address: "0x52908400098527886e0f7030069857d2e4169abc"}, "0x52908400098527886e0f7030069857d2e4169abc", ""},
		{ports.AccountInfo{AccountType: "SWIFT_ACCOUNT", AccountNumber: "1", IBAN: "GB82WEST12345698765432"}, "GB82WEST12345698765432", "432"},
		{ports.AccountInfo{AccountType: "NGN_ACCOUNT"}, "", ""},
		{ports.AccountInfo{AccountType: "NOPE", AccountNumber: "123"}, "", ""},
	}
	for _, c := range cases {
		assert.Equal(t, c.id, external.PrimaryIdentifier(c.info), "%+v", c.info)
		assert.Equal(t, c.suffix, external.SandboxSuffix(c.info), "%+v", c.info)
	}
	assert.Equal(t, "pixKey", external.PrimaryField(cases[3].info))
	assert.Equal(t, "iban", external.PrimaryField(cases[9].info))
}

func TestStatusLifecycle(t *testing.T) {
	assert.True(t, external.CanTransition("PENDING", "ACTIVE"))
	assert.True(t, external.CanTransition("ACTIVE", "UNDER_REVIEW"))
	assert.True(t, external.CanTransition("UNDER_REVIEW", "ACTIVE"))
	assert.True(t, external.CanTransition("ACTIVE", "INACTIVE"))
	assert.False(t, external.CanTransition("INACTIVE", "ACTIVE"))
	assert.False(t, external.CanTransition("ACTIVE", "PENDING"))
	assert.False(t, external.CanTransition("ACTIVE", "BOGUS"))
}
