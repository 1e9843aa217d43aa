package kyc

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/corridorpay/corridor/core/customers"
	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/core/money"
	"github.com/corridorpay/corridor/ports"
)

// Beneficial owner enumerations (reference BeneficialOwnerRole,
// IdentificationType).
var (
	Roles   = []string{"UBO", "DIRECTOR", "COMPANY_OFFICER", "CONTROL_PERSON", "TRUSTEE", "GENERAL_PARTNER"}
	IDTypes = customers.IDTypes
)

// Bounds of owner fields: the customer fields' (the reference fixes none
// beyond 0-100).
const (
	MaxOwnership  = 100
	maxText       = customers.MaxShort
	maxIdentifier = customers.MaxIdentifier
)

// PersonalInfoInput is personalInfo as a request sends it: nil is a field
// not sent. On create the reference's required fields must be there; on
// update each sent field replaces the stored one (the address as a whole).
type PersonalInfoInput struct {
	FirstName, MiddleName, LastName, BirthDate, Nationality *string
	Email, PhoneNumber                                      *string
	Address                                                 *ports.Address
	IDType, Identifier, CountryOfIssuance                   *string
}

// OwnerInput creates a beneficial owner.
type OwnerInput struct {
	CustomerID          string
	Roles               []string
	OwnershipPercentage *int
	PersonalInfo        *PersonalInfoInput
}

// OwnerUpdate changes the fields it sends (PATCH).
type OwnerUpdate struct {
	Roles               []string
	OwnershipPercentage *int
	PersonalInfo        *PersonalInfoInput
}

func errOwnerNotFound(id string) error {
	return fault.NotFound(codeNotFound, "beneficial owner "+id+" not found")
}

// CreateOwner adds a beneficial owner (UNVERIFIED) to a BUSINESS customer.
// The owners of one customer may own at most 100% together.
func (s *Service) CreateOwner(ctx context.Context, platformID string, in OwnerInput) (ports.BeneficialOwner, error) {
	now := s.now()
	chk := &checker{now: now}
	if in.CustomerID == "" {
		chk.Add("customerId", "is required")
	}
	if in.Roles == nil {
		chk.Add("roles", "is required")
	}
	chk.roles(in.Roles)
	if in.OwnershipPercentage == nil {
		chk.Add("ownershipPercentage", "is required")
	} else {
		chk.percentage(*in.OwnershipPercentage)
	}
	o := ports.BeneficialOwner{PlatformID: platformID, CustomerID: in.CustomerID, Roles: slices.Clone(in.Roles),
		KYCStatus: StatusUnverified, CreatedAt: now, UpdatedAt: now}
	if in.OwnershipPercentage != nil {
		o.OwnershipPercentage = *in.OwnershipPercentage
	}
	if in.PersonalInfo == nil {
		chk.Add("personalInfo", "is required")
	} else {
		chk.requirePersonalInfo(in.PersonalInfo)
		chk.personalInfo(in.PersonalInfo, &o.PersonalInfo)
	}
	if err := chk.Err(); err != nil {
		return ports.BeneficialOwner{}, err
	}
	o.ID = s.ids.New("BeneficialOwner")
	err := s.store.InTx(ctx, func(tx ports.Tx) error {
		c, err := customer(ctx, tx, platformID, in.CustomerID, true)
		if err != nil {
			return err
		}
		if c.CustomerType != customerTypeBusiness {
			return fault.Invalid("customerId", "only BUSINESS customers have beneficial owners")
		}
		if err := ownershipFits(ctx, tx, o); err != nil {
			return err
		}
		if err := tx.BeneficialOwners().Create(ctx, o); err != nil {
			return fmt.Errorf("create beneficial owner: %w", err)
		}
		return s.recheck(ctx, tx, c, now)
	})
	if err != nil {
		return ports.BeneficialOwner{}, err
	}
	return o, nil
}

// GetOwner returns the platform's beneficial owner (404 otherwise).
func (s *Service) GetOwner(ctx context.Context, platformID, id string) (ports.BeneficialOwner, error) {
	o, err := s.store.Read().BeneficialOwners().Get(ctx, platformID, id)
	if errors.Is(err, ports.ErrNotFound) {
		return ports.BeneficialOwner{}, errOwnerNotFound(id)
	}
	if err != nil {
		return ports.BeneficialOwner{}, fmt.Errorf("get beneficial owner %s: %w", id, err)
	}
	return o, nil
}

