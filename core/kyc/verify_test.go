package kyc_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/core/kyc"
	"github.com/corridorpay/corridor/ports"
)

// TestVerificationStatuses reaches every verification status and checks
// what follows from it: errors, the customer's and owners' statuses.
func TestVerificationStatuses(t *testing.T) {
	for _, tc := range []struct {
		name            string
		business, owner string // provider decisions ("" approves)
		want            string
		customer        string
		ownerStatus     string
		errors          []string
	}{
		{"approved", "", "", kyc.VerificationApproved, kyc.StatusApproved, kyc.StatusApproved, []string{}},
		{"the provider is still checking", ports.KYCPending, "", kyc.VerificationInProgress, kyc.StatusPending, kyc.StatusApproved, []string{}},
		{"an owner still being checked", "", ports.KYCPending, kyc.VerificationInProgress, kyc.StatusPending, kyc.StatusPending, []string{}},
		{"manual review", ports.KYCReview, "", kyc.VerificationManualReview, kyc.StatusPending, kyc.StatusApproved, []string{}},
		{"business rejected", ports.KYCRejected, "", kyc.VerificationRejected, kyc.StatusRejected, kyc.StatusApproved, []string{"$c APPLICANT_REJECTED"}},
		{"an owner rejected rejects the business", "", ports.KYCRejected, kyc.VerificationRejected, kyc.StatusRejected, kyc.StatusRejected, []string{"$o APPLICANT_REJECTED"}},
		{"rejection beats review", ports.KYCReview, ports.KYCRejected, kyc.VerificationRejected, kyc.StatusRejected, kyc.StatusRejected, []string{"$o APPLICANT_REJECTED"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			c := e.addCustomer(t, usBusiness("HRB-1"))
			o := e.createOwner(t, ownerInput(c.ID, "Doe", 60))
			e.upload(t, c.ID, "UTILITY_BILL", pdf)
			if tc.business != "" {
				e.provider.set(c.ID, tc.business)
			}
			if tc.owner != "" {
				e.provider.set(o.ID, tc.owner)
			}
			v := e.submit(t, c.ID)
			assert.Equal(t, tc.want, v.Status)
			require.NotNil(t, v.SubmittedAt)
			var want []string
			for _, s := range tc.errors {
				want = append(want, map[string]string{"$c": c.ID, "$o": o.ID}[s[:2]]+s[2:])
			}
			if want == nil {
				want = []string{}
			}
			assert.Equal(t, want, brief(v.Errors))
			assert.Equal(t, tc.customer, e.customer(t, c.ID).KYCStatus)
			assert.Equal(t, tc.ownerStatus, e.owner(t, o.ID).KYCStatus)
			assert.Equal(t, []string{"VERIFICATION." + tc.want}, e.events(t, v.ID))
			assert.Equal(t, []string{"CUSTOMER.KYB_" + tc.customer}, e.events(t, c.ID))
			got, err := e.svc.GetVerification(context.Background(), e.platform, v.ID)
			require.NoError(t, err)
			assert.Equal(t, v, got, "the response is what is stored")
		})
	}
}

// TestResolveErrorsThenReady walks the data-gathering states: a verification
// lists what is missing, documents and owners are checked again as they
// arrive (READY_FOR_VERIFICATION once nothing is missing), and a
// resubmission goes to the provider.
func TestResolveErrorsThenReady(t *testing.T) {
	t.Run("memory", func(t *testing.T) { resolveErrorsThenReady(t, newEnv(t)) })
	t.Run("postgres", func(t *testing.T) { resolveErrorsThenReady(t, newPostgresEnv(t)) })
}

