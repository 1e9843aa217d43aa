package kyc_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/adapters/memory"
	"github.com/corridorpay/corridor/adapters/postgres"
	"github.com/corridorpay/corridor/adapters/system"
	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/core/kyc"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit"
	"github.com/corridorpay/corridor/testkit/pgtest"
)

var t0 = time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)

// scripted is a KYC provider answering what the test told it, per
// applicant id (APPROVED when not told), and counting its calls.
type scripted struct {
	mu        sync.Mutex
	decisions map[string]string
	calls     int
}

func (p *scripted) set(id, decision string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.decisions[id] = decision
}

func (p *scripted) decide(id string) ports.KYCDecision {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls++
	if d, ok := p.decisions[id]; ok {
		return ports.KYCDecision{Status: d}
	}
	return ports.KYCDecision{Status: ports.KYCApproved}
}

func (p *scripted) VerifyIndividual(_ context.Context, c ports.Customer, _ []ports.Document) (ports.KYCDecision, error) {
	return p.decide(c.ID), nil
}

func (p *scripted) VerifyBusiness(_ context.Context, c ports.Customer, _ []ports.BeneficialOwner, _ []ports.Document) (ports.KYCDecision, error) {
	return p.decide(c.ID), nil
}

func (p *scripted) VerifyOwner(_ context.Context, o ports.BeneficialOwner, _ []ports.Document) (ports.KYCDecision, error) {
	return p.decide(o.ID), nil
}

type env struct {
	svc      *kyc.Service
	store    ports.Store
	clock    *testkit.FakeClock
	provider *scripted
	platform string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	clock := testkit.NewFakeClock(t0)
	return newEnvOn(t, clock, memory.NewStore(memory.NewLedger(clock)))
}

// newPostgresEnv is newEnv on a scratch PostgreSQL database.
func newPostgresEnv(t *testing.T) *env {
	t.Helper()
	return newEnvOn(t, testkit.NewFakeClock(t0), postgres.NewStore(pgtest.NewDB(t)))
}

func newEnvOn(t *testing.T, clock *testkit.FakeClock, store ports.Store) *env {
	t.Helper()
	p := &scripted{decisions: map[string]string{}}
	e := &env{svc: kyc.New(store, p, clock, system.IDs{}, kyc.Options{}), store: store, clock: clock, provider: p}
	e.platform = e.addPlatform(t)
	return e
}

func (e *env) addPlatform(t *testing.T) string {
	t.Helper()
	p := ports.Platform{ID: system.IDs{}.New("Platform"), Name: "p", CreatedAt: e.clock.Now(), UpdatedAt: e.clock.Now()}
	require.NoError(t, e.store.InTx(context.Background(), func(tx ports.Tx) error {
		return tx.Platforms().Create(context.Background(), p)
	}))
	return p.ID
}

// addCustomer stores c (id, platform and times filled in) and returns it.
func (e *env) addCustomer(t *testing.T, c ports.Customer) ports.Customer {
	t.Helper()
	ctx := context.Background()
	if c.ID == "" {
		c.ID = system.IDs{}.New("Customer")
	}
	if c.PlatformID == "" {
		c.PlatformID = e.platform
	}
	if c.KYCStatus == "" {
		c.KYCStatus = kyc.StatusUnverified
	}
	c.UmaAddress = "$" + c.ID[len(c.ID)-12:] + "@x.test"
	c.CreatedAt, c.UpdatedAt = e.clock.Now(), e.clock.Now()
	require.NoError(t, e.store.InTx(ctx, func(tx ports.Tx) error { return tx.Customers().Create(ctx, c) }))
	e.clock.Advance(time.Second)
	return c
}

func (e *env) customer(t *testing.T, id string) ports.Customer {
	t.Helper()
	c, err := e.store.Read().Customers().Get(context.Background(), e.platform, id)
	require.NoError(t, err)
	return c
}

func (e *env) owner(t *testing.T, id string) ports.BeneficialOwner {
	t.Helper()
	o, err := e.svc.GetOwner(context.Background(), e.platform, id)
	require.NoError(t, err)
	return o
}

