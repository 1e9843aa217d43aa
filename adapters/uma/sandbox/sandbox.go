// Package sandbox is a ports.UmaDirectory of fixed sandbox receivers at one
// domain (CORRIDOR_SANDBOX_UMA_DOMAIN, default sandbox.local): the user part
// of the address says how a payment to it ends, so tests and integrators
// can reach every outcome without a real UMA counterparty.
package sandbox

import (
	"context"
	"fmt"
	"strings"

	"github.com/corridorpay/corridor/ports"
)

// DefaultDomain is the sandbox UMA domain when none is configured.
const DefaultDomain = "sandbox.local"

// Receivers are the sandbox receivers by user part ("$user@domain").
var Receivers = map[string]ports.UmaReceiver{
	"success.usd":      {Currencies: []string{"USD"}, Outcome: ports.UmaOutcomeSuccess},
	"success.eur":      {Currencies: []string{"EUR"}, Outcome: ports.UmaOutcomeSuccess},
	"success.mxn":      {Currencies: []string{"MXN"}, Outcome: ports.UmaOutcomeSuccess},
	"pending.long.usd": {Currencies: []string{"USD"}, Outcome: ports.UmaOutcomePendingLong},
	"fail.compliance.usd": {
		Currencies: []string{"USD"}, Outcome: ports.UmaOutcomeFailCompliance},
}

// Directory answers for the sandbox receivers at its domain.
type Directory struct {
	domain string
}

var _ ports.UmaDirectory = Directory{}

// New returns the directory of the sandbox receivers at domain
// (DefaultDomain when empty).
func New(domain string) Directory {
	if domain == "" {
		domain = DefaultDomain
	}
	return Directory{domain: strings.ToLower(domain)}
}

// Address is the sandbox address of a user part ("$success.usd@domain").
func (d Directory) Address(user string) string { return "$" + user + "@" + d.domain }

// Receiver returns the sandbox receiver at address, or ErrNotFound for any
// other address (another domain, or a user part that is not a receiver).
func (d Directory) Receiver(_ context.Context, address string) (ports.UmaReceiver, error) {
	user, domain, ok := strings.Cut(strings.TrimPrefix(strings.ToLower(address), "$"), "@")
	r, known := Receivers[user]
	if !ok || domain != d.domain || !known {
		return ports.UmaReceiver{}, fmt.Errorf("uma sandbox: %s: %w", address, ports.ErrNotFound)
	}
	r.Address = d.Address(user)
	r.Currencies = append([]string(nil), r.Currencies...)
	return r, nil
}
