package opcore_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/ops"
	"github.com/vkflow/vkflow/tensor"
)

// The manipulation ops move elements; their inputs hold their own flat
// index (int32), so each expected output is the source index of every
// element, computed here from NumPy's definitions.

func iota32(t *testing.T, m *vkflow.Manager, shape []int, base int32) *tensor.Tensor {
	t.Helper()
	v := make([]int32, numel(shape))
	for i := range v {
		v[i] = base + int32(i)
	}
	x, err := tensor.New(m, tensor.Int32, shape)
	require.NoError(t, err)
	require.NoError(t, tensor.Write(x, v))
	t.Cleanup(func() { _ = x.Close() })
	return x
}

// unravelIdx returns the row-major multi-index of flat index i in shape.
func unravelIdx(i int, shape []int) []int {
	idx := make([]int, len(shape))
	for k := len(shape) - 1; k >= 0; k-- {
		idx[k] = i % shape[k]
		i /= shape[k]
	}
	return idx
}

func ravelIdx(idx, shape []int) int {
	f := 0
	for k := range shape {
		f = f*shape[k] + idx[k]
	}
	return f
}

// expect builds the expected output of shape: src(idx) is the value of
// the output element at multi-index idx.
func expect(shape []int, src func(idx []int) int32) []int32 {
	out := make([]int32, numel(shape))
	for i := range out {
		out[i] = src(unravelIdx(i, shape))
	}
	return out
}

func runOut(t *testing.T, op *ops.Op, err error) []int32 {
	t.Helper()
	require.NoError(t, err)
	defer op.Close()
	require.NoError(t, op.Run(context.Background()))
	y := op.Out()
	defer y.Close()
	got, err := y.Int32s()
	require.NoError(t, err)
	return append([]int32(nil), got...)
}

