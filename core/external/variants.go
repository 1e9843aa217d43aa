package external

import (
	"regexp"
	"slices"
	"sort"

	"github.com/corridorpay/corridor/core/money"
	"github.com/corridorpay/corridor/ports"
)

// Field is one property of an accountInfo variant or of a beneficiary: its
// JSON name, whether it is required, its length bounds, pattern (RE2,
// anchored) or enum, and an optional check beyond the pattern (a checksum).
// The HTTP adapter builds its documented schemas from the same fields.
type Field struct {
	Name     string
	Required bool
	MinLen   int // 0: no bound
	MaxLen   int // 0: no bound
	Pattern  string
	Enum     []string
	// Format is a documentation hint: "date", "email".
	Format string
	Doc    string

	// Date: a YYYY-MM-DD date not after today.
	Date bool
	// Address: a postal address object (beneficiary.address).
	Address bool
	check   check
	// By names another field whose value picks the check (pixKey is
	// checked by pixKeyType).
	by       string
	checksBy map[string]check

	re *regexp.Regexp
}

// Rail is a payment rail an account of a variant can be paid over; Needs
// lists the accountInfo fields the rail needs (all must be present).
type Rail struct {
	Name  string
	Needs []string
}

// Presence says whether a variant takes a beneficiary.
type Presence int

const (
	BeneficiaryForbidden Presence = iota
	BeneficiaryOptional
	BeneficiaryRequired
)

// BeneficiaryRule is the beneficiary a variant takes: whether it must be
// given and the fields of each beneficiaryType.
type BeneficiaryRule struct {
	Presence   Presence
	Individual []Field
	Business   []Field
}

// Variant is one accountType: the currencies its accounts may be in, its
// fields and their rules, the identifier fields that name the account (in
// order of preference), the rails it is paid over and its beneficiary.
type Variant struct {
	AccountType string
	// SchemaName prefixes its documented schema names ("Usd" gives
	// UsdExternalAccountCreateInfo).
	SchemaName string
	Title      string
	Currencies []string
	Fields     []Field
	// AnyOf: at least one of these groups must be fully present.
	AnyOf [][]string
	// ExactlyOne: exactly one of these fields must be present.
	ExactlyOne []string
	// Primary lists the fields that identify the account, first present
	// wins (PrimaryIdentifier).
	Primary []string
	// Bank lists the fields that, with the primary identifier, tell two
	// accounts apart (the same account number at two banks differs).
	Bank  []string
	Rails []Rail
	// RailField names the field that picks one of Rails (INR's rail); the
	// picked rail's Needs must then be present.
	RailField   string
	Beneficiary BeneficiaryRule
	// Wallet: a crypto wallet or Lightning destination (no paymentRails).
	Wallet bool
}

// Common patterns.
const (
	bicPattern   = `^[A-Z]{4}[A-Z]{2}[A-Z0-9]{2}([A-Z0-9]{3})?$`
	ibanPattern  = `^[A-Z]{2}[0-9]{2}[A-Za-z0-9]{11,30}$`
	e164Pattern  = `^\+[1-9][0-9]{1,14}$`
	aba9Pattern  = `^[0-9]{9}$`
	countryShape = `^[A-Z]{2}$`
)

func swiftCodeField(required bool) Field {
	return Field{Name: "swiftCode", Required: required, MinLen: 8, MaxLen: 11, Pattern: bicPattern, check: checkBIC,
		Doc: "BIC (SWIFT code) of the bank, 8 or 11 characters"}
}

// ---- beneficiaries ----

func addressField(required bool) Field {
	return Field{Name: "address", Required: required, Address: true, Doc: "Postal address"}
}

// addressFields are the fields of a beneficiary's address.
var addressFields = []Field{
	{Name: "line1", Required: true, MinLen: 1, MaxLen: 255, Doc: "Street address line 1"},
	{Name: "line2", MinLen: 1, MaxLen: 255, Doc: "Street address line 2"},
	{Name: "city", MinLen: 1, MaxLen: 255, Doc: "City"},
	{Name: "state", MinLen: 1, MaxLen: 255, Doc: "State, province or region"},
	{Name: "postalCode", Required: true, MinLen: 1, MaxLen: 32, Doc: "Postal or ZIP code"},
	{Name: "country", Required: true, MinLen: 2, MaxLen: 2, Pattern: countryShape, check: checkCountry, Doc: "Country code (ISO 3166-1 alpha-2)"},
}

