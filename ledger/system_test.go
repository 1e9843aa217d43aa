package ledger_test

import (
	"testing"

	"github.com/corridorpay/corridor/ledger"
)

func TestSystemAccountByID(t *testing.T) {
	for _, a := range ledger.SystemAccounts([]string{"USD", "EUR"}, map[string][]string{"ACH": {"USD"}, "UMA": {"EUR"}}) {
		got, ok := ledger.SystemAccountByID(a.ID)
		if !ok || got != a {
			t.Errorf("SystemAccountByID(%q) = %+v, %v; want %+v", a.ID, got, ok, a)
		}
	}
	for _, id := range []string{"", "InternalAccount:1", "sys:", "sys:fee_revenue", "sys:fee_revenue:", "sys:rail_settlement:USD",
		"sys:rail_settlement::USD", "sys:fx_position:USD:extra", "sys:unknown:USD"} {
		if a, ok := ledger.SystemAccountByID(id); ok {
			t.Errorf("SystemAccountByID(%q) = %+v, want not ok", id, a)
		}
	}
}