func TestManipulationOps(t *testing.T) {
	m, _ := testutil.Manager(t)
	type tc struct {
		name  string
		build func() (*ops.Op, error)
		shape []int
		src   func(idx []int) int32
	}
	x := iota32(t, m, []int{2, 3, 4}, 0)
	y := iota32(t, m, []int{2, 5, 4}, 1000)
	z := iota32(t, m, []int{2, 3, 4}, 2000)
	v := iota32(t, m, []int{7}, 0)
	s0 := iota32(t, m, nil, 42)
	xs := []int{2, 3, 4}
	cases := []tc{
		{"concat axis 1", func() (*ops.Op, error) { return ops.Concat(m, []*tensor.Tensor{x, y}, 1, nil) },
			[]int{2, 8, 4}, func(i []int) int32 {
				if i[1] < 3 {
					return int32(ravelIdx(i, xs))
				}
				return 1000 + int32(ravelIdx([]int{i[0], i[1] - 3, i[2]}, []int{2, 5, 4}))
			}},
		{"concat axis -3", func() (*ops.Op, error) { return ops.Concat(m, []*tensor.Tensor{x, z, x}, -3, nil) },
			[]int{6, 3, 4}, func(i []int) int32 {
				b := []int32{0, 2000, 0}[i[0]/2]
				return b + int32(ravelIdx([]int{i[0] % 2, i[1], i[2]}, xs))
			}},
		{"stack axis 1", func() (*ops.Op, error) { return ops.Stack(m, []*tensor.Tensor{x, z}, 1, nil) },
			[]int{2, 2, 3, 4}, func(i []int) int32 {
				return int32(2000*i[1]) + int32(ravelIdx([]int{i[0], i[2], i[3]}, xs))
			}},
		{"stack axis -1", func() (*ops.Op, error) { return ops.Stack(m, []*tensor.Tensor{x, z}, -1, nil) },
			[]int{2, 3, 4, 2}, func(i []int) int32 {
				return int32(2000*i[3]) + int32(ravelIdx(i[:3], xs))
			}},
		{"flip all", func() (*ops.Op, error) { return ops.Flip(m, x, nil, nil) },
			xs, func(i []int) int32 { return int32(ravelIdx([]int{1 - i[0], 2 - i[1], 3 - i[2]}, xs)) }},
		{"flip axis 1", func() (*ops.Op, error) { return ops.Flip(m, x, []int{-2}, nil) },
			xs, func(i []int) int32 { return int32(ravelIdx([]int{i[0], 2 - i[1], i[2]}, xs)) }},
		{"flip 0-d", func() (*ops.Op, error) { return ops.Flip(m, s0, nil, nil) },
			nil, func([]int) int32 { return 42 }},
		{"roll flat", func() (*ops.Op, error) { return ops.Roll(m, x, []int{5}, nil, nil) },
			xs, func(i []int) int32 { return int32((ravelIdx(i, xs) - 5 + 24) % 24) }},
		{"roll flat negative", func() (*ops.Op, error) { return ops.Roll(m, v, []int{-9}, nil, nil) },
			[]int{7}, func(i []int) int32 { return int32((i[0] + 9) % 7) }},
		{"roll two axes", func() (*ops.Op, error) { return ops.Roll(m, x, []int{1, -1}, []int{1, 2}, nil) },
			xs, func(i []int) int32 { return int32(ravelIdx([]int{i[0], (i[1] + 2) % 3, (i[2] + 1) % 4}, xs)) }},
		{"roll repeated axis adds", func() (*ops.Op, error) { return ops.Roll(m, x, []int{1, 1}, []int{2, 2}, nil) },
			xs, func(i []int) int32 { return int32(ravelIdx([]int{i[0], i[1], (i[2] + 2) % 4}, xs)) }},
		{"roll by the size", func() (*ops.Op, error) { return ops.Roll(m, x, []int{3}, []int{1}, nil) },
			xs, func(i []int) int32 { return int32(ravelIdx(i, xs)) }},
		{"tile", func() (*ops.Op, error) { return ops.Tile(m, x, []int{2, 1, 3}, nil) },
			[]int{4, 3, 12}, func(i []int) int32 { return int32(ravelIdx([]int{i[0] % 2, i[1], i[2] % 4}, xs)) }},
		{"tile more reps than dims", func() (*ops.Op, error) { return ops.Tile(m, v, []int{2, 2}, nil) },
			[]int{2, 14}, func(i []int) int32 { return int32(i[1] % 7) }},
		{"tile fewer reps", func() (*ops.Op, error) { return ops.Tile(m, x, []int{2}, nil) },
			[]int{2, 3, 8}, func(i []int) int32 { return int32(ravelIdx([]int{i[0], i[1], i[2] % 4}, xs)) }},
		{"repeat axis 1", func() (*ops.Op, error) { return ops.Repeat(m, x, 3, []int{1}, nil) },
			[]int{2, 9, 4}, func(i []int) int32 { return int32(ravelIdx([]int{i[0], i[1] / 3, i[2]}, xs)) }},
		{"repeat flat", func() (*ops.Op, error) { return ops.Repeat(m, x, 2, nil, nil) },
			[]int{48}, func(i []int) int32 { return int32(i[0] / 2) }},
		{"repeat zero times", func() (*ops.Op, error) { return ops.Repeat(m, x, 0, []int{0}, nil) },
			[]int{0, 3, 4}, nil},
		{"broadcast_to", func() (*ops.Op, error) { return ops.BroadcastTo(m, v, []int{3, 7}, nil) },
			[]int{3, 7}, func(i []int) int32 { return int32(i[1]) }},
		{"broadcast_to size-1 axes", func() (*ops.Op, error) {
			w := iota32(t, m, []int{3, 1}, 0)
			return ops.BroadcastTo(m, w, []int{2, 3, 5}, nil)
		}, []int{2, 3, 5}, func(i []int) int32 { return int32(i[1]) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			op, err := c.build()
			got := runOut(t, op, err)
			if c.src == nil {
				assert.Empty(t, got)
				return
			}
			assert.Equal(t, expect(c.shape, c.src), got)
			assert.Equal(t, len(c.shape), len(op.Out().Shape()))
		})
	}
}

func TestManipulationOpsDtypes(t *testing.T) {
	m, _ := testutil.Manager(t)
	rng := rand.New(rand.NewPCG(5, 6))
	for _, dt := range tensor.Dtypes() {
		t.Run(dt.String(), func(t *testing.T) {
			x, raw := randomTensor(t, m, rng, dt, []int{3, 5})
			op, err := ops.Flip(m, x, []int{1}, nil)
			require.NoError(t, err)
			defer op.Close()
			require.NoError(t, op.Run(context.Background()))
			defer op.Out().Close()
			got := readBytes(t, op.Out())
			sz := dt.Size()
			for r := 0; r < 3; r++ {
				for c := 0; c < 5; c++ {
					want := raw[(r*5+4-c)*sz : (r*5+5-c)*sz]
					require.Equal(t, want, got[(r*5+c)*sz:(r*5+c+1)*sz], "row %d col %d", r, c)
				}
			}
		})
	}
}

