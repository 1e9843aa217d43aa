// Package system adapts the real world's clock and randomness to ports.
package system

import (
	"time"

	"github.com/google/uuid"

	"github.com/corridorpay/corridor/ports"
)

// Clock is the wall clock, in UTC, to the microsecond.
type Clock struct{}

// Now returns the current time in UTC, truncated to the microsecond: what
// PostgreSQL (and the memory store, which stores as it does) keeps, so a
// timestamp in the response that creates or changes a resource is the one
// every later read of it returns.
func (Clock) Now() time.Time { return ports.Stored(time.Now()) }

// IDs makes "<Type>:<uuid>" identifiers from random (v4) UUIDs.
type IDs struct{}

// New returns resourceType + ":" + a new UUID.
func (IDs) New(resourceType string) string { return resourceType + ":" + uuid.NewString() }
