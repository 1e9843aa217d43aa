package lookup

import "github.com/corridorpay/corridor/ports"

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