// AddressFields returns the fields of a beneficiary address.
func AddressFields() []Field { return slices.Clone(addressFields) }

func nameField(name, doc string) Field {
	return Field{Name: name, Required: true, MinLen: 1, MaxLen: 255, Doc: doc}
}

func countryField(name string, required bool, doc string) Field {
	return Field{Name: name, Required: required, MinLen: 2, MaxLen: 2, Pattern: countryShape, check: checkCountry, Doc: doc}
}

func contactFields() []Field {
	return []Field{
		{Name: "email", MaxLen: 254, Format: "email", check: checkEmail, Doc: "E-mail address"},
		{Name: "phoneNumber", MaxLen: 16, Pattern: e164Pattern, Doc: "Phone number (E.164)"},
		countryField("countryOfResidence", false, "Country of residence (ISO 3166-1 alpha-2)"),
		addressField(false),
	}
}

// bankIndividual is the INDIVIDUAL beneficiary of a bank account.
func bankIndividual() []Field {
	return append([]Field{
		nameField("fullName", "Full name of the account holder"),
		{Name: "birthDate", Date: true, Format: "date", Doc: "Date of birth (YYYY-MM-DD)"},
		countryField("nationality", false, "Nationality (ISO 3166-1 alpha-2)"),
	}, contactFields()...)
}

// bankBusiness is the BUSINESS beneficiary of any account.
func bankBusiness() []Field {
	return append([]Field{
		nameField("legalName", "Legal name of the business"),
		{Name: "registrationNumber", MinLen: 1, MaxLen: 255, Doc: "Business registration number"},
		{Name: "taxId", MinLen: 1, MaxLen: 255, Doc: "Tax identification number"},
	}, contactFields()...)
}

// requireFields marks the named fields required.
func requireFields(fs []Field, names ...string) []Field {
	for i := range fs {
		if slices.Contains(names, fs[i].Name) {
			fs[i].Required = true
		}
	}
	return fs
}

func bankBeneficiary(individual []Field) BeneficiaryRule {
	return BeneficiaryRule{Presence: BeneficiaryRequired, Individual: individual, Business: bankBusiness()}
}

// walletBeneficiary is the optional owner of a crypto wallet: an
// individual is named with a country of residence; a business as for banks.
func walletBeneficiary() BeneficiaryRule {
	return BeneficiaryRule{Presence: BeneficiaryOptional,
		Individual: []Field{
			nameField("fullName", "Full name of the wallet's owner"),
			countryField("countryOfResidence", true, "Country of residence (ISO 3166-1 alpha-2)"),
		},
		Business: bankBusiness(),
	}
}

// ---- the table ----

func walletVariant(accountType, schemaName, title, currency string, c check, doc string) Variant {
	return Variant{
		AccountType: accountType, SchemaName: schemaName, Title: title, Currencies: []string{currency},
		Fields: []Field{
			{Name: "address", Required: true, MinLen: 1, MaxLen: 255, check: c, Doc: doc},
			{Name: "vaspName", MinLen: 1, MaxLen: 255, Doc: "Name of the VASP that custodies the wallet; omit for self-custody"},
		},
		Primary:     []string{"address"},
		Beneficiary: walletBeneficiary(),
		Wallet:      true,
	}
}

func fiatCodes() []string {
	var out []string
	for _, c := range money.Codes() {
		if cur, _ := money.Lookup(c); !cur.Crypto {
			out = append(out, c)
		}
	}
	return out
}

