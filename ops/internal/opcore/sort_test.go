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

// sortLess is the sort order the ops document: by value, -0 == +0, NaN
// after everything (ascending and descending), unsigned integers by their
// unsigned value.
func sortLess(a arr, i, j int, descending bool) bool {
	if isFloatDt(a.dt) {
		x, y := a.f[i], a.f[j]
		if math.IsNaN(x) {
			return false
		}
		if math.IsNaN(y) {
			return true
		}
		if descending {
			return x > y
		}
		return x < y
	}
	x, y := a.i[i], a.i[j]
	if isUnsignedDt(a.dt) {
		if descending {
			return uint64(x) > uint64(y)
		}
		return uint64(x) < uint64(y)
	}
	if descending {
		return x > y
	}
	return x < y
}

// sortRef returns argsort's indices for x along axis (non-negative; a 0-d
// x is one row of one), by sort.SliceStable.
func sortRef(x arr, axis int, descending bool) []int64 {
	shape := x.shape
	if len(shape) == 0 {
		shape = []int{1}
	}
	n := shape[axis]
	inner := numelOf(shape[axis+1:])
	outer := numelOf(shape[:axis])
	out := make([]int64, numelOf(shape))
	for o := range outer {
		for in := range inner {
			at := func(k int) int { return (o*n+k)*inner + in }
			perm := make([]int, n)
			for k := range perm {
				perm[k] = k
			}
			sort.SliceStable(perm, func(a, b int) bool { return sortLess(x, at(perm[a]), at(perm[b]), descending) })
			for k, p := range perm {
				out[at(k)] = int64(p)
			}
		}
	}
	return out
}

// sortGatherRef is x's elements at argsort's indices: the sorted values, bit
// for bit.
func sortGatherRef(x arr, axis int, perm []int64) arr {
	shape := x.shape
	if len(shape) == 0 {
		shape = []int{1}
	}
	n := shape[axis]
	inner := numelOf(shape[axis+1:])
	y := arr{dt: x.dt, shape: x.shape}
	for k, p := range perm {
		row := k / inner / n
		src := (row*n+int(p))*inner + k%inner
		if isFloatDt(x.dt) {
			y.f = append(y.f, x.f[src])
		} else {
			y.i = append(y.i, x.i[src])
		}
	}
	return y
}

// sameSorted compares values bit for bit (a NaN with any NaN; -0 is not
// +0), and returns the first differing index, or -1.
func sameSorted(want, got arr) int {
	for k := range want.f {
		w, g := want.f[k], got.f[k]
		if math.IsNaN(w) && math.IsNaN(g) {
			continue
		}
		if math.Float64bits(w) != math.Float64bits(g) {
			return k
		}
	}
	for k := range want.i {
		if want.i[k] != got.i[k] {
			return k
		}
	}
	return -1
}

// sortData makes values for a sort test of dt: random over a few values
// (many ties) or over the whole range, with the float specials.
func sortData(r *rand.Rand, dt tensor.Dtype, shape []int, ties bool) arr {
	n := numelOf(shape)
	if isFloatDt(dt) {
		specials := []float64{math.NaN(), math.Copysign(0, -1), 0, math.Inf(1), math.Inf(-1), -1.5, 2.25, 65504, -65504}
		v := make([]float64, n)
		for k := range v {
			switch {
			case r.IntN(5) == 0:
				v[k] = specials[r.IntN(len(specials))]
			case ties:
				v[k] = float64(r.IntN(7) - 3)
			default:
				v[k] = (r.Float64()*2 - 1) * 1000 * math.Pow(10, float64(r.IntN(5)-2))
			}
		}
		return floats(dt, shape, v...)
	}
	v := make([]int64, n)
	for k := range v {
		switch {
		case ties || dt == tensor.Bool:
			v[k] = int64(r.IntN(5)) - 2
		default:
			v[k] = int64(r.Uint64())
		}
	}
	return ints(dt, shape, v...)
}

