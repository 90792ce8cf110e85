package opcore_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/ops"
	"github.com/vkflow/vkflow/tensor"
)

// unravel is the coordinates of flat index e in shape.
func unravel(e int, shape []int) []int {
	c := make([]int, len(shape))
	for d := len(shape) - 1; d >= 0; d-- {
		c[d] = e % shape[d]
		e /= shape[d]
	}
	return c
}

func ravel(c, shape []int) int {
	e := 0
	for d := range shape {
		e = e*shape[d] + c[d]
	}
	return e
}

// gatherRef is Gather on the host (indices wrapped once, then clamped).
func gatherRef(x arr, idx []arr, axis int) arr {
	var shapes [][]int
	for _, t := range idx {
		shapes = append(shapes, t.shape)
	}
	b := bcastShape(shapes...)
	res := slices.Concat(x.shape[:axis], b, x.shape[axis+len(idx):])
	out := arr{dt: x.dt, shape: res}
	for e := range numelOf(res) {
		c := unravel(e, res)
		bc := c[axis : axis+len(b)]
		src := slices.Clone(x.shape[:0])
		src = append(src, c[:axis]...)
		for m, t := range idx {
			v := int(t.i[at(t.shape, b, ravel(bc, b))])
			d := x.shape[axis+m]
			if v < 0 {
				v += d
			}
			src = append(src, min(max(v, 0), d-1))
		}
		src = append(src, c[axis+len(b):]...)
		j := ravel(src, x.shape)
		if x.f != nil {
			out.f = append(out.f, x.f[j])
		} else {
			out.i = append(out.i, x.i[j])
		}
	}
	return out
}

func randIdx(r *rand.Rand, dt tensor.Dtype, shape []int, lo, hi int) arr {
	v := make([]int64, numelOf(shape))
	for i := range v {
		v[i] = int64(lo + r.IntN(hi-lo))
	}
	return ints(dt, shape, v...)
}

func TestGather(t *testing.T) {
	m, _ := testutil.Manager(t)
	r := rand.New(rand.NewPCG(9, 9))
	for _, dt := range scanDtypes {
		for _, tc := range []struct {
			x    []int
			axis int
			idx  [][]int
			idts []tensor.Dtype
		}{
			{[]int{10}, 0, [][]int{{7}}, []tensor.Dtype{tensor.Int64}},
			{[]int{4, 5, 6}, 1, [][]int{{2, 3}}, []tensor.Dtype{tensor.Int32}},
			{[]int{4, 5, 6}, 0, [][]int{{3, 1}, {1, 4}}, []tensor.Dtype{tensor.Int8, tensor.Uint16}}, // broadcast
			{[]int{4, 5, 6}, 1, [][]int{{}, {7}}, []tensor.Dtype{tensor.Int64, tensor.Int64}},        // 0-d index
			{[]int{3000, 2}, 0, [][]int{{2500}}, []tensor.Dtype{tensor.Int64}},
			{[]int{4, 0}, 0, [][]int{{2}}, []tensor.Dtype{tensor.Int64}},
			{[]int{4, 3}, 1, [][]int{{0}}, []tensor.Dtype{tensor.Int64}},
		} {
			msg := fmt.Sprintf("%v/%v/axis%d/%v", dt, tc.x, tc.axis, tc.idx)
			x := random(r, dt, tc.x, 100)
			ins := []*tensor.Tensor{x.upload(t, m)}
			var idx []arr
			for k, s := range tc.idx {
				d := tc.x[tc.axis+k]
				lo := -d - 2
				if isUnsignedDt(tc.idts[k]) {
					lo = 0
				}
				a := randIdx(r, tc.idts[k], s, lo, d+2) // some out of range: clamped
				idx = append(idx, a)
				ins = append(ins, a.upload(t, m))
			}
			want := gatherRef(x, idx, tc.axis)
			outs, err := ops.Call(context.Background(), m, "gather", ins, nil, ops.Attrs{Axes: []int{tc.axis}})
			require.NoError(t, err, msg)
			got := download(t, outs[0])
			require.NoError(t, outs[0].Close())
			same(t, want, got, 0, msg)
			if len(idx) == 1 {
				outs, err := ops.Call(context.Background(), m, "take", ins, nil, ops.Attrs{Axes: []int{tc.axis}})
				require.NoError(t, err, msg)
				got := download(t, outs[0])
				require.NoError(t, outs[0].Close())
				same(t, want, got, 0, "take "+msg)
			}
		}
	}
}