// variants is every accountType corridor accepts, for the currencies it
// knows (core/money). Adding a corridor's account type is adding a row.
var variants = []Variant{
	{
		AccountType: "USD_ACCOUNT", SchemaName: "Usd", Title: "USD Account", Currencies: []string{"USD"},
		Fields: []Field{
			{Name: "accountNumber", Required: true, MinLen: 4, MaxLen: 17, Pattern: `^[0-9]{4,17}$`, Doc: "US bank account number (4-17 digits)"},
			{Name: "routingNumber", Required: true, MinLen: 9, MaxLen: 9, Pattern: aba9Pattern, check: checkABA, Doc: "ABA routing number (9 digits, checksum verified)"},
			{Name: "bankName", MinLen: 1, MaxLen: 140, Doc: "Name of the bank holding the account"},
			{Name: "bankAccountType", Enum: []string{"CHECKING", "SAVINGS"}, Doc: "Checking or savings; checking when omitted"},
			{Name: "intermediaryBankName", MinLen: 1, MaxLen: 140, Doc: "Intermediary bank (WIRE only)"},
			{Name: "intermediaryRoutingNumber", MinLen: 9, MaxLen: 9, Pattern: aba9Pattern, check: checkABA, Doc: "Intermediary bank's ABA routing number (WIRE only)"},
			{Name: "fiToFiInformation", MaxLen: 210, Doc: "Bank-to-bank instructions (WIRE only)"},
		},
		Primary:     []string{"accountNumber"},
		Bank:        []string{"routingNumber"},
		Rails:       []Rail{{Name: "ACH"}, {Name: "WIRE"}, {Name: "RTP"}, {Name: "FEDNOW"}},
		Beneficiary: bankBeneficiary(bankIndividual()),
	},
	{
		AccountType: "AED_ACCOUNT", SchemaName: "Aed", Title: "AED Account", Currencies: []string{"AED"},
		Fields: []Field{
			{Name: "iban", Required: true, MinLen: 23, MaxLen: 23, Pattern: `^AE[0-9]{21}$`, check: checkIBAN, Doc: "UAE IBAN (AE + 21 digits, check digits verified)"},
			swiftCodeField(false),
		},
		Primary:     []string{"iban"},
		Rails:       []Rail{{Name: "BANK_TRANSFER"}},
		Beneficiary: bankBeneficiary(requireFields(bankIndividual(), "address")),
	},
	{
		AccountType: "EUR_ACCOUNT", SchemaName: "Eur", Title: "EUR Account", Currencies: []string{"EUR"},
		Fields: []Field{
			{Name: "iban", Required: true, MinLen: 15, MaxLen: 34, Pattern: ibanPattern, check: checkSEPAIBAN, Doc: "IBAN of a SEPA country (length and mod-97 check digits verified)"},
			swiftCodeField(false),
		},
		Primary:     []string{"iban"},
		Rails:       []Rail{{Name: "SEPA"}, {Name: "SEPA_INSTANT"}},
		Beneficiary: bankBeneficiary(requireFields(bankIndividual(), "countryOfResidence")),
	},
	{
		AccountType: "MXN_ACCOUNT", SchemaName: "Mxn", Title: "MXN Account", Currencies: []string{"MXN"},
		Fields: []Field{
			{Name: "clabeNumber", Required: true, MinLen: 18, MaxLen: 18, Pattern: `^[0-9]{18}$`, check: checkCLABE, Doc: "CLABE (18 digits, check digit verified)"},
		},
		Primary:     []string{"clabeNumber"},
		Rails:       []Rail{{Name: "SPEI"}},
		Beneficiary: bankBeneficiary(bankIndividual()),
	},
	{
		AccountType: "BRL_ACCOUNT", SchemaName: "Brl", Title: "BRL Account", Currencies: []string{"BRL"},
		Fields: []Field{
			{Name: "pixKey", Required: true, MinLen: 1, MaxLen: 77, by: "pixKeyType", checksBy: pixKeyChecks,
				Doc: "PIX key, written as its pixKeyType requires: CPF (11 digits), CNPJ (14 digits), EMAIL, PHONE (+55…) or RANDOM (UUID)"},
			{Name: "pixKeyType", Required: true, Enum: []string{"CPF", "CNPJ", "EMAIL", "PHONE", "RANDOM"}, Doc: "Type of the PIX key"},
			{Name: "taxId", Required: true, MinLen: 11, MaxLen: 14, Pattern: `^[0-9]{11,14}$`, check: checkTaxIDBR, Doc: "Account holder's CPF (11 digits) or CNPJ (14 digits), check digits verified"},
		},
		Primary:     []string{"pixKey"},
		Rails:       []Rail{{Name: "PIX"}},
		Beneficiary: bankBeneficiary(bankIndividual()),
	},
	{
		AccountType: "GBP_ACCOUNT", SchemaName: "Gbp", Title: "GBP Account", Currencies: []string{"GBP"},
		Fields: []Field{
			{Name: "sortCode", Required: true, MinLen: 6, MaxLen: 6, Pattern: `^[0-9]{6}$`, Doc: "Sort code (6 digits)"},
			{Name: "accountNumber", Required: true, MinLen: 8, MaxLen: 8, Pattern: `^[0-9]{8}$`, Doc: "UK account number (8 digits)"},
		},
		Primary:     []string{"accountNumber"},
		Bank:        []string{"sortCode"},
		Rails:       []Rail{{Name: "FASTER_PAYMENTS"}},
		Beneficiary: bankBeneficiary(bankIndividual()),
	},
	{
		AccountType: "INR_ACCOUNT", SchemaName: "Inr", Title: "INR Account", Currencies: []string{"INR"},
		Fields: []Field{
			{Name: "vpa", MinLen: 3, MaxLen: 255, Pattern: `^[a-zA-Z0-9.\-_]+@[a-zA-Z0-9]+$`, Doc: "UPI virtual payment address (UPI)"},
			{Name: "accountNumber", MinLen: 9, MaxLen: 18, Pattern: `^[0-9]{9,18}$`, Doc: "Indian bank account number, 9-18 digits (NEFT, RTGS)"},
			{Name: "ifsc", MinLen: 11, MaxLen: 11, Pattern: `^[A-Z]{4}0[A-Z0-9]{6}$`, Doc: "IFSC of the branch (NEFT, RTGS)"},
			{Name: "rail", Enum: []string{"UPI", "NEFT", "RTGS"}, Doc: "Rail to pay over; UPI needs vpa, NEFT and RTGS need accountNumber and ifsc"},
			{Name: "bankName", MinLen: 1, MaxLen: 255, Doc: "Name of the bank"},
		},
		AnyOf:       [][]string{{"vpa"}, {"accountNumber", "ifsc"}},
		Primary:     []string{"accountNumber", "vpa"},
		Bank:        []string{"ifsc"},
		Rails:       []Rail{{Name: "UPI", Needs: []string{"vpa"}}, {Name: "NEFT", Needs: []string{"accountNumber", "ifsc"}}, {Name: "RTGS", Needs: []string{"accountNumber", "ifsc"}}},
		RailField:   "rail",
		Beneficiary: bankBeneficiary(bankIndividual()),
	},
	{
		AccountType: "NGN_ACCOUNT", SchemaName: "Ngn", Title: "NGN Account", Currencies: []string{"NGN"},
		Fields: []Field{
			{Name: "accountNumber", Required: true, MinLen: 10, MaxLen: 10, Pattern: `^[0-9]{10}$`, Doc: "NUBAN account number (10 digits)"},
			{Name: "bankName", Required: true, MinLen: 1, MaxLen: 255, Doc: "Name of the bank"},
		},
		Primary:     []string{"accountNumber"},
		Bank:        []string{"bankName"},
		Rails:       []Rail{{Name: "BANK_TRANSFER"}},
		Beneficiary: bankBeneficiary(bankIndividual()),
	},
	{
		AccountType: "CAD_ACCOUNT", SchemaName: "Cad", Title: "CAD Account", Currencies: []string{"CAD"},
		Fields: []Field{
			{Name: "bankCode", Required: true, MinLen: 3, MaxLen: 3, Pattern: `^[0-9]{3}$`, Doc: "Institution number (3 digits)"},
			{Name: "branchCode", Required: true, MinLen: 5, MaxLen: 5, Pattern: `^[0-9]{5}$`, Doc: "Transit (branch) number (5 digits)"},
			{Name: "accountNumber", Required: true, MinLen: 7, MaxLen: 12, Pattern: `^[0-9]{7,12}$`, Doc: "Account number (7-12 digits)"},
		},
		Primary:     []string{"accountNumber"},
		Bank:        []string{"bankCode", "branchCode"},
		Rails:       []Rail{{Name: "BANK_TRANSFER"}},
		Beneficiary: bankBeneficiary(append(bankIndividual(), Field{Name: "registrationNumber", MinLen: 1, MaxLen: 255, Doc: "Registration number of the account holder"})),
	},
	{
		AccountType: "SWIFT_ACCOUNT", SchemaName: "Swift", Title: "SWIFT Account", Currencies: fiatCodes(),
		Fields: []Field{
			countryField("country", true, "Country of the bank (ISO 3166-1 alpha-2)"),
			swiftCodeField(true),
			{Name: "bankName", Required: true, MinLen: 1, MaxLen: 255, Doc: "Name of the bank"},
			{Name: "accountNumber", MinLen: 1, MaxLen: 34, Pattern: `^[0-9A-Za-z]{1,34}$`, Doc: "Account number (when the country has no IBAN)"},
			{Name: "iban", MinLen: 15, MaxLen: 34, Pattern: ibanPattern, check: checkIBAN, Doc: "IBAN (length and mod-97 check digits verified)"},
		},
		AnyOf:       [][]string{{"iban"}, {"accountNumber"}},
		Primary:     []string{"iban", "accountNumber"},
		Bank:        []string{"swiftCode"},
		Rails:       []Rail{{Name: "SWIFT"}},
		Beneficiary: bankBeneficiary(bankIndividual()),
	},
	walletVariant("SPARK_WALLET", "SparkWallet", "Spark Wallet", "BTC", checkSpark,
		"Spark address: bech32m with a network prefix (spark1… or sp1… on mainnet) encoding the owner's identity public key"),
	{
		AccountType: "LIGHTNING", SchemaName: "Lightning", Title: "Lightning", Currencies: []string{"BTC"},
		Fields: []Field{
			{Name: "invoice", MinLen: 1, MaxLen: 7089, check: checkBolt11, Doc: "Single-use BOLT 11 invoice (lnbc…), checksum verified"},
			{Name: "bolt12", MinLen: 1, MaxLen: 7089, check: checkBolt12, Doc: "Reusable BOLT 12 offer (lno1…)"},
			{Name: "lightningAddress", MinLen: 3, MaxLen: 320, check: checkLightningAddress, Doc: "Lightning address (user@domain)"},
		},
		ExactlyOne: []string{"invoice", "bolt12", "lightningAddress"},
		Primary:    []string{"lightningAddress", "invoice", "bolt12"},
		Wallet:     true,
	},
	walletVariant("SOLANA_WALLET", "SolanaWallet", "Solana Wallet", "USDC", checkSolana,
		"Solana address: base58 of a 32-byte public key"),
	walletVariant("BASE_WALLET", "BaseWallet", "Base Wallet", "USDC", checkEVM,
		"Base address: 0x and 40 hex digits (EIP-55 checksum verified when mixed case)"),
	walletVariant("POLYGON_WALLET", "PolygonWallet", "Polygon Wallet", "USDC", checkEVM,
		"Polygon address: 0x and 40 hex digits (EIP-55 checksum verified when mixed case)"),
	walletVariant("ETHEREUM_WALLET", "EthereumWallet", "Ethereum Wallet", "USDC", checkEVM,
		"Ethereum address: 0x and 40 hex digits (EIP-55 checksum verified when mixed case)"),
}

