package loadtest

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// cpuUsage is CPU time used so far: by this process (the service under
// test and its load client, which share it in the benchmarks), and by the
// PostgreSQL server when it runs on this machine (pgOK).
type cpuUsage struct {
	proc time.Duration
	pg   time.Duration
	pgOK bool
}

// readCPU reads both. Throughput on a shared two-core machine moves with
// the disk and the neighbours, while the CPU an operation costs moves
// much less, so the benchmarks report it beside ops/s.
func readCPU() cpuUsage {
	u := cpuUsage{proc: processCPU()}
	u.pg, u.pgOK = postgresCPU("/proc")
	return u
}

// clockTicks is the unit of /proc's CPU times (USER_HZ, 100 on Linux).
const clockTicks = 100

// postgresCPU sums the CPU time of every process named postgres under
// procDir (a /proc): its backends and background processes, and through
// the postmaster's children fields (cutime, cstime) the backends that
// have exited. ok is false when there is no such process to read: the
// server is elsewhere, or this is not Linux.
func postgresCPU(procDir string) (total time.Duration, ok bool) {
	stats, _ := filepath.Glob(filepath.Join(procDir, "[0-9]*", "stat"))
	var ticks int64
	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			continue // exited meanwhile
		}
		t, isPostgres := statCPUTicks(string(b))
		if isPostgres {
			ticks += t
			ok = true
		}
	}
	return time.Duration(ticks) * time.Second / clockTicks, ok
}

// statCPUTicks reads a /proc/PID/stat line: whether the process is named
// postgres, and its utime + stime + cutime + cstime in clock ticks.
func statCPUTicks(stat string) (int64, bool) {
	open, end := strings.IndexByte(stat, '('), strings.LastIndexByte(stat, ')')
	if open < 0 || end < open || stat[open+1:end] != "postgres" {
		return 0, false
	}
	// After the name: state (field 3), …, utime (14), stime (15), cutime
	// (16), cstime (17).
	fields := strings.Fields(stat[end+1:])
	if len(fields) < 15 {
		return 0, false
	}
	var sum int64
	for _, f := range fields[11:15] {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, false
		}
		sum += n
	}
	return sum, true
}
