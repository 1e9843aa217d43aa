//go:build !unix

package loadtest

import "time"

// processCPU is not read elsewhere than on Unix.
func processCPU() time.Duration { return 0 }