var variantByType = func() map[string]*Variant {
	m := make(map[string]*Variant, len(variants))
	for i := range variants {
		v := &variants[i]
		compile(v.Fields)
		compile(v.Beneficiary.Individual)
		compile(v.Beneficiary.Business)
		m[v.AccountType] = v
	}
	compile(addressFields)
	return m
}()

func compile(fs []Field) {
	for i := range fs {
		if fs[i].Pattern != "" {
			fs[i].re = regexp.MustCompile(fs[i].Pattern)
		}
	}
}

// Variants returns every accountType's rules, sorted by accountType.
func Variants() []Variant {
	out := slices.Clone(variants)
	sort.Slice(out, func(i, j int) bool { return out[i].AccountType < out[j].AccountType })
	return out
}

// LookupVariant returns the rules of an accountType.
func LookupVariant(accountType string) (Variant, bool) {
	v, ok := variantByType[accountType]
	if !ok {
		return Variant{}, false
	}
	return *v, true
}

// AccountTypes lists every accepted accountType, sorted.
func AccountTypes() []string {
	out := make([]string, 0, len(variants))
	for _, v := range variants {
		out = append(out, v.AccountType)
	}
	sort.Strings(out)
	return out
}

// PaymentRails are the rails an account can be paid over: the variant's
// rails whose needed fields the account has (INR: UPI with a vpa, NEFT and
// RTGS with an account number and IFSC). Wallets have none.
func PaymentRails(info ports.AccountInfo) []string {
	v, ok := variantByType[info.AccountType]
	if !ok {
		return nil
	}
	var out []string
	for _, r := range v.Rails {
		if hasAll(&info, r.Needs) {
			out = append(out, r.Name)
		}
	}
	return out
}

