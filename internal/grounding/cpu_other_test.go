//go:build !unix

package grounding

import "time"

// processCPU cannot be read here: the benchmarks report wall time only.
func processCPU() (time.Duration, bool) { return 0, false }
