//go:build unix

package loadtest

import (
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A local PostgreSQL's CPU is the sum over its processes, the exited
// backends included through the postmaster's children fields; other
// processes do not count, and with none of its processes it is not
// measured.
func TestPostgresCPUSumsItsProcesses(t *testing.T) {
	dir := t.TempDir()
	write := func(pid, stat string) {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, pid), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, pid, "stat"), []byte(stat), 0o644))
	}
	_, ok := postgresCPU(dir)
	require.False(t, ok, "no process at all")
	// pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt
	// majflt cmajflt utime stime cutime cstime …
	write("10", "10 (postgres) S 1 10 10 0 -1 4194560 100 200 0 0 150 50 300 100 20 0 1 0 5 1000 50 0\n")
	write("11", "11 (postgres) S 10 11 11 0 -1 4194624 10 0 0 0 7 3 0 0 20 0 1 0 6 1000 50 0\n")
	write("12", "12 (app (test)) R 1 12 12 0 -1 4194624 10 0 0 0 999 999 0 0 20 0 1 0 6 1000 50 0\n")
	write("13", "13 (postgres) S 10\n") // cut short: skipped
	got, ok := postgresCPU(dir)
	require.True(t, ok)
	require.Equal(t, time.Duration(150+50+300+100+7+3)*10*time.Millisecond, got)
}

// spinSink keeps spin's result, so that its work is done.
var spinSink uint64

// spin burns CPU on a fixed amount of work: unlike a busy loop of fixed
// wall time, which a busy machine fills partly with waits that use no
// CPU, its CPU does not depend on what else runs.
func spin() {
	x := spinSink
	for i := range 20_000_000 {
		x = x*6364136223846793005 + uint64(i)
	}
	spinSink = x
}

// Run measures the CPU the run's calls used in this process: four calls
// of spin, two at a time, use about four times one call's CPU (measured
// directly), where a measure of wall time would give about two.
func TestRunMeasuresCPU(t *testing.T) {
	// One call's CPU, the least of three: on a virtual machine a call
	// that loses its core to the host may be billed for the wait too (a
	// first call billed 105 ms where four took 179 ms in all).
	one := time.Duration(math.MaxInt64)
	for range 3 {
		before := processCPU()
		spin()
		one = min(one, processCPU()-before)
	}
	require.Positive(t, one)
	r := Run(4, 2, func(int) error {
		spin()
		return nil
	})
	require.GreaterOrEqual(t, r.CPU, 3*one, "four calls of spin, one taking %v", one)
	per, ok := r.perOp(r.CPU)
	require.True(t, ok)
	require.InDelta(t, float64(r.CPU.Microseconds())/1000/4, per, 1e-9)
	m := Merge(r, r)
	require.Equal(t, 2*r.CPU, m.CPU)
	require.Equal(t, r.PGMeasured, m.PGMeasured)
}