func hasAll(info *ports.AccountInfo, names []string) bool {
	for _, n := range names {
		if p := infoField(info, n); p == nil || *p == "" {
			return false
		}
	}
	return true
}

// ---- field access ----

// infoFields maps accountInfo JSON names onto the flat ports record.
var infoFields = map[string]func(*ports.AccountInfo) *string{
	"accountNumber":             func(a *ports.AccountInfo) *string { return &a.AccountNumber },
	"routingNumber":             func(a *ports.AccountInfo) *string { return &a.RoutingNumber },
	"bankAccountType":           func(a *ports.AccountInfo) *string { return &a.BankAccountType },
	"bankName":                  func(a *ports.AccountInfo) *string { return &a.BankName },
	"intermediaryBankName":      func(a *ports.AccountInfo) *string { return &a.IntermediaryBankName },
	"intermediaryRoutingNumber": func(a *ports.AccountInfo) *string { return &a.IntermediaryRoutingNumber },
	"fiToFiInformation":         func(a *ports.AccountInfo) *string { return &a.FiToFiInformation },
	"iban":                      func(a *ports.AccountInfo) *string { return &a.IBAN },
	"swiftCode":                 func(a *ports.AccountInfo) *string { return &a.SwiftCode },
	"clabeNumber":               func(a *ports.AccountInfo) *string { return &a.ClabeNumber },
	"pixKey":                    func(a *ports.AccountInfo) *string { return &a.PixKey },
	"pixKeyType":                func(a *ports.AccountInfo) *string { return &a.PixKeyType },
	"taxId":                     func(a *ports.AccountInfo) *string { return &a.TaxID },
	"sortCode":                  func(a *ports.AccountInfo) *string { return &a.SortCode },
	"ifsc":                      func(a *ports.AccountInfo) *string { return &a.IFSC },
	"vpa":                       func(a *ports.AccountInfo) *string { return &a.VPA },
	"rail":                      func(a *ports.AccountInfo) *string { return &a.Rail },
	"bankCode":                  func(a *ports.AccountInfo) *string { return &a.BankCode },
	"branchCode":                func(a *ports.AccountInfo) *string { return &a.BranchCode },
	"phoneNumber":               func(a *ports.AccountInfo) *string { return &a.PhoneNumber },
	"provider":                  func(a *ports.AccountInfo) *string { return &a.Provider },
	"region":                    func(a *ports.AccountInfo) *string { return &a.Region },
	"country":                   func(a *ports.AccountInfo) *string { return &a.Country },
	"address":                   func(a *ports.AccountInfo) *string { return &a.Address },
	"vaspName":                  func(a *ports.AccountInfo) *string { return &a.VaspName },
	"invoice":                   func(a *ports.AccountInfo) *string { return &a.Invoice },
	"bolt12":                    func(a *ports.AccountInfo) *string { return &a.Bolt12 },
	"lightningAddress":          func(a *ports.AccountInfo) *string { return &a.LightningAddress },
}

