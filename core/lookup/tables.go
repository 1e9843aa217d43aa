package lookup

import "github.com/corridorpay/corridor/ports"

// Limits are the smallest and largest amounts a receiver can be paid in
// one payment, in the receiving currency's minor units.
type Limits struct {
	Min, Max int64
}

// Corridor is one row of the limits table: the bounds for paying into
// Receiving from Sending ("" = any sending currency) to an account of
// AccountType ("" = any).
type Corridor struct {
	Sending     string
	Receiving   string
	AccountType string
	Limits
}

// corridors are the payment limits per receiving currency, with tighter
// rows for some senders and account types. The most specific matching row
// wins (account type, then sending currency).
var corridors = []Corridor{
	{Receiving: "USD", Limits: Limits{Min: 1_00, Max: 250_000_00}},
	{Receiving: "EUR", Limits: Limits{Min: 1_00, Max: 250_000_00}},
	{Receiving: "GBP", Limits: Limits{Min: 1_00, Max: 200_000_00}},
	{Receiving: "CAD", Limits: Limits{Min: 1_00, Max: 250_000_00}},
	{Receiving: "MXN", Limits: Limits{Min: 10_00, Max: 5_000_000_00}},
	{Receiving: "BRL", Limits: Limits{Min: 5_00, Max: 1_000_000_00}},
	{Receiving: "INR", Limits: Limits{Min: 100_00, Max: 20_000_000_00}},
	{Receiving: "NGN", Limits: Limits{Min: 1_000_00, Max: 100_000_000_00}},
	{Receiving: "AED", Limits: Limits{Min: 5_00, Max: 1_000_000_00}},
	{Receiving: "JPY", Limits: Limits{Min: 100, Max: 30_000_000}},
	{Receiving: "USDC", Limits: Limits{Min: 1_000_000, Max: 1_000_000_000_000}},
	{Receiving: "BTC", Limits: Limits{Min: 1_000, Max: 100_000_000}},

	// Payments funded in bitcoin settle over Lightning/Spark: smaller
	// fiat payouts.
	{Sending: "BTC", Receiving: "USD", Limits: Limits{Min: 1_00, Max: 50_000_00}},
	{Sending: "BTC", Receiving: "MXN", Limits: Limits{Min: 10_00, Max: 1_000_000_00}},
	// Lightning destinations take small payments.
	{Receiving: "BTC", AccountType: "LIGHTNING", Limits: Limits{Min: 1_000, Max: 10_000_000}},
}

// LimitsFor returns the limits for paying into receiving from sending to
// an account of accountType.
func LimitsFor(sending, receiving, accountType string) (Limits, bool) {
	best, score := Limits{}, -1
	for _, c := range corridors {
		if c.Receiving != receiving || (c.Sending != "" && c.Sending != sending) || (c.AccountType != "" && c.AccountType != accountType) {
			continue
		}
		s := 0
		if c.AccountType != "" {
			s += 2
		}
		if c.Sending != "" {
			s++
		}
		if s > score {
			best, score = c.Limits, s
		}
	}
	return best, score >= 0
}

// Payer data field names (reference CustomerInfoFieldName).
const (
	FieldFullName           = "FULL_NAME"
	FieldBirthDate          = "BIRTH_DATE"
	FieldNationality        = "NATIONALITY"
	FieldPostalAddress      = "POSTAL_ADDRESS"
	FieldTaxID              = "TAX_ID"
	FieldRegistrationNumber = "REGISTRATION_NUMBER"
	FieldCountryOfResidence = "COUNTRY_OF_RESIDENCE"
	FieldPurposeOfPayment   = "PURPOSE_OF_PAYMENT"
	FieldCompanyLegalName   = "COMPANY_LEGAL_NAME"
)

func mandatory(name string) ports.PayerDataField {
	return ports.PayerDataField{Name: name, Mandatory: true}
}
func optional(name string) ports.PayerDataField { return ports.PayerDataField{Name: name} }

// payerData is what the receiving side asks about an individual payer, per
// receiving currency (the travel rule and local remittance rules).
var payerData = map[string][]ports.PayerDataField{
	"USD":  {mandatory(FieldFullName), mandatory(FieldPostalAddress), optional(FieldBirthDate)},
	"EUR":  {mandatory(FieldFullName), mandatory(FieldPostalAddress), optional(FieldBirthDate), optional(FieldNationality)},
	"GBP":  {mandatory(FieldFullName), mandatory(FieldPostalAddress)},
	"CAD":  {mandatory(FieldFullName), mandatory(FieldPostalAddress)},
	"MXN":  {mandatory(FieldFullName), mandatory(FieldBirthDate), mandatory(FieldNationality)},
	"BRL":  {mandatory(FieldFullName), mandatory(FieldBirthDate), optional(FieldTaxID)},
	"INR":  {mandatory(FieldFullName), mandatory(FieldPostalAddress), mandatory(FieldPurposeOfPayment)},
	"NGN":  {mandatory(FieldFullName), mandatory(FieldBirthDate), mandatory(FieldNationality), mandatory(FieldPostalAddress)},
	"AED":  {mandatory(FieldFullName), mandatory(FieldNationality), mandatory(FieldPostalAddress), mandatory(FieldPurposeOfPayment)},
	"JPY":  {mandatory(FieldFullName), mandatory(FieldPostalAddress)},
	"USDC": {mandatory(FieldFullName), optional(FieldCountryOfResidence)},
	"BTC":  {mandatory(FieldFullName), optional(FieldCountryOfResidence)},
}

// defaultPayerData applies to a receiving currency without a row.
var defaultPayerData = []ports.PayerDataField{mandatory(FieldFullName)}

// businessField is how an individual's field is asked of a business payer.
var businessField = map[string]string{
	FieldFullName:    FieldCompanyLegalName,
	FieldBirthDate:   FieldRegistrationNumber,
	FieldNationality: FieldCountryOfResidence,
}

// PayerData returns the payer fields required to pay into currency, for a
// business payer when business is set.
func PayerData(currency string, business bool) []ports.PayerDataField {
	rows, ok := payerData[currency]
	if !ok {
		rows = defaultPayerData
	}
	out := make([]ports.PayerDataField, len(rows))
	copy(out, rows)
	if business {
		for i, f := range out {
			if b, ok := businessField[f.Name]; ok {
				out[i].Name = b
			}
		}
	}
	return out
}
