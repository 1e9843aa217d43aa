//go:build !unix

package loadtest

import "time"

// cpuUsage is CPU time used so far (see cpu.go); elsewhere than Unix it
// is not read.
type cpuUsage struct {
	proc time.Duration
	pg   time.Duration
	pgOK bool
}

func readCPU() cpuUsage { return cpuUsage{} }
