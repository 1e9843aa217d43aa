// Package status is the one shape of every state machine in core: a
// status type, one table of the transitions it allows, and the checks
// derived from that table. Each resource's package declares its Status
// type and its table (transactions, quotes, verifications, accounts,
// external accounts); no call site lists allowed states of its own.
package status

import (
	"errors"
	"fmt"
	"slices"
)

// ErrIllegal matches every *Illegal error.
var ErrIllegal = errors.New("illegal status transition")

// Illegal is a transition the table does not allow.
type Illegal struct {
	Machine  string
	From, To string
}

func (e *Illegal) Error() string {
	return fmt.Sprintf("%s: %s cannot become %s", e.Machine, e.From, e.To)
}

// Is makes errors.Is(err, ErrIllegal) true.
func (e *Illegal) Is(target error) bool { return target == ErrIllegal }

// Table is a state machine: each status and the statuses it may become.
// A status absent from the keys is final.
type Table[S ~string] struct {
	machine string
	next    map[S][]S
	sources map[S][]string
}

// NewTable builds machine's table. Every status named as a target must be
// one of all; NewTable panics otherwise (a table is a declaration).
func NewTable[S ~string](machine string, all []S, next map[S][]S) Table[S] {
	t := Table[S]{machine: machine, next: next, sources: map[S][]string{}}
	for from, tos := range next {
		if !slices.Contains(all, from) {
			panic(fmt.Sprintf("status table %s: unknown status %q", machine, from))
		}
		for _, to := range tos {
			if !slices.Contains(all, to) {
				panic(fmt.Sprintf("status table %s: unknown status %q", machine, to))
			}
			t.sources[to] = append(t.sources[to], string(from))
		}
	}
	for to := range t.sources {
		slices.Sort(t.sources[to])
	}
	return t
}

// Allows reports whether from may become to.
func (t Table[S]) Allows(from, to S) bool { return slices.Contains(t.next[from], to) }

// Check is Allows as an error (*Illegal).
func (t Table[S]) Check(from, to S) error {
	if t.Allows(from, to) {
		return nil
	}
	return &Illegal{Machine: t.machine, From: string(from), To: string(to)}
}

// Final reports whether s may become nothing else.
func (t Table[S]) Final(s S) bool { return len(t.next[s]) == 0 }

// Sources lists, sorted, the statuses that may become to: the From of a
// status change a store applies under its own lock (a row found in any
// other status is left alone).
func (t Table[S]) Sources(to S) []string { return slices.Clone(t.sources[to]) }

// OpenSources is Sources without the statuses settled reports: the From
// of a change that must apply once and never reopen a settled resource.
func (t Table[S]) OpenSources(to S, settled func(string) bool) []string {
	return slices.DeleteFunc(t.Sources(to), settled)
}

// Set moves *cur, a stored status, to to, or returns an *Illegal error
// leaving it as it was.
func (t Table[S]) Set(cur *string, to S) error {
	if err := t.Check(S(*cur), to); err != nil {
		return err
	}
	*cur = string(to)
	return nil
}
