// Package system adapts the real world's clock and randomness to ports.
package system

import (
	"time"

	"github.com/google/uuid"
)

// Clock is the wall clock, in UTC.
type Clock struct{}

// Now returns the current time in UTC.
func (Clock) Now() time.Time { return time.Now().UTC() }

// IDs makes "<Type>:<uuid>" identifiers from random (v4) UUIDs.
type IDs struct{}

// New returns resourceType + ":" + a new UUID.
func (IDs) New(resourceType string) string { return resourceType + ":" + uuid.NewString() }
