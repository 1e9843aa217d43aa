// Package events records and delivers what a platform hears of by
// webhook. A change records its event in the same database transaction
// (ports.EventRepo, the outbox); the event's delivery job then POSTs the
// reference's envelope, signed, to the platform's webhook endpoint, with
// retries on a schedule of about three days (Deliverer).
package events

import (
	"time"

	"github.com/corridorpay/corridor/ports"
)

// TypeTest is the type of the sandbox's test event.
const TypeTest = "TEST"

// New is the event of a change of type typ to the resource resourceID of
// platformID at at: resource is its port value after the change (what the
// webhook's data shows, rendered as the API would).
func New(ids ports.IDs, platformID, typ, resourceID string, resource any, at time.Time) (ports.Event, error) {
	return ports.NewEvent(ids.New("Webhook"), platformID, typ, resourceID, resource, at)
}
