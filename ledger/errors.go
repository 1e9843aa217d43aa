package ledger

import (
	"errors"
	"fmt"
)

// Code names why an entry was refused. Codes are checked in the order they
// are declared (precedence, as TigerBeetle lists its results): the first that
// applies is reported.
type Code uint8

const (
	CodeOK Code = iota
	CodeEntryEmpty
	CodeIDMissing
	// CodeKindInvalid: the transfer's kind is none of Single, Pending,
	// PostPending, VoidPending.
	CodeKindInvalid
	// CodeAmountInvalid: a new transfer's amount is not positive, or a
	// resolution's is negative.
	CodeAmountInvalid
	CodeSameAccount
	CodeAccountNotFound
	CodeCurrencyMismatch
	CodePendingNotFound
	CodePendingAlreadyPosted
	CodePendingAlreadyVoided
	CodePendingExpired
	// CodeExpiryPremature: an expiry (a void with CodeExpiry) of a hold
	// that has no deadline or whose deadline has not passed.
	CodeExpiryPremature
	CodeExceedsPendingAmount
	// CodeOverflow: the amount would overflow an account's counters.
	CodeOverflow
	CodeExceedsCredits
	CodeExceedsDebits
	CodeExists
	CodeExistsWithDifferentFields
	CodeReversalNotAllowed
	CodeAlreadyReversed
	// CodeTransferIDExists: a transfer id is already used by another entry.
	CodeTransferIDExists
)

var codeNames = map[Code]string{
	CodeOK:                        "ok",
	CodeEntryEmpty:                "entry_empty",
	CodeIDMissing:                 "id_missing",
	CodeKindInvalid:               "kind_invalid",
	CodeAmountInvalid:             "amount_invalid",
	CodeSameAccount:               "same_account",
	CodeAccountNotFound:           "account_not_found",
	CodeCurrencyMismatch:          "currency_mismatch",
	CodePendingNotFound:           "pending_not_found",
	CodePendingAlreadyPosted:      "pending_already_posted",
	CodePendingAlreadyVoided:      "pending_already_voided",
	CodePendingExpired:            "pending_expired",
	CodeExpiryPremature:           "expiry_premature",
	CodeExceedsPendingAmount:      "exceeds_pending_amount",
	CodeOverflow:                  "overflow",
	CodeExceedsCredits:            "exceeds_credits",
	CodeExceedsDebits:             "exceeds_debits",
	CodeExists:                    "exists",
	CodeExistsWithDifferentFields: "exists_with_different_fields",
	CodeReversalNotAllowed:        "reversal_not_allowed",
	CodeAlreadyReversed:           "already_reversed",
	CodeTransferIDExists:          "transfer_id_exists",
}

func (c Code) String() string {
	if s, ok := codeNames[c]; ok {
		return s
	}
	return fmt.Sprintf("code(%d)", c)
}

// Error is a refused entry: the code, and which transfer and account caused it.
type Error struct {
	Code       Code
	EntryID    string
	TransferID string
	AccountID  string
}

func (e *Error) Error() string {
	s := "ledger: " + e.Code.String()
	if e.EntryID != "" {
		s += " entry=" + e.EntryID
	}
	if e.TransferID != "" {
		s += " transfer=" + e.TransferID
	}
	if e.AccountID != "" {
		s += " account=" + e.AccountID
	}
	return s
}

// Is matches any *Error with the same Code, so callers can write
// errors.Is(err, ledger.ErrExceedsCredits).
func (e *Error) Is(target error) bool {
	var t *Error
	if errors.As(target, &t) {
		return t.Code == e.Code
	}
	return false
}

// Sentinels for errors.Is.
var (
	ErrExceedsCredits   = &Error{Code: CodeExceedsCredits}
	ErrExceedsDebits    = &Error{Code: CodeExceedsDebits}
	ErrExists           = &Error{Code: CodeExists}
	ErrExistsDifferent  = &Error{Code: CodeExistsWithDifferentFields}
	ErrPendingNotFound  = &Error{Code: CodePendingNotFound}
	ErrCurrencyMismatch = &Error{Code: CodeCurrencyMismatch}
	ErrAmountInvalid    = &Error{Code: CodeAmountInvalid}
	ErrOverflow         = &Error{Code: CodeOverflow}
	ErrKindInvalid      = &Error{Code: CodeKindInvalid}
	ErrExpiryPremature  = &Error{Code: CodeExpiryPremature}
	ErrTransferIDExists = &Error{Code: CodeTransferIDExists}
)

// CodeOf returns the ledger code carried by err, or CodeOK when err is not a
// ledger error.
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeOK
}