func resolveErrorsThenReady(t *testing.T, e *env) {
	ctx := context.Background()
	c := e.addCustomer(t, usBusiness("HRB-7"))
	v := e.submit(t, c.ID)
	assert.Equal(t, kyc.VerificationResolveErrors, v.Status)
	assert.Equal(t, []string{
		c.ID + " MISSING_PROOF_OF_ADDRESS_DOCUMENT " + "[PROOF_OF_ADDRESS UTILITY_BILL RENT_OR_LEASE_AGREEMENT ELECTRICITY_BILL BANK_STATEMENT TAX_RETURN]",
		c.ID + " MISSING_BENEFICIAL_OWNER", c.ID + " MISSING_CONTROL_PERSON",
	}, brief(v.Errors))
	assert.Zero(t, e.provider.calls, "nothing goes to the provider while data is missing")
	assert.Equal(t, kyc.StatusUnverified, e.customer(t, c.ID).KYCStatus, "missing data leaves the status")

	// An owner without a city: the owner's field is now the missing one.
	in := ownerInput(c.ID, "Doe", 40)
	in.PersonalInfo.Address = &ports.Address{Line1: "3 Oak Ave", State: "TX", PostalCode: "73301", Country: "US"}
	o := e.createOwner(t, in)
	v, err := e.svc.GetVerification(ctx, e.platform, v.ID)
	require.NoError(t, err)
	assert.Equal(t, []string{
		c.ID + " MISSING_PROOF_OF_ADDRESS_DOCUMENT " + "[PROOF_OF_ADDRESS UTILITY_BILL RENT_OR_LEASE_AGREEMENT ELECTRICITY_BILL BANK_STATEMENT TAX_RETURN]",
		o.ID + " MISSING_FIELD personalInfo.address.city",
	}, brief(v.Errors))

	_, err = e.svc.UpdateOwner(ctx, e.platform, o.ID, kyc.OwnerUpdate{PersonalInfo: &kyc.PersonalInfoInput{
		Address: &ports.Address{Line1: "3 Oak Ave", City: "Austin", State: "TX", PostalCode: "73301", Country: "US"}}})
	require.NoError(t, err)
	doc := e.upload(t, c.ID, "PROOF_OF_ADDRESS", pdf)
	v, err = e.svc.GetVerification(ctx, e.platform, v.ID)
	require.NoError(t, err)
	assert.Equal(t, kyc.VerificationReady, v.Status)
	assert.Empty(t, v.Errors)

	// Deleting the document takes it back to RESOLVE_ERRORS; uploading
	// again makes it ready.
	require.NoError(t, e.svc.DeleteDocument(ctx, e.platform, doc.ID))
	e.clock.Advance(time.Second)
	v, _ = e.svc.GetVerification(ctx, e.platform, v.ID)
	assert.Equal(t, kyc.VerificationResolveErrors, v.Status)
	e.upload(t, c.ID, "BANK_STATEMENT", png)

	v2 := e.submit(t, c.ID)
	assert.Equal(t, v.ID, v2.ID, "a resubmission continues the same verification")
	assert.Equal(t, kyc.VerificationApproved, v2.Status)
	assert.Equal(t, kyc.StatusApproved, e.customer(t, c.ID).KYCStatus)
	assert.Equal(t, kyc.StatusApproved, e.owner(t, o.ID).KYCStatus)
	assert.Equal(t, []string{"VERIFICATION.RESOLVE_ERRORS", "VERIFICATION.RESOLVE_ERRORS", "VERIFICATION.APPROVED"},
		e.events(t, v.ID), "no event for READY_FOR_VERIFICATION: no reference webhook carries it")
	assert.Equal(t, []string{"CUSTOMER.KYB_APPROVED"}, e.events(t, c.ID))
	assert.Empty(t, e.events(t, o.ID), "the reference has no webhook type for an owner")

	// Final: POST reads it; the provider is not asked again.
	calls := e.provider.calls
	e.provider.set(c.ID, ports.KYCRejected)
	again := e.submit(t, c.ID)
	assert.Equal(t, v2, again)
	assert.Equal(t, calls, e.provider.calls)

	list, err := e.svc.ListVerifications(ctx, e.platform, ports.VerificationFilter{CustomerID: c.ID}, ports.Page{})
	require.NoError(t, err)
	assert.Equal(t, 1, list.Total)
}

// TestInProgressResubmission: an open verification asks the provider again.
func TestInProgressResubmission(t *testing.T) {
	e := newEnv(t)
	c := e.addCustomer(t, usIndividual("Ada"))
	e.provider.set(c.ID, ports.KYCPending)
	v := e.submit(t, c.ID)
	assert.Equal(t, kyc.VerificationInProgress, v.Status)
	assert.Equal(t, kyc.StatusPending, e.customer(t, c.ID).KYCStatus)
	e.provider.set(c.ID, ports.KYCApproved)
	v = e.submit(t, c.ID)
	assert.Equal(t, kyc.VerificationApproved, v.Status)
	assert.Equal(t, kyc.StatusApproved, e.customer(t, c.ID).KYCStatus)
	assert.Equal(t, []string{"CUSTOMER.KYC_PENDING", "CUSTOMER.KYC_APPROVED"}, e.events(t, c.ID))
}

func TestSubmitErrors(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	_, err := e.svc.Submit(ctx, e.platform, "")
	requireFields(t, err, "customerId")
	_, err = e.svc.Submit(ctx, e.platform, "Customer:nope")
	requireKind(t, err, fault.KindNotFound, "USER_NOT_FOUND")
	c := e.addCustomer(t, usIndividual("Ada"))
	_, err = e.svc.Submit(ctx, e.addPlatform(t), c.ID)
	requireKind(t, err, fault.KindNotFound, "USER_NOT_FOUND")
	deleted := usIndividual("Bob")
	deleted.IsDeleted = true
	d := e.addCustomer(t, deleted)
	_, err = e.svc.Submit(ctx, e.platform, d.ID)
	requireKind(t, err, fault.KindGone, "CUSTOMER_DELETED")
	_, err = e.svc.GetVerification(ctx, e.platform, "Verification:nope")
	requireKind(t, err, fault.KindNotFound, "NOT_FOUND")
	_, err = e.svc.ListVerifications(ctx, e.platform, ports.VerificationFilter{Status: "DONE"}, ports.Page{})
	requireFields(t, err, "verificationStatus")
	_, err = e.svc.ListVerifications(ctx, e.platform, ports.VerificationFilter{}, ports.Page{Limit: 101})
	requireFields(t, err, "limit")
}

// TestConcurrentSubmissions: one verification per customer, however many
// requests race.
func TestConcurrentSubmissions(t *testing.T) {
	t.Run("memory", func(t *testing.T) { concurrentSubmissions(t, newEnv(t)) })
	t.Run("postgres", func(t *testing.T) { concurrentSubmissions(t, newPostgresEnv(t)) })
}

func concurrentSubmissions(t *testing.T, e *env) {
	c := e.addCustomer(t, usIndividual("Ada"))
	var wg sync.WaitGroup
	ids := make([]string, 8)
	for i := range ids {
		wg.Go(func() {
			v, err := e.svc.Submit(context.Background(), e.platform, c.ID)
			if assert.NoError(t, err) {
				ids[i] = v.ID
			}
		})
	}
	wg.Wait()
	for _, id := range ids {
		assert.Equal(t, ids[0], id)
	}
	assert.Equal(t, []string{"CUSTOMER.KYC_APPROVED"}, e.events(t, c.ID), "one status change")
}
