package opcore_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/ops"
	"github.com/vkflow/vkflow/tensor"
)

// joined is a and b's elements, a's first, as one flat array.
func joined(a, b arr) arr {
	return arr{dt: a.dt, shape: []int{a.len() + b.len()}, f: append(append([]float64(nil), a.f...), b.f...),
		i: append(append([]int64(nil), a.i...), b.i...)}
}

// searchRef is searchsorted by the documented order: the first i of the
// sorted x1 (x1 read through perm) where v <= x1[i] (left) or v < x1[i]
// (right).
func searchRef(x1 arr, perm []int64, x2 arr, right bool) []int64 {
	all := joined(x1, x2)
	m := x1.len()
	out := make([]int64, x2.len())
	for k := range out {
		v := m + k
		out[k] = int64(sort.Search(m, func(i int) bool {
			j := int(perm[i])
			if right {
				return sortLess(all, v, j, false)
			}
			return !sortLess(all, j, v, false)
		}))
	}
	return out
}

func checkSearch(t *testing.T, m *vkflow.Manager, x1, x2 arr, withSorter, right bool) {
	t.Helper()
	msg := fmt.Sprintf("%v x1 %v x2 %v sorter %v right %v", x1.dt, x1.shape, x2.shape, withSorter, right)
	perm := sortRef(x1, 0, false)
	in := []*tensor.Tensor{x1.upload(t, m), x2.upload(t, m)}
	if withSorter {
		in = append(in, ints(tensor.Int64, x1.shape, perm...).upload(t, m))
	} else {
		x1 = sortGatherRef(x1, 0, perm)
		for k := range perm {
			perm[k] = int64(k)
		}
		in[0] = x1.upload(t, m)
	}
	side := "left"
	if right {
		side = "right"
	}
	outs, err := ops.Call(context.Background(), m, "searchsorted", in, nil, ops.Attrs{Side: side})
	require.NoError(t, err, msg)
	got := download(t, outs[0])
	require.NoError(t, outs[0].Close())
	require.Equal(t, x2.shape, got.shape, msg)
	want := searchRef(x1, perm, x2, right)
	require.Equal(t, len(want), len(got.i), msg)
	for k := range want {
		require.Equal(t, want[k], got.i[k], "%s: element %d", msg, k)
	}
}

func TestSearchSorted(t *testing.T) {
	m, _ := testutil.Manager(t)
	r := rand.New(rand.NewPCG(12, 1))
	for _, dt := range sortDtypesAll {
		t.Run(dt.String(), func(t *testing.T) {
			for _, c := range []struct{ n1, n2 []int }{
				{[]int{1000}, []int{3, 100}}, {[]int{37}, []int{}}, {[]int{1}, []int{9}},
				{[]int{0}, []int{4}}, {[]int{5}, []int{0, 2}},
			} {
				x1 := sortData(r, dt, c.n1, true)
				x2 := sortData(r, dt, c.n2, true)
				for k := range x2.len() { // half of them from x1, exactly
					if x1.len() > 0 && k%2 == 0 {
						p := r.IntN(x1.len())
						if x2.f != nil {
							x2.f[k] = x1.f[p]
						} else {
							x2.i[k] = x1.i[p]
						}
					}
				}
				for _, sorter := range []bool{false, true} {
					checkSearch(t, m, x1, x2, sorter, false)
					checkSearch(t, m, x1, x2, sorter, true)
				}
			}
		})
	}
}

// TestSearchSortedSpecials pins NaN and signed zeros against Sort's
// order: x1 = [-inf, -0, 0, 1, nan, nan].
func TestSearchSortedSpecials(t *testing.T) {
	m, _ := testutil.Manager(t)
	nan, inf, nz := math.NaN(), math.Inf(1), math.Copysign(0, -1)
	x1 := floats(tensor.Float32, []int{6}, -inf, nz, 0, 1, nan, nan)
	x2 := floats(tensor.Float32, []int{6}, nan, 0, nz, inf, -inf, 0.5)
	for _, c := range []struct {
		right bool
		want  []int64
	}{{false, []int64{4, 1, 1, 4, 0, 3}}, {true, []int64{6, 3, 3, 4, 1, 3}}} {
		o, err := ops.SearchSorted(m, x1.upload(t, m), x2.upload(t, m), c.right, nil, nil)
		got := run(t, o, err)
		closeOut(t, o)
		assert.Equal(t, c.want, got.i, "right %v", c.right)
	}
}

func TestSearchSortedErrors(t *testing.T) {
	m, _ := testutil.Manager(t)
	x1 := floats(tensor.Float32, []int{3}, 1, 2, 3).upload(t, m)
	x2 := floats(tensor.Float32, []int{2}, 1, 2).upload(t, m)
	i2 := ints(tensor.Int32, []int{2}, 1, 2).upload(t, m)
	m2 := floats(tensor.Float32, []int{1, 3}, 1, 2, 3).upload(t, m)
	f3 := floats(tensor.Float32, []int{3}, 0, 1, 2).upload(t, m)
	i4 := ints(tensor.Int64, []int{4}, 0, 1, 2, 3).upload(t, m)
	ctx := context.Background()
	for name, c := range map[string]struct {
		in []*tensor.Tensor
		at ops.Attrs
	}{
		"mixed dtypes":    {[]*tensor.Tensor{x1, i2}, ops.Attrs{}},
		"2-d x1":          {[]*tensor.Tensor{m2, x2}, ops.Attrs{}},
		"float sorter":    {[]*tensor.Tensor{x1, x2, f3}, ops.Attrs{}},
		"sorter's length": {[]*tensor.Tensor{x1, x2, i4}, ops.Attrs{}},
		"side":            {[]*tensor.Tensor{x1, x2}, ops.Attrs{Side: "middle"}},
		"one input":       {[]*tensor.Tensor{x1}, ops.Attrs{}},
	} {
		_, err := ops.Call(ctx, m, "searchsorted", c.in, nil, c.at)
		assert.ErrorIs(t, err, vkflow.ErrInvalid, name)
	}
}
