package opcore_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/ops"
	"github.com/vkflow/vkflow/tensor"
)

// TestStreamEmptyAxes: an empty, non-nil Axes (reduce no axis, Python's
// axis=()) is a different call from nil Axes (reduce every axis), also for
// the prepared-op cache, whose key is the attributes' JSON (which omits
// an empty list).
func TestStreamEmptyAxes(t *testing.T) {
	m, _ := testutil.Manager(t)
	s, err := ops.DefaultStream(m)
	require.NoError(t, err)
	x, err := tensor.FromSlice(m, []float32{1, 2, 3, 4, 5, 6}, 2, 3)
	require.NoError(t, err)
	t.Cleanup(func() { _ = x.Close() })
	for _, name := range []string{"sum", "all"} {
		for _, tc := range []struct {
			axes  []int
			shape []int
		}{{nil, []int{1, 1}}, {[]int{}, []int{2, 3}}} {
			outs, err := s.Call(name, []*tensor.Tensor{x}, nil, ops.Attrs{Axes: tc.axes, KeepDims: true})
			require.NoError(t, err)
			require.Equal(t, tc.shape, outs[0].Shape(), "%s over %#v with keepdims", name, tc.axes)
			require.NoError(t, outs[0].Close())
		}
	}
}
