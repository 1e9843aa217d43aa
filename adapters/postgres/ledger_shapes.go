package postgres

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/uptrace/bun"
)

// shapedStatement is one of the ledger writer's prepared statements (the
// load and the journal) in variants, one per shape of batch. Its text
// holds optional parts, {{name}}…{{end}} (they nest), and a variant leaves
// out the parts its batch does not need. A part run on empty arrays writes
// and reads nothing, but the server still starts its executor: it opens
// the tables and indexes of its INSERT or UPDATE and builds its nodes.
// With every part in, a lone post's journal statement spent about 0.2 ms
// of server CPU on the holds and balance-event parts it had no use for,
// and its load about 0.08 ms on the quotes, transactions and holds it did
// not lock (EXECUTE of each on empty arrays, with and without them).
//
// Parameters are numbered on the whole text and their types declared in
// the PREPARE (every parameter is written with a cast), so every variant
// takes the same arguments: a part left out leaves its parameters unused.
// A variant is prepared on the writer's session the first time a batch
// needs it (Ledger.prepare), and keeps one plan per session, as the one
// text did.
type shapedStatement struct {
	name  string
	parts []string // the optional parts; bit i of a shape is parts[i]
	segs  []stmtSegment
	types string // "(t1, t2, …)", the parameters' types in order
}

// stmtShape is a set of a shapedStatement's optional parts.
type stmtShape uint8

// stmtSegment is a run of text and the parts it belongs to (all of them
// must be in a variant for it to be).
type stmtSegment struct {
	text  string
	needs stmtShape
}

var (
	stmtMarker = regexp.MustCompile(`\{\{(\w+)\}\}`)
	paramCast  = regexp.MustCompile(`\$(\d+)(::([a-z]+(?:\[\])?))?`)
)

// newShapedStatement parses text (already numbered, $1…) with its optional
// parts, which must be among parts. It panics on a malformed text: the
// statements are constants of this package, and any test that loads the
// package finds the mistake.
func newShapedStatement(name, text string, parts ...string) *shapedStatement {
	s := &shapedStatement{name: name, parts: parts}
	bit := map[string]stmtShape{}
	for i, p := range parts {
		bit[p] = 1 << i
	}
	stack := []stmtShape{0}
	rest := text
	for {
		loc := stmtMarker.FindStringSubmatchIndex(rest)
		if loc == nil {
			break
		}
		s.add(rest[:loc[0]], stack[len(stack)-1])
		switch marker := rest[loc[2]:loc[3]]; marker {
		case "end":
			if len(stack) == 1 {
				panic(fmt.Sprintf("statement %s: {{end}} without a part", name))
			}
			stack = stack[:len(stack)-1]
		default:
			b, ok := bit[marker]
			if !ok {
				panic(fmt.Sprintf("statement %s: unknown part %q", name, marker))
			}
			stack = append(stack, stack[len(stack)-1]|b)
		}
		rest = rest[loc[1]:]
	}
	if len(stack) != 1 {
		panic(fmt.Sprintf("statement %s: a part is not closed", name))
	}
	s.add(rest, 0)
	types := map[int]string{}
	last := 0
	for _, m := range paramCast.FindAllStringSubmatch(text, -1) {
		n, _ := strconv.Atoi(m[1])
		if _, seen := types[n]; !seen && m[3] != "" {
			types[n] = m[3]
		}
		last = max(last, n)
	}
	list := make([]string, last)
	for i := range list {
		if list[i] = types[i+1]; list[i] == "" {
			panic(fmt.Sprintf("statement %s: parameter $%d has no cast", name, i+1))
		}
	}
	s.types = "(" + strings.Join(list, ", ") + ")"
	return s
}

func (s *shapedStatement) add(text string, needs stmtShape) {
	if text != "" {
		s.segs = append(s.segs, stmtSegment{text: text, needs: needs})
	}
}

// shapeOf is the shape holding the parts whose flag is set, in the order
// of s's parts.
func (s *shapedStatement) shapeOf(with ...bool) stmtShape {
	if len(with) != len(s.parts) {
		panic(fmt.Sprintf("statement %s: %d flags for %d parts", s.name, len(with), len(s.parts)))
	}
	var sh stmtShape
	for i, on := range with {
		if on {
			sh |= 1 << i
		}
	}
	return sh
}

// text is the statement of the variant sh.
func (s *shapedStatement) text(sh stmtShape) string {
	var b strings.Builder
	for _, seg := range s.segs {
		if seg.needs&sh == seg.needs {
			b.WriteString(seg.text)
		}
	}
	return b.String()
}

// stmtName is the variant's name on the writer's session.
func (s *shapedStatement) stmtName(sh stmtShape) string {
	return s.name + "_" + strconv.Itoa(int(sh))
}

// prepare makes sure the variant sh of s is prepared on conn, the writer's
// session, which it may be inside the batch's transaction: PREPARE is not
// undone by a rollback.
func (l *Ledger) prepare(ctx context.Context, conn bun.Conn, s *shapedStatement, sh stmtShape) error {
	name := s.stmtName(sh)
	if l.prepared[name] {
		return nil
	}
	if _, err := conn.ExecContext(ctx, "PREPARE "+name+s.types+" AS "+s.text(sh)); err != nil {
		return fmt.Errorf("prepare %s: %w", name, err)
	}
	l.prepared[name] = true
	return nil
}