// ListOwners pages a business customer's owners, oldest first. The
// customer must be the platform's (404 otherwise).
func (s *Service) ListOwners(ctx context.Context, platformID, customerID string, page ports.Page) (Page[ports.BeneficialOwner], error) {
	if customerID == "" {
		return Page[ports.BeneficialOwner]{}, fault.Invalid("customerId", "is required")
	}
	if _, err := customer(ctx, s.store.Read(), platformID, customerID, false); err != nil {
		var f *fault.Error
		if errors.As(err, &f) && f.Kind == fault.KindGone {
			// A deleted customer's owners stay readable.
			err = nil
		}
		if err != nil {
			return Page[ports.BeneficialOwner]{}, err
		}
	}
	return listPage(page, func(p ports.Page) ([]ports.BeneficialOwner, int, error) {
		return s.store.Read().BeneficialOwners().List(ctx, ports.BeneficialOwnerFilter{PlatformID: platformID, CustomerID: customerID}, p)
	}, func(o ports.BeneficialOwner) ports.Position { return ports.Position{CreatedAt: o.CreatedAt, ID: o.ID} })
}

// OwnersOfCustomers returns, in one read, every owner of each of the
// customers (by customer id, oldest first): a page of business customers
// with their beneficialOwners.
func (s *Service) OwnersOfCustomers(ctx context.Context, platformID string, customerIDs []string) (map[string][]ports.BeneficialOwner, error) {
	out := map[string][]ports.BeneficialOwner{}
	if len(customerIDs) == 0 {
		return out, nil
	}
	rows, _, err := s.store.Read().BeneficialOwners().List(ctx,
		ports.BeneficialOwnerFilter{PlatformID: platformID, CustomerIDs: customerIDs}, ports.Page{})
	if err != nil {
		return nil, fmt.Errorf("list owners of %d customers: %w", len(customerIDs), err)
	}
	for _, o := range rows {
		out[o.CustomerID] = append(out[o.CustomerID], o)
	}
	return out, nil
}

func allOwners(ctx context.Context, tx kycTx, platformID, customerID string) ([]ports.BeneficialOwner, error) {
	rows, _, err := tx.BeneficialOwners().List(ctx, ports.BeneficialOwnerFilter{PlatformID: platformID, CustomerID: customerID}, ports.Page{})
	if err != nil {
		return nil, fmt.Errorf("list owners of %s: %w", customerID, err)
	}
	return rows, nil
}

// UpdateOwner changes the fields u sends: roles and ownershipPercentage
// replace the stored ones, personalInfo is merged field by field.
func (s *Service) UpdateOwner(ctx context.Context, platformID, id string, u OwnerUpdate) (ports.BeneficialOwner, error) {
	now := s.now()
	chk := &checker{now: now}
	if u.Roles != nil {
		chk.roles(u.Roles)
	}
	if u.OwnershipPercentage != nil {
		chk.percentage(*u.OwnershipPercentage)
	}
	if u.PersonalInfo != nil {
		chk.personalInfo(u.PersonalInfo, &ports.PersonalInfo{})
	}
	if err := chk.Err(); err != nil {
		return ports.BeneficialOwner{}, err
	}
	var out ports.BeneficialOwner
	err := s.store.InTx(ctx, func(tx ports.Tx) error {
		o, err := tx.BeneficialOwners().Get(ctx, platformID, id)
		if errors.Is(err, ports.ErrNotFound) {
			return errOwnerNotFound(id)
		}
		if err != nil {
			return fmt.Errorf("read beneficial owner %s: %w", id, err)
		}
		c, err := customer(ctx, tx, platformID, o.CustomerID, true)
		if err != nil {
			return err
		}
		if u.Roles != nil {
			o.Roles = slices.Clone(u.Roles)
		}
		if u.OwnershipPercentage != nil {
			o.OwnershipPercentage = *u.OwnershipPercentage
			if err := ownershipFits(ctx, tx, o); err != nil {
				return err
			}
		}
		if u.PersonalInfo != nil {
			// Checked again merged: an SSN sent alone must fit the stored idType.
			merged := &checker{now: now}
			merged.personalInfo(u.PersonalInfo, &o.PersonalInfo)
			if err := merged.Err(); err != nil {
				return err
			}
		}
		o.UpdatedAt = now
		if err := tx.BeneficialOwners().Update(ctx, o); err != nil {
			return fmt.Errorf("update beneficial owner %s: %w", id, err)
		}
		out = o
		return s.recheck(ctx, tx, c, now)
	})
	if err != nil {
		return ports.BeneficialOwner{}, err
	}
	return out, nil
}

// ownershipFits refuses an owner whose percentage would take the
// customer's owners above 100% together.
func ownershipFits(ctx context.Context, tx kycTx, o ports.BeneficialOwner) error {
	owners, err := allOwners(ctx, tx, o.PlatformID, o.CustomerID)
	if err != nil {
		return err
	}
	total := o.OwnershipPercentage
	for _, other := range owners {
		if other.ID != o.ID {
			total += other.OwnershipPercentage
		}
	}
	if total > MaxOwnership {
		return fault.Invalid("ownershipPercentage",
			fmt.Sprintf("the customer's owners would own %d%% together; at most %d%%", total, MaxOwnership))
	}
	return nil
}