func TestManipulationOpsRefuse(t *testing.T) {
	m, _ := testutil.Manager(t)
	x := iota32(t, m, []int{2, 3}, 0)
	w := iota32(t, m, []int{3, 3}, 0)
	f, err := tensor.New(m, tensor.Float32, []int{2, 3})
	require.NoError(t, err)
	defer f.Close()
	for _, c := range []struct {
		name string
		call func() (*ops.Op, error)
		msg  string
	}{
		{"concat no inputs", func() (*ops.Op, error) { return ops.Concat(m, nil, 0, nil) }, "no inputs"},
		{"concat dtypes", func() (*ops.Op, error) { return ops.Concat(m, []*tensor.Tensor{x, f}, 0, nil) }, "cast"},
		{"concat shapes", func() (*ops.Op, error) { return ops.Concat(m, []*tensor.Tensor{x, w}, 1, nil) }, "differ"},
		{"concat axis", func() (*ops.Op, error) { return ops.Concat(m, []*tensor.Tensor{x, x}, 2, nil) }, "out of range"},
		{"stack shapes", func() (*ops.Op, error) { return ops.Stack(m, []*tensor.Tensor{x, w}, 0, nil) }, "one shape"},
		{"roll shifts", func() (*ops.Op, error) { return ops.Roll(m, x, []int{1, 2, 3}, []int{0, 1}, nil) }, "shifts"},
		{"roll flat", func() (*ops.Op, error) { return ops.Roll(m, x, []int{1, 2}, nil, nil) }, "one shift"},
		{"tile negative", func() (*ops.Op, error) { return ops.Tile(m, x, []int{-1}, nil) }, "negative"},
		{"repeat negative", func() (*ops.Op, error) { return ops.Repeat(m, x, -1, nil, nil) }, "negative"},
		{"broadcast", func() (*ops.Op, error) { return ops.BroadcastTo(m, x, []int{4, 3}, nil) }, "broadcast"},
		{"in place", func() (*ops.Op, error) { return ops.Flip(m, x, nil, x) }, "in place"},
	} {
		t.Run(c.name, func(t *testing.T) {
			op, err := c.call()
			require.Error(t, err)
			assert.Nil(t, op)
			assert.ErrorIs(t, err, vkflow.ErrInvalid)
			assert.Contains(t, err.Error(), c.msg)
		})
	}
}

func ExampleConcat() {
	m, err := vkflow.New()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer m.Close()
	a, _ := tensor.FromSlice(m, []float32{1, 2}, 1, 2)
	b, _ := tensor.FromSlice(m, []float32{3, 4, 5, 6}, 2, 2)
	op, err := ops.Concat(m, []*tensor.Tensor{a, b}, 0, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer op.Close()
	if err := op.Run(context.Background()); err != nil {
		fmt.Println(err)
		return
	}
	v, _ := op.Out().Float32s()
	fmt.Println(op.Out().Shape(), v)
	// Output: [3 2] [1 2 3 4 5 6]
}

// TestOneAxisAttrs: the registry's ops that take one axis (optional or with
// a default) refuse two, and ops with a fixed input count refuse another.
func TestOneAxisAttrs(t *testing.T) {
	m, _ := testutil.Manager(t)
	x := iota32(t, m, []int{2, 3}, 0)
	idx := iota32(t, m, []int{2}, 0)
	for _, c := range []struct {
		name string
		in   []*tensor.Tensor
		at   ops.Attrs
		msg  string
	}{
		{"take", []*tensor.Tensor{x, idx}, ops.Attrs{Axes: []int{0, 1}}, "takes one axis"},
		{"argmax", []*tensor.Tensor{x}, ops.Attrs{Axes: []int{0, 1}}, "takes one axis"},
		{"cumulative_sum", []*tensor.Tensor{x}, ops.Attrs{Axes: []int{0, 1}}, "takes one axis"},
		{"concat", []*tensor.Tensor{x, x}, ops.Attrs{Axes: []int{0, 1}}, "takes one axis"},
		{"vecdot", []*tensor.Tensor{x, x}, ops.Attrs{Axes: []int{0, 1}}, "takes one axis"},
		{"flip", []*tensor.Tensor{x, x}, ops.Attrs{}, "2 inputs, want 1"},
		{"tensordot", []*tensor.Tensor{x}, ops.Attrs{}, "1 inputs, want 2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			op, err := ops.Prepare(m, c.name, c.in, nil, c.at)
			require.Error(t, err)
			assert.Nil(t, op)
			assert.ErrorIs(t, err, vkflow.ErrInvalid)
			assert.Contains(t, err.Error(), c.msg)
		})
	}
}
