package ledger

import "strings"

// System accounts model the world outside corridor's customers. They have no
// balance bounds (no flags): money enters through the sandbox funding source,
// leaves through a rail's settlement account, and is converted through the FX
// position accounts. Their ids are stable strings so every instance derives
// the same ones:
//
//	sys:sandbox_funding:<CUR>
//	sys:fee_revenue:<CUR>
//	sys:fx_position:<CUR>
//	sys:rail_settlement:<RAIL>:<CUR>
//	sys:agent_hold:<CUR>
const systemPrefix = "sys:"

// SandboxFundingID is the account sandbox funding is debited from.
func SandboxFundingID(currency string) string {
	return systemPrefix + KindSandboxFunding + ":" + currency
}

// FeeRevenueID is the account fees are credited to.
func FeeRevenueID(currency string) string { return systemPrefix + KindFeeRevenue + ":" + currency }

// FXPositionID is the liquidity account a currency is converted through.
func FXPositionID(currency string) string { return systemPrefix + KindFXPosition + ":" + currency }

// RailSettlementID is money in flight on a rail (ACH, WIRE, LIGHTNING…).
func RailSettlementID(rail, currency string) string {
	return systemPrefix + KindRailSettlement + ":" + rail + ":" + currency
}

// AgentHoldID is the account agent actions awaiting approval hold their
// funds toward.
func AgentHoldID(currency string) string { return systemPrefix + KindAgentHold + ":" + currency }

// IsSystemAccount reports whether id names a system account.
func IsSystemAccount(id string) bool { return strings.HasPrefix(id, systemPrefix) }

// SystemAccounts returns the system accounts for the given currencies and
// rails: sandbox funding, fee revenue and FX position per currency, and a
// settlement account per rail and currency pair in rails (rail -> currencies).
func SystemAccounts(currencies []string, rails map[string][]string) []Account {
	var out []Account
	for _, c := range currencies {
		out = append(out,
			Account{ID: SandboxFundingID(c), Currency: c, Kind: KindSandboxFunding},
			Account{ID: FeeRevenueID(c), Currency: c, Kind: KindFeeRevenue},
			Account{ID: FXPositionID(c), Currency: c, Kind: KindFXPosition},
		)
	}
	for rail, curs := range rails {
		for _, c := range curs {
			out = append(out, Account{ID: RailSettlementID(rail, c), Currency: c, Kind: KindRailSettlement})
		}
	}
	return out
}

// SystemAccountByID returns the system account an id names (its kind and
// currency are part of the id), so a use case can create one on first use.
// ok is false for an id that is not a well-formed system account id.
func SystemAccountByID(id string) (acct Account, ok bool) {
	if !IsSystemAccount(id) {
		return Account{}, false
	}
	parts := strings.Split(strings.TrimPrefix(id, systemPrefix), ":")
	kind, cur := parts[0], parts[len(parts)-1]
	want := 2
	switch kind {
	case KindSandboxFunding, KindFeeRevenue, KindFXPosition, KindAgentHold:
	case KindRailSettlement:
		want = 3
	default:
		return Account{}, false
	}
	if len(parts) != want || cur == "" || parts[want-2] == "" {
		return Account{}, false
	}
	return Account{ID: id, Currency: cur, Kind: kind}, true
}
