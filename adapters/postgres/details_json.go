package postgres

import (
	"time"

	"github.com/corridorpay/corridor/ports"
)

// The JSON documents of the quotes' and transactions' jsonb columns
// (migrations/0005_quotes.sql). Their keys are this store's format, so
// they live here, not as tags on the ports types; they are the reference's
// wire names, which the rows stored so far already use.

type storeRateDetails struct {
	CounterpartyMultiplier   string `json:"counterpartyMultiplier,omitempty"`
	CounterpartyFixedFee     int64  `json:"counterpartyFixedFee"`
	ServiceMultiplier        string `json:"serviceMultiplier,omitempty"`
	ServiceFixedFee          int64  `json:"serviceFixedFee"`
	ServiceVariableFeeRate   string `json:"serviceVariableFeeRate,omitempty"`
	ServiceVariableFeeAmount int64  `json:"serviceVariableFeeAmount"`
}

func rateDetailsToStore(d ports.RateDetails) storeRateDetails { return storeRateDetails(d) }

func (d storeRateDetails) toPort() ports.RateDetails { return ports.RateDetails(d) }

type storeInstruction struct {
	InstructionsNotes string         `json:"instructionsNotes,omitempty"`
	IsPlatformAccount bool           `json:"isPlatformAccount"`
	Info              map[string]any `json:"accountOrWalletInfo,omitempty"`
}

// instructionsToStore writes a nil list as [] (the quotes column is NOT
// NULL); instructionsFromStore reads an empty one back as nil and each
// empty map as nil, as the memory store does.
func instructionsToStore(l []ports.PaymentInstruction) []storeInstruction {
	out := make([]storeInstruction, len(l))
	for i, p := range l {
		out[i] = storeInstruction(p)
	}
	return out
}

func instructionsFromStore(l []storeInstruction) []ports.PaymentInstruction {
	if len(l) == 0 {
		return nil
	}
	out := make([]ports.PaymentInstruction, len(l))
	for i, p := range l {
		out[i] = ports.PaymentInstruction(p)
		out[i].Info = storeJSONMap(out[i].Info, false)
	}
	return out
}

type storeRefund struct {
	Reference   string     `json:"reference"`
	InitiatedAt time.Time  `json:"initiatedAt"`
	SettledAt   *time.Time `json:"settledAt,omitempty"`
	Status      string     `json:"status"`
	Reason      string     `json:"reason,omitempty"`
}

// storeDetails is a transaction's details document.
type storeDetails struct {
	SourceType            string             `json:"sourceType,omitempty"`
	DestinationType       string             `json:"destinationType,omitempty"`
	SourceUmaAddress      string             `json:"sourceUmaAddress,omitempty"`
	DestinationUmaAddress string             `json:"destinationUmaAddress,omitempty"`
	RateDetails           *storeRateDetails  `json:"rateDetails,omitempty"`
	CounterpartyInfo      map[string]any     `json:"counterpartyInformation,omitempty"`
	PaymentInstructions   []storeInstruction `json:"paymentInstructions,omitempty"`
	Refund                *storeRefund       `json:"refund,omitempty"`
	TransactionHash       string             `json:"transactionHash,omitempty"`
	ExpectedSettlementAt  *time.Time         `json:"expectedSettlementAt,omitempty"`
	Approval              *storeApproval     `json:"approval,omitempty"`
	RequestKey            string             `json:"requestKey,omitempty"`
}

// storeApproval is an incoming payment's approval (ports.Approval).
type storeApproval struct {
	Deadline        time.Time    `json:"deadline"`
	HoldIDs         []string     `json:"holdIds,omitempty"`
	RequestedFields []storeField `json:"requestedFields,omitempty"`
}

type storeField struct {
	Name      string `json:"name"`
	Mandatory bool   `json:"mandatory"`
}

func approvalToStore(a *ports.Approval) *storeApproval {
	if a == nil {
		return nil
	}
	out := &storeApproval{Deadline: ports.Stored(a.Deadline), HoldIDs: a.HoldIDs}
	for _, f := range a.RequestedFields {
		out.RequestedFields = append(out.RequestedFields, storeField{Name: f.Name, Mandatory: f.Mandatory})
	}
	return out
}

func (a *storeApproval) toPort() *ports.Approval {
	if a == nil {
		return nil
	}
	out := &ports.Approval{Deadline: ports.Stored(a.Deadline), HoldIDs: a.HoldIDs}
	for _, f := range a.RequestedFields {
		out.RequestedFields = append(out.RequestedFields, ports.CounterpartyField{Name: f.Name, Mandatory: f.Mandatory})
	}
	return out
}

// detailsToStore converts d, with its times as the timestamptz columns
// keep them (UTC, microseconds), so the document and the memory store
// agree.
func detailsToStore(d ports.TransactionDetails) storeDetails {
	out := storeDetails{SourceType: d.SourceType, DestinationType: d.DestinationType,
		SourceUmaAddress: d.SourceUmaAddress, DestinationUmaAddress: d.DestinationUmaAddress,
		CounterpartyInfo: d.CounterpartyInfo, TransactionHash: d.TransactionHash,
		ExpectedSettlementAt: ports.StoredPtr(d.ExpectedSettlementAt), Approval: approvalToStore(d.Approval),
		RequestKey: d.RequestKey}
	if d.RateDetails != nil {
		rd := rateDetailsToStore(*d.RateDetails)
		out.RateDetails = &rd
	}
	if len(d.PaymentInstructions) > 0 {
		out.PaymentInstructions = instructionsToStore(d.PaymentInstructions)
	}
	if r := d.Refund; r != nil {
		out.Refund = &storeRefund{Reference: r.Reference, InitiatedAt: ports.Stored(r.InitiatedAt),
			SettledAt: ports.StoredPtr(r.SettledAt), Status: r.Status, Reason: r.Reason}
	}
	return out
}

func (d storeDetails) toPort() ports.TransactionDetails {
	out := ports.TransactionDetails{SourceType: d.SourceType, DestinationType: d.DestinationType,
		SourceUmaAddress: d.SourceUmaAddress, DestinationUmaAddress: d.DestinationUmaAddress,
		CounterpartyInfo: d.CounterpartyInfo, TransactionHash: d.TransactionHash,
		PaymentInstructions:  instructionsFromStore(d.PaymentInstructions),
		ExpectedSettlementAt: ports.StoredPtr(d.ExpectedSettlementAt), Approval: d.Approval.toPort(),
		RequestKey: d.RequestKey}
	if d.RateDetails != nil {
		rd := d.RateDetails.toPort()
		out.RateDetails = &rd
	}
	if r := d.Refund; r != nil {
		out.Refund = &ports.Refund{Reference: r.Reference, InitiatedAt: ports.Stored(r.InitiatedAt),
			SettledAt: ports.StoredPtr(r.SettledAt), Status: r.Status, Reason: r.Reason}
	}
	return out
}
