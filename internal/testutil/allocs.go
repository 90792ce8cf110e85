package testutil

import (
	"runtime"
)

// Allocs runs f once to warm up, then runs times, and returns the total
// number of heap allocations made meanwhile, like testing.AllocsPerRun but
// not divided by runs: AllocsPerRun divides with integer division, so an
// allocation once in every few calls (a slice regrowing, a map rehashing)
// reads as zero, while asserting Allocs(...) == 0 catches it.
//
// The Go runtime itself allocates now and then while f blocks in cgo (a new
// thread's m when the scheduler hands the P off). Such noise is sporadic,
// an allocation in f is not: Allocs measures up to three times and returns
// the smallest total, so a periodic allocation in f still shows. Other
// goroutines' allocations count too, so the test must not run any.
func Allocs(runs int, f func()) uint64 {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	f()
	best := ^uint64(0)
	for try := 0; try < 3 && best > 0; try++ {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range runs {
			f()
		}
		runtime.ReadMemStats(&after)
		best = min(best, after.Mallocs-before.Mallocs)
	}
	return best
}