// InfoFieldNames lists every accountInfo field the flat record carries
// (besides accountType and beneficiary), sorted.
func InfoFieldNames() []string {
	out := make([]string, 0, len(infoFields))
	for n := range infoFields {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func infoField(a *ports.AccountInfo, name string) *string {
	if f, ok := infoFields[name]; ok {
		return f(a)
	}
	return nil
}

// beneficiaryFields maps beneficiary JSON names onto ports.Beneficiary
// (address is an object, handled apart).
var beneficiaryFields = map[string]func(*ports.Beneficiary) *string{
	"fullName":           func(b *ports.Beneficiary) *string { return &b.FullName },
	"legalName":          func(b *ports.Beneficiary) *string { return &b.LegalName },
	"registrationNumber": func(b *ports.Beneficiary) *string { return &b.RegistrationNumber },
	"taxId":              func(b *ports.Beneficiary) *string { return &b.TaxID },
	"birthDate":          func(b *ports.Beneficiary) *string { return &b.BirthDate },
	"nationality":        func(b *ports.Beneficiary) *string { return &b.Nationality },
	"email":              func(b *ports.Beneficiary) *string { return &b.Email },
	"phoneNumber":        func(b *ports.Beneficiary) *string { return &b.PhoneNumber },
	"countryOfResidence": func(b *ports.Beneficiary) *string { return &b.CountryOfResidence },
	"documentType":       func(b *ports.Beneficiary) *string { return &b.DocumentType },
	"documentNumber":     func(b *ports.Beneficiary) *string { return &b.DocumentNumber },
}

var beneficiaryFieldNames = func() []string {
	out := make([]string, 0, len(beneficiaryFields))
	for n := range beneficiaryFields {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}()

var addressFieldsOf = map[string]func(*ports.Address) *string{
	"line1":      func(a *ports.Address) *string { return &a.Line1 },
	"line2":      func(a *ports.Address) *string { return &a.Line2 },
	"city":       func(a *ports.Address) *string { return &a.City },
	"state":      func(a *ports.Address) *string { return &a.State },
	"postalCode": func(a *ports.Address) *string { return &a.PostalCode },
	"country":    func(a *ports.Address) *string { return &a.Country },
}
