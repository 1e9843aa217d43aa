package quotes

import (
	"github.com/corridorpay/corridor/ledger"
	"github.com/corridorpay/corridor/ports"
)

// HoldEntry exposes the execution's hold entry, to simulate a crash
// between placing the holds and recording the execution.
func HoldEntry(q ports.Quote) ledger.Entry { return holdEntry(q) }