// usIndividual has everything a US verification needs.
func usIndividual(name string) ports.Customer {
	return ports.Customer{CustomerType: "INDIVIDUAL", Region: "US",
		Address:    &ports.Address{Line1: "1 Main St", City: "Springfield", State: "IL", PostalCode: "62701", Country: "US"},
		Individual: &ports.IndividualInfo{FullName: name, BirthDate: "1980-01-02", IDType: "SSN", Identifier: "123-45-6789"}}
}

// usBusiness has every business field a US verification needs.
func usBusiness(reg string) ports.Customer {
	return ports.Customer{CustomerType: "BUSINESS", Region: "US",
		Address: &ports.Address{Line1: "2 Market St", City: "San Francisco", State: "CA", PostalCode: "94105", Country: "US"},
		Business: &ports.BusinessInfo{LegalName: "Acme Inc", Country: "US", RegistrationNumber: reg, TaxID: "12-3456789",
			IncorporatedOn: "2015-06-01"}}
}

func ptr[T any](v T) *T { return &v }

// ownerInput is a complete owner of customerID (US address with city and
// state).
func ownerInput(customerID, lastName string, pct int, roles ...string) kyc.OwnerInput {
	if len(roles) == 0 {
		roles = []string{"UBO", "CONTROL_PERSON"}
	}
	return kyc.OwnerInput{CustomerID: customerID, Roles: roles, OwnershipPercentage: ptr(pct),
		PersonalInfo: &kyc.PersonalInfoInput{
			FirstName: ptr("Jane"), LastName: ptr(lastName), BirthDate: ptr("1978-06-15"), Nationality: ptr("US"),
			Address: &ports.Address{Line1: "3 Oak Ave", City: "Austin", State: "TX", PostalCode: "73301", Country: "US"},
			IDType:  ptr("SSN"), Identifier: ptr("987-65-4321"),
		}}
}

func (e *env) createOwner(t *testing.T, in kyc.OwnerInput) ports.BeneficialOwner {
	t.Helper()
	o, err := e.svc.CreateOwner(context.Background(), e.platform, in)
	require.NoError(t, err)
	e.clock.Advance(time.Second)
	return o
}

// pdf, jpeg and png are the smallest contents each sniffs as.
var (
	pdf  = []byte("%PDF-1.4\n1 0 obj\n<<>>\nendobj\n%%EOF\n")
	jpeg = []byte{0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10, 'J', 'F', 'I', 'F', 0x00}
	png  = []byte{0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n', 0, 0, 0, 13, 'I', 'H', 'D', 'R'}
)

func (e *env) upload(t *testing.T, holderID, docType string, content []byte) ports.Document {
	t.Helper()
	d, err := e.svc.UploadDocument(context.Background(), e.platform, kyc.DocumentInput{
		HolderID: holderID, DocumentType: docType, Country: "US", FileName: "scan.pdf", Content: content})
	require.NoError(t, err)
	e.clock.Advance(time.Second)
	return d
}

func (e *env) submit(t *testing.T, customerID string) ports.Verification {
	t.Helper()
	v, err := e.svc.Submit(context.Background(), e.platform, customerID)
	require.NoError(t, err)
	e.clock.Advance(time.Second)
	return v
}

// events returns the types of the platform's events about resourceID.
func (e *env) events(t *testing.T, resourceID string) []string {
	t.Helper()
	rows, _, err := e.store.Read().Events().List(context.Background(), ports.EventFilter{PlatformID: e.platform, ResourceID: resourceID}, ports.Page{})
	require.NoError(t, err)
	var out []string
	for _, r := range rows {
		out = append(out, r.Type)
	}
	return out
}

// requireFields checks err is a 400 naming exactly fields.
func requireFields(t *testing.T, err error, fields ...string) {
	t.Helper()
	f, ok := fault.As(err)
	require.Truef(t, ok, "want a fault, got %v", err)
	require.Equal(t, fault.KindInvalid, f.Kind, err.Error())
	var got []string
	for _, fe := range f.Fields {
		got = append(got, fe.Field)
	}
	require.ElementsMatch(t, fields, got, err.Error())
}

func requireKind(t *testing.T, err error, kind fault.Kind, code string) {
	t.Helper()
	f, ok := fault.As(err)
	require.Truef(t, ok, "want a fault, got %v", err)
	require.Equal(t, kind, f.Kind, err.Error())
	require.Equal(t, code, f.Code, err.Error())
}