// ---- input checks ----

// checker gathers field errors with the owner rules; text and addresses
// are checked by the customer field rules.
type checker struct {
	customers.Fields
	now time.Time
}

func (c *checker) roles(roles []string) {
	if roles == nil {
		return
	}
	if len(roles) == 0 {
		c.Add("roles", "must list at least one role")
	}
	if len(roles) > len(Roles) {
		c.Add("roles", fmt.Sprintf("must have at most %d items", len(Roles)))
		return
	}
	for i, r := range roles {
		switch {
		case !slices.Contains(Roles, r):
			c.Add(fmt.Sprintf("roles[%d]", i), "must be one of "+strings.Join(Roles, ", "))
		case slices.Contains(roles[:i], r):
			c.Add(fmt.Sprintf("roles[%d]", i), "is listed twice")
		}
	}
}

func (c *checker) percentage(p int) {
	if p < 0 || p > MaxOwnership {
		c.Add("ownershipPercentage", fmt.Sprintf("must be between 0 and %d", MaxOwnership))
	}
}

// requirePersonalInfo names the reference's required personalInfo fields
// that are missing on create.
func (c *checker) requirePersonalInfo(in *PersonalInfoInput) {
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"firstName", in.FirstName != nil}, {"lastName", in.LastName != nil}, {"birthDate", in.BirthDate != nil},
		{"nationality", in.Nationality != nil}, {"address", in.Address != nil}, {"idType", in.IDType != nil},
		{"identifier", in.Identifier != nil},
	} {
		if !f.set {
			c.Add("personalInfo."+f.name, "is required")
		}
	}
}

// personalInfo checks every sent field and copies it into out.
func (c *checker) personalInfo(in *PersonalInfoInput, out *ports.PersonalInfo) {
	const p = "personalInfo."
	text := func(name string, v *string, dst *string, max int) {
		if v == nil {
			return
		}
		c.Text(p+name, *v, max)
		*dst = *v
	}
	text("firstName", in.FirstName, &out.FirstName, maxText)
	text("middleName", in.MiddleName, &out.MiddleName, maxText)
	text("lastName", in.LastName, &out.LastName, maxText)
	if in.BirthDate != nil {
		c.birthDate(p+"birthDate", *in.BirthDate)
		out.BirthDate = *in.BirthDate
	}
	if in.Nationality != nil {
		c.country(p+"nationality", *in.Nationality)
		out.Nationality = *in.Nationality
	}
	if in.Email != nil {
		c.email(p+"email", *in.Email)
		out.Email = *in.Email
	}
	if in.PhoneNumber != nil {
		if !customers.ValidPhone(*in.PhoneNumber) {
			c.Add(p+"phoneNumber", "must be an E.164 phone number (+ then up to 15 digits)")
		}
		out.PhoneNumber = *in.PhoneNumber
	}
	if in.Address != nil {
		c.Address(p+"address", in.Address)
		a := *in.Address
		out.Address = &a
	}
	if in.IDType != nil {
		if !slices.Contains(IDTypes, *in.IDType) {
			c.Add(p+"idType", "must be one of "+strings.Join(IDTypes, ", "))
		}
		out.IDType = *in.IDType
	}
	text("identifier", in.Identifier, &out.Identifier, maxIdentifier)
	if in.CountryOfIssuance != nil {
		c.country(p+"countryOfIssuance", *in.CountryOfIssuance)
		out.CountryOfIssuance = *in.CountryOfIssuance
	}
	// An SSN or ITIN must look like one (whichever of the two was sent).
	if (out.IDType == "SSN" || out.IDType == "ITIN") && out.Identifier != "" && !customers.ValidUSTaxID(out.Identifier) &&
		(in.IDType != nil || in.Identifier != nil) {
		c.Add(p+"identifier", "an "+out.IDType+" has nine digits (###-##-####)")
	}
}

func (c *checker) country(field, v string) {
	if !money.IsCountry(v) {
		c.Add(field, "must be an ISO 3166-1 alpha-2 country code")
	}
}

// birthDate checks a real YYYY-MM-DD date, not in the future.
func (c *checker) birthDate(field, v string) {
	d, err := time.Parse(time.DateOnly, v)
	if err != nil {
		c.Add(field, "must be a real date formatted YYYY-MM-DD")
		return
	}
	if d.Format(time.DateOnly) > c.now.UTC().Format(time.DateOnly) {
		c.Add(field, "must not be in the future")
	}
}

// email checks a sent e-mail as a customer's is checked ("" included: a
// sent owner e-mail is never empty).
func (c *checker) email(field, v string) {
	if !customers.ValidEmail(v) {
		c.Add(field, "must be an e-mail address")
	}
}
