package opcore

import (
	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/tensor"
)

// ReduceHooks are the reduction test hooks (reduceHooks).
type ReduceHooks struct{ SharedOnly, SkipLast, OnePass, Scalar, NoColumns bool }

// SetReduceHooks sets the reduction test hooks and returns a function
// that restores them. Tests that use it must not run in parallel with
// other reductions.
func SetReduceHooks(h ReduceHooks) (restore func()) {
	old := reduceHooks
	reduceHooks.sharedOnly, reduceHooks.skipLast, reduceHooks.onePass, reduceHooks.scalar, reduceHooks.noColumns = h.SharedOnly, h.SkipLast, h.OnePass, h.Scalar, h.NoColumns
	return func() { reduceHooks = old }
}

// ReduceUsesSubgroup reports whether a float32 sum's full-workgroup passes
// use subgroup arithmetic on o's device (with the hooks as they are).
func ReduceUsesSubgroup(o Owner) (bool, error) {
	d, err := core.From(o)
	if err != nil {
		return false, err
	}
	return (&Op{dev: d}).subgroupAble(KindSum, tensor.Float32) && !reduceHooks.sharedOnly, nil
}
