package kyc

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/ports"
)

// CodeUserNotReady is the reference's 403 for a customer that exists but
// may not do the operation yet.
const CodeUserNotReady = "USER_NOT_READY"

// BlockedStatuses are the kycStatus (kybStatus) values that stop a
// customer's outgoing payments: a verification under way (PENDING), a
// rejected one (REJECTED), or a customer put on hold (HOLD). UNVERIFIED
// customers may send: nothing has been asked of this service yet (a
// platform that verifies its customers itself sets their status, and a
// test environment works without onboarding); once a verification runs,
// its outcome governs.
var BlockedStatuses = []string{StatusPending, StatusRejected, StatusHold}

// OutgoingAllowed says whether customer c may send an outgoing payment:
// nil, or 403 USER_NOT_READY naming the customer and its status.
func OutgoingAllowed(c ports.Customer) error {
	if !slices.Contains(BlockedStatuses, c.KYCStatus) {
		return nil
	}
	field := "kycStatus"
	if c.CustomerType == customerTypeBusiness {
		field = "kybStatus"
	}
	e := fault.New(fault.KindForbidden, CodeUserNotReady,
		fmt.Sprintf("customer %s cannot send payments while its %s is %s", c.ID, field, c.KYCStatus))
	e.Details = map[string]any{"customerId": c.ID, field: c.KYCStatus}
	return e
}

// CustomerReader reads customers (ports.Tx and Store.Read() do).
type CustomerReader interface {
	Customers() ports.CustomerRepo
}

// CanSendOutgoing checks, through r (a unit of work or Store.Read()),
// that the platform's customer may send an outgoing payment (see
// OutgoingAllowed). The platform's own accounts (customerID "") always
// may; an unknown customer is 404 USER_NOT_FOUND.
func CanSendOutgoing(ctx context.Context, r CustomerReader, platformID, customerID string) error {
	if customerID == "" {
		return nil
	}
	c, err := r.Customers().Get(ctx, platformID, customerID)
	if errors.Is(err, ports.ErrNotFound) {
		return fault.NotFound(codeUserNotFound, "customer "+customerID+" not found")
	}
	if err != nil {
		return fmt.Errorf("read customer %s: %w", customerID, err)
	}
	return OutgoingAllowed(c)
}