// checkSort runs sort and argsort of x along axis and compares them with
// the reference.
func checkSort(t *testing.T, m *vkflow.Manager, x arr, axis int, descending bool) {
	t.Helper()
	msg := fmt.Sprintf("%v %v axis %d descending %v", x.dt, x.shape, axis, descending)
	rank := max(len(x.shape), 1)
	ax := (axis + rank) % rank
	perm := sortRef(x, ax, descending)
	at := ops.Attrs{Axes: []int{axis}, Descending: descending}
	xt := x.upload(t, m)
	outs, err := ops.Call(context.Background(), m, "argsort", []*tensor.Tensor{xt}, nil, at)
	require.NoError(t, err, msg)
	got := download(t, outs[0])
	require.NoError(t, outs[0].Close())
	require.Equal(t, tensor.Int64, got.dt, msg)
	require.Equal(t, x.shape, got.shape, msg)
	for k := range perm {
		if perm[k] != got.i[k] {
			require.Equal(t, perm[k], got.i[k], "%s: argsort index %d (of %d)", msg, k, len(perm))
		}
	}
	outs, err = ops.Call(context.Background(), m, "sort", []*tensor.Tensor{xt}, nil, at)
	require.NoError(t, err, msg)
	vals := download(t, outs[0])
	require.NoError(t, outs[0].Close())
	want := sortGatherRef(x, ax, perm)
	if k := sameSorted(want, vals); k >= 0 {
		require.Failf(t, "sort differs", "%s: at %d (of %d): want %v, got %v", msg, k, x.len(), want, vals)
	}
}

var sortDtypesAll = []tensor.Dtype{tensor.Bool, tensor.Int8, tensor.Int16, tensor.Int32, tensor.Int64,
	tensor.Uint8, tensor.Uint16, tensor.Uint32, tensor.Uint64, tensor.Float16, tensor.Float32, tensor.Float64}

func TestSortDtypes(t *testing.T) {
	m, _ := testutil.Manager(t)
	r := rand.New(rand.NewPCG(11, 1))
	for _, dt := range sortDtypesAll {
		t.Run(dt.String(), func(t *testing.T) {
			for _, desc := range []bool{false, true} {
				checkSort(t, m, sortData(r, dt, []int{3001}, false), -1, desc)
				checkSort(t, m, sortData(r, dt, []int{5000}, true), 0, desc)
				checkSort(t, m, sortData(r, dt, []int{6, 70}, true), 0, desc)
			}
		})
	}
}

func TestSortShapes(t *testing.T) {
	m, _ := testutil.Manager(t)
	r := rand.New(rand.NewPCG(11, 2))
	cases := []struct {
		shape []int
		axis  int
	}{
		{[]int{}, -1}, {[]int{}, 0}, {[]int{0}, 0}, {[]int{1}, 0}, {[]int{2}, -1}, {[]int{3, 0}, 1},
		{[]int{0, 3}, 1}, {[]int{4, 1}, 1}, {[]int{2048}, 0}, {[]int{2049}, 0},
		{[]int{4, 5, 6}, 1}, {[]int{4, 5, 6}, 0}, {[]int{4, 5, 6}, -1},
		{[]int{3, 4100}, -1}, {[]int{4100, 3}, 0}, {[]int{300, 7}, 1}, {[]int{2, 3, 2, 700}, 2},
	}
	for _, c := range cases {
		for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Int16, tensor.Float64} {
			for _, desc := range []bool{false, true} {
				checkSort(t, m, sortData(r, dt, c.shape, r.IntN(2) == 0), c.axis, desc)
			}
		}
	}
}

func TestSortLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("a row of 2^20 elements")
	}
	m, _ := testutil.Manager(t)
	r := rand.New(rand.NewPCG(11, 3))
	checkSort(t, m, sortData(r, tensor.Float32, []int{1 << 20}, false), 0, false)
	checkSort(t, m, sortData(r, tensor.Int32, []int{1 << 20}, true), 0, true)
	checkSort(t, m, sortData(r, tensor.Float32, []int{300, 1024}, false), -1, true)
}