func TestScatter(t *testing.T) {
	m, _ := testutil.Manager(t)
	r := rand.New(rand.NewPCG(5, 6))
	for _, dt := range scanDtypes {
		// Distinct in-range indices (a permutation's prefix), so the result
		// does not depend on which of repeated writes wins; one negative.
		x := random(r, dt, []int{6, 7, 3}, 50)
		perm := r.Perm(7)[:4]
		idx := ints(tensor.Int32, []int{4}, int64(perm[0]-7), int64(perm[1]), int64(perm[2]), int64(perm[3]))
		vals := random(r, dt, []int{4, 3}, 50) // broadcast over axis 0
		dst := x.upload(t, m)
		_, err := ops.Call(context.Background(), m, "scatter", []*tensor.Tensor{vals.upload(t, m), idx.upload(t, m)},
			[]*tensor.Tensor{dst}, ops.Attrs{Axes: []int{1}})
		require.NoError(t, err)
		got := download(t, dst)
		want := x
		want.f, want.i = slices.Clone(x.f), slices.Clone(x.i)
		for p := range 6 {
			for b, j := range perm {
				for q := range 3 {
					e := (p*7+j)*3 + q
					if x.f != nil {
						want.f[e] = vals.f[b*3+q]
					} else {
						want.i[e] = vals.i[b*3+q]
					}
				}
			}
		}
		same(t, want, got, 0, dt.String())
	}
	// Out of range writes are dropped.
	x := ints(tensor.Int32, []int{4}, 1, 2, 3, 4)
	dst := x.upload(t, m)
	_, err := ops.Call(context.Background(), m, "scatter",
		[]*tensor.Tensor{ints(tensor.Int32, []int{}, 9).upload(t, m), ints(tensor.Int64, []int{3}, 4, -5, -1).upload(t, m)},
		[]*tensor.Tensor{dst}, ops.Attrs{})
	require.NoError(t, err)
	require.Equal(t, []int64{1, 2, 3, 9}, download(t, dst).i)
}

func TestTriangle(t *testing.T) {
	m, _ := testutil.Manager(t)
	r := rand.New(rand.NewPCG(2, 8))
	for _, dt := range scanDtypes {
		for _, shape := range [][]int{{4, 5}, {3, 6, 2}, {2, 0, 3}, {1, 1}} {
			for _, k := range []int{0, 1, -2, 9, -9} {
				x := random(r, dt, shape, 9)
				for _, name := range []string{"tril", "triu"} {
					want := x
					want.f, want.i = slices.Clone(x.f), slices.Clone(x.i)
					mm, n := shape[len(shape)-2], shape[len(shape)-1]
					for e := range x.len() {
						j, i := e%n, (e/n)%mm
						keep := j-i <= k
						if name == "triu" {
							keep = j-i >= k
						}
						if !keep {
							if want.f != nil {
								want.f[e] = 0
							} else {
								want.i[e] = 0
							}
						}
					}
					if x.len() == 0 {
						continue
					}
					outs, err := ops.Call(context.Background(), m, name, []*tensor.Tensor{x.upload(t, m)}, nil, ops.Attrs{K: k})
					require.NoError(t, err)
					got := download(t, outs[0])
					require.NoError(t, outs[0].Close())
					same(t, want, got, 0, fmt.Sprintf("%s/%v/%v/k=%d", name, dt, shape, k))
				}
			}
		}
	}
}

func TestIndexErrors(t *testing.T) {
	m, _ := testutil.Manager(t)
	x := floats(tensor.Float32, []int{2, 3}, 1, 2, 3, 4, 5, 6).upload(t, m)
	fi := floats(tensor.Float32, []int{2}, 0, 1).upload(t, m)
	i2 := ints(tensor.Int64, []int{2}, 0, 1).upload(t, m)
	i3 := ints(tensor.Int64, []int{3}, 0, 1, 1).upload(t, m)
	v := floats(tensor.Float64, []int{2}, 0, 1).upload(t, m)
	for _, tc := range []struct {
		name string
		in   []*tensor.Tensor
		out  []*tensor.Tensor
		at   ops.Attrs
		want string
	}{
		{"take", []*tensor.Tensor{x, i2}, nil, ops.Attrs{}, "give an axis"},
		{"gather", []*tensor.Tensor{x, fi}, nil, ops.Attrs{}, "integer"},
		{"gather", []*tensor.Tensor{x, i2, i3}, nil, ops.Attrs{}, "broadcast"},
		{"gather", []*tensor.Tensor{x, i2, i2, i2}, nil, ops.Attrs{}, "index arrays"},
		{"scatter", []*tensor.Tensor{v, i2}, []*tensor.Tensor{x}, ops.Attrs{}, "cast"},
		{"scatter", []*tensor.Tensor{i2, i2}, nil, ops.Attrs{}, "given output"},
		{"tril", []*tensor.Tensor{fi}, nil, ops.Attrs{}, "2 dimensions"},
	} {
		_, err := ops.Call(context.Background(), m, tc.name, tc.in, tc.out, tc.at)
		require.ErrorIs(t, err, vkflow.ErrInvalid, tc.name)
		require.ErrorContains(t, err, tc.want)
	}
}
