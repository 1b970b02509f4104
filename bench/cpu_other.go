//go:build !unix

package bench

import "time"

// processCPU is unknown here: -1.
func processCPU() time.Duration { return -1 }