// TestSortSpecials pins the documented order of the float specials,
// stably: -0 and +0 are equal, NaN last both ways.
func TestSortSpecials(t *testing.T) {
	m, _ := testutil.Manager(t)
	nan, inf, nz := math.NaN(), math.Inf(1), math.Copysign(0, -1)
	for _, dt := range []tensor.Dtype{tensor.Float16, tensor.Float32, tensor.Float64} {
		x := floats(dt, []int{9}, nan, 0, -inf, nz, 1, nan, inf, 0, -1)
		for _, c := range []struct {
			desc bool
			want []int64
		}{
			{false, []int64{2, 8, 1, 3, 7, 4, 6, 0, 5}},
			{true, []int64{6, 4, 1, 3, 7, 8, 2, 0, 5}},
		} {
			o, err := ops.Argsort(m, x.upload(t, m), 0, c.desc, nil)
			got := run(t, o, err)
			closeOut(t, o)
			assert.Equal(t, c.want, got.i, "%v descending %v", dt, c.desc)
			o, err = ops.Sort(m, x.upload(t, m), 0, c.desc, nil)
			vals := run(t, o, err)
			closeOut(t, o)
			assert.Equal(t, -1, sameSorted(sortGatherRef(x, 0, c.want), vals), "%v descending %v: %v", dt, c.desc, vals.f)
		}
	}
}

// TestSortWithIndices checks the two-output form and that a stream's
// cached op tells ascending from descending.
func TestSortWithIndices(t *testing.T) {
	m, _ := testutil.Manager(t)
	x := ints(tensor.Int32, []int{2, 4}, 3, 1, 3, 2, 5, 5, 4, 6)
	xt := x.upload(t, m)
	o, err := ops.SortWithIndices(m, xt, -1, true, nil, nil)
	require.NoError(t, err)
	defer func() { assert.NoError(t, o.Close()) }()
	require.NoError(t, o.Run(context.Background()))
	outs := o.Outputs()
	require.Len(t, outs, 2)
	assert.Equal(t, []int64{3, 3, 2, 1, 6, 5, 5, 4}, download(t, outs[0]).i)
	assert.Equal(t, []int64{0, 2, 3, 1, 3, 0, 1, 2}, download(t, outs[1]).i)
	for _, u := range outs {
		require.NoError(t, u.Close())
	}

	s, err := ops.DefaultStream(m)
	require.NoError(t, err)
	for _, desc := range []bool{false, true, false} {
		outs, err := s.Call("argsort", []*tensor.Tensor{xt}, nil, ops.Attrs{Descending: desc})
		require.NoError(t, err)
		require.NoError(t, outs[0].Wait(context.Background()))
		got := download(t, outs[0]).i
		require.NoError(t, outs[0].Close())
		want := []int64{1, 3, 0, 2, 2, 0, 1, 3}
		if desc {
			want = []int64{0, 2, 3, 1, 3, 0, 1, 2}
		}
		assert.Equal(t, want, got, "descending %v", desc)
	}
}

func TestSortErrors(t *testing.T) {
	m, _ := testutil.Manager(t)
	x := floats(tensor.Float32, []int{2, 3}, 1, 2, 3, 4, 5, 6).upload(t, m)
	_, err := ops.Sort(m, x, 2, false, nil)
	assert.ErrorIs(t, err, vkflow.ErrInvalid)
	_, err = ops.Call(context.Background(), m, "sort", []*tensor.Tensor{x}, nil, ops.Attrs{Axes: []int{0, 1}})
	assert.ErrorIs(t, err, vkflow.ErrInvalid)
	_, err = ops.Sort(m, x, 0, false, x)
	assert.ErrorIs(t, err, vkflow.ErrInvalid, "in place")
	bad, err := tensor.New(m, tensor.Int32, []int{2, 3})
	require.NoError(t, err)
	defer bad.Close()
	_, err = ops.Argsort(m, x, 0, false, bad)
	assert.ErrorIs(t, err, vkflow.ErrInvalid, "argsort's output must be int64")
}
