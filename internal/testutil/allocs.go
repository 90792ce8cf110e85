package testutil

import (
	"runtime"
)

// Allocs runs f once to warm up, then runs times, and returns the total
// number of heap allocations made meanwhile, like testing.AllocsPerRun but
// not divided by runs. testing.AllocsPerRun divides with integer division,
// so an allocation once in every few calls (a slice regrowing, a map
// rehashing) reads as zero; asserting Allocs(...) == 0 catches it.
// Allocations by other goroutines count too, so the test must not run any.
func Allocs(runs int, f func()) uint64 {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	f()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range runs {
		f()
	}
	runtime.ReadMemStats(&after)
	return after.Mallocs - before.Mallocs
}
