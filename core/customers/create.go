package customers

import (
	"context"
	"fmt"
	"strings"

	"github.com/corridorpay/corridor/core/money"
	"github.com/corridorpay/corridor/ports"
)

// Create validates in and creates a customer of the platform, together
// with its internal accounts (one per currency), its embedded wallet and
// EMAIL_OTP credential when it has an e-mail, and their ledger accounts, in
// one transaction. Omitted values are filled in: platformCustomerId and
// umaAddress are generated, currencies inferred from the region, kycStatus
// (kybStatus) starts UNVERIFIED.
func (s *Service) Create(ctx context.Context, platformID string, in Input) (ports.Customer, error) {
	now := s.now()
	chk := &checker{now: now}
	c := ports.Customer{PlatformID: platformID, KYCStatus: StatusUnverified, CreatedAt: now, UpdatedAt: now}

	switch in.CustomerType {
	case "":
		chk.Add("customerType", "is required")
	case TypeIndividual, TypeBusiness:
		c.CustomerType = in.CustomerType
	default:
		chk.Add("customerType", "must be one of "+strings.Join(CustomerTypes, ", "))
	}
	applyFields(chk, []strField{
		{"platformCustomerId", in.PlatformCustomerID, &c.PlatformCustomerID, textRule(MaxPlatformCustomer)},
		{"region", in.Region, &c.Region, countryRule},
	}, nil)
	apply(chk, &c, in)
	if c.CustomerType == TypeBusiness {
		requireBusiness(chk, in.Business)
	}
	if in.Currencies == nil {
		if c.Region != "" {
			c.Currencies = money.CurrenciesForRegion(c.Region)
		} else {
			c.Currencies = append([]string(nil), money.DefaultCurrencies...)
		}
	}
	if err := chk.Err(); err != nil {
		return ports.Customer{}, err
	}
	if err := s.checkDirectory(ctx, c.UmaAddress); err != nil {
		return ports.Customer{}, err
	}

	c.ID = s.ids.New("Customer")
	if c.PlatformCustomerID == "" {
		c.PlatformCustomerID = localPart(c.ID)
	}
	err := s.store.InTx(ctx, func(tx ports.Tx) error {
		row := c
		if row.UmaAddress == "" {
			domain, err := s.umaDomain(ctx, tx, platformID)
			if err != nil {
				return err
			}
			row.UmaAddress = "$" + localPart(row.ID) + "@" + domain
		}
		if err := tx.Customers().Create(ctx, row); err != nil {
			return fmt.Errorf("create customer: %w", storeConflict(err, row))
		}
		if err := s.provision(ctx, tx, row, nil, now); err != nil {
			return err
		}
		c = row
		return nil
	})
	if err != nil {
		return ports.Customer{}, err
	}
	return c, nil
}

// requireBusiness checks the businessInfo fields a new business needs.
func requireBusiness(chk *checker, b *BusinessFields) {
	if b == nil {
		chk.Add("businessInfo", "is required for BUSINESS customers")
		return
	}
	for _, f := range []struct {
		name string
		v    *string
	}{
		{"legalName", b.LegalName}, {"country", b.Country}, {"taxId", b.TaxID}, {"incorporatedOn", b.IncorporatedOn},
	} {
		if f.v == nil {
			chk.Add("businessInfo."+f.name, "is required")
		}
	}
}

// umaDomain is the platform's UMA domain, else the service default.
func (s *Service) umaDomain(ctx context.Context, tx customerTx, platformID string) (string, error) {
	p, err := tx.Platforms().Get(ctx, platformID)
	if err != nil {
		return "", fmt.Errorf("read platform %s: %w", platformID, err)
	}
	if p.UmaDomain != "" {
		return p.UmaDomain, nil
	}
	return s.opts.UmaDomain, nil
}

// localPart turns "Customer:<uuid>" into a short lowercase token usable as
// a platformCustomerId and as the user part of an UMA address: the id's
// hex digits (or, for ids not built from a UUID, its allowed characters).
func localPart(id string) string {
	if i := strings.IndexByte(id, ':'); i >= 0 {
		id = id[i+1:]
	}
	var b strings.Builder
	for _, r := range strings.ToLower(id) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r == '.' || r == '_' {
			b.WriteRune(r)
		}
	}
	out := b.String()
	if len(out) > MaxUmaUser {
		out = out[:MaxUmaUser]
	}
	if out == "" {
		out = "customer"
	}
	return out
}
