package ports_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/ports"
)

func rowsOf(n int) []ports.Transaction {
	t0 := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	out := make([]ports.Transaction, n)
	for i := range out {
		out[i] = ports.Transaction{ID: string(rune('a' + i)), CreatedAt: t0.Add(time.Duration(i) * time.Second)}
	}
	return out
}

func TestTrimPage(t *testing.T) {
	rows := rowsOf(4)
	page, next := ports.TrimPage(rows, 3, ports.Transaction.Position)
	assert.Len(t, page, 3)
	require.NotNil(t, next)
	assert.Equal(t, rows[2].Position(), *next)
	page, next = ports.TrimPage(rows[:3], 3, ports.Transaction.Position)
	assert.Len(t, page, 3)
	assert.Nil(t, next, "no extra row: no more")
	page, next = ports.TrimPage[ports.Transaction](nil, 3, ports.Transaction.Position)
	assert.Empty(t, page)
	assert.Nil(t, next)
}

func TestScan(t *testing.T) {
	all := rowsOf(7)
	list := func(p ports.Page) ([]ports.Transaction, error) {
		start := 0
		if p.After != nil {
			for i, r := range all {
				if r.ID == p.After.ID {
					start = i + 1
				}
			}
		}
		end := min(start+p.Limit+1, len(all))
		return all[start:end], nil
	}
	var seen []string
	require.NoError(t, ports.Scan(3, list, ports.Transaction.Position, func(r ports.Transaction) bool {
		seen = append(seen, r.ID)
		return true
	}))
	assert.Equal(t, []string{"a", "b", "c", "d", "e", "f", "g"}, seen)

	seen = nil
	require.NoError(t, ports.Scan(3, list, ports.Transaction.Position, func(r ports.Transaction) bool {
		seen = append(seen, r.ID)
		return r.ID != "e"
	}))
	assert.Equal(t, []string{"a", "b", "c", "d", "e"}, seen, "each stops the walk")

	boom := errors.New("boom")
	err := ports.Scan(3, func(ports.Page) ([]ports.Transaction, error) { return nil, boom }, ports.Transaction.Position,
		func(ports.Transaction) bool { return true })
	assert.ErrorIs(t, err, boom)
}
