package render

import "github.com/vkflow/vkflow/ops/internal/opcore"

// SwapRasterVJP replaces soft_raster's VJP by f (a mutation check) and
// returns the function that puts it back.
func SwapRasterVJP(f opcore.VJPFunc) func() {
	opcore.DefVJP("soft_raster", f)
	return func() { opcore.DefVJP("soft_raster", rasterVJP) }
}

// SetBackwardThreads sets how many invocations split the backward's sums
// (a different summation order) and returns the function that restores
// it.
func SetBackwardThreads(n uint64) func() {
	old := backwardThreads
	backwardThreads = n
	return func() { backwardThreads = old }
}
