package status_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/corridorpay/corridor/core/status"
)

type light string

const (
	red    light = "RED"
	green  light = "GREEN"
	yellow light = "YELLOW"
	off    light = "OFF"
)

func TestTable(t *testing.T) {
	tbl := status.NewTable("light", []light{red, green, yellow, off}, map[light][]light{
		red:    {green, off},
		green:  {yellow, off},
		yellow: {red, off},
	})
	assert.True(t, tbl.Allows(red, green))
	assert.False(t, tbl.Allows(red, yellow))
	assert.False(t, tbl.Allows(off, red))
	assert.NoError(t, tbl.Check(green, yellow))
	err := tbl.Check(green, red)
	assert.True(t, errors.Is(err, status.ErrIllegal))
	assert.EqualError(t, err, "light: GREEN cannot become RED")
	assert.True(t, tbl.Final(off))
	assert.False(t, tbl.Final(red))
	assert.Equal(t, []string{"GREEN", "RED", "YELLOW"}, tbl.Sources(off))
	assert.Equal(t, []string{"YELLOW"}, tbl.Sources(red))
	assert.Empty(t, tbl.Sources(light("NOPE")))

	assert.Equal(t, []string{"GREEN", "YELLOW"}, tbl.OpenSources(off, func(s string) bool { return s == "RED" }))
	cur := "RED"
	assert.NoError(t, tbl.Set(&cur, green))
	assert.Equal(t, "GREEN", cur)
	assert.ErrorIs(t, tbl.Set(&cur, red), status.ErrIllegal)
	assert.Equal(t, "GREEN", cur, "a refused move leaves the status")

	assert.Panics(t, func() {
		status.NewTable("light", []light{red}, map[light][]light{red: {green}})
	}, "a table naming an unknown status is a programming error")
}
