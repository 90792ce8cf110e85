package opcore_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/ops"
	"github.com/vkflow/vkflow/tensor"
)

// nonzeroRef is [ndim][count] of the coordinates of x's nonzero elements.
func nonzeroRef(x arr) [][]int64 {
	out := make([][]int64, len(x.shape))
	for e := range x.len() {
		nz := false
		if x.f != nil {
			nz = x.f[e] != 0 || math.IsNaN(x.f[e])
		} else {
			nz = x.i[e] != 0
		}
		if !nz {
			continue
		}
		r := e
		for d := len(x.shape) - 1; d >= 0; d-- {
			out[d] = append(out[d], int64(r%x.shape[d]))
			r /= x.shape[d]
		}
	}
	return out
}

// sparse makes data of dt with about a fraction p of nonzero elements
// (floats include NaN and -0).
func sparse(r *rand.Rand, dt tensor.Dtype, shape []int, p float64) arr {
	n := numelOf(shape)
	if isFloatDt(dt) {
		v := make([]float64, n)
		for i := range v {
			switch u := r.Float64(); {
			case u < p/10:
				v[i] = math.NaN()
			case u < p:
				v[i] = float64(r.IntN(9) + 1)
			case u < (1+p)/2:
				v[i] = math.Copysign(0, -1)
			}
		}
		return floats(dt, shape, v...)
	}
	v := make([]int64, n)
	for i := range v {
		if r.Float64() < p {
			v[i] = int64(r.IntN(100) + 1)
		}
	}
	return ints(dt, shape, v...)
}

func TestNonzero(t *testing.T) {
	m, _ := testutil.Manager(t)
	s, err := ops.DefaultStream(m)
	require.NoError(t, err)
	r := rand.New(rand.NewPCG(1, 2))
	for _, dt := range scanDtypes {
		for _, tc := range []struct {
			shape []int
			p     float64
		}{
			{[]int{1}, 1}, {[]int{7}, 0.5}, {[]int{5000}, 0.3}, {[]int{3, 1500, 2}, 0.5},
			{[]int{2, 3, 4}, 0}, {[]int{2049}, 1}, {[]int{0}, 1}, {[]int{3, 0, 2}, 1},
		} {
			msg := fmt.Sprintf("%v/%v/p=%v", dt, tc.shape, tc.p)
			x := sparse(r, dt, tc.shape, tc.p)
			want := nonzeroRef(x)
			y, err := ops.Nonzero(s, x.upload(t, m))
			require.NoError(t, err, msg)
			require.NoError(t, y.Wait(context.Background()))
			got := download(t, y)
			require.NoError(t, y.Close())
			count := 0
			if len(want) > 0 {
				count = len(want[0])
			}
			require.Equal(t, []int{len(tc.shape), count}, got.shape, msg)
			for d := range want {
				require.Equal(t, want[d], got.i[d*count:(d+1)*count], "%s: axis %d", msg, d)
			}
		}
	}
}

// TestCompact: flat indices, through Compact and by name; a long input
// crosses two scan levels.
func TestCompact(t *testing.T) {
	m, _ := testutil.Manager(t)
	s, err := ops.DefaultStream(m)
	require.NoError(t, err)
	r := rand.New(rand.NewPCG(4, 4))
	for _, shape := range [][]int{{}, {5000}, {2048*2048 + 77}, {40, 50}} {
		x := sparse(r, tensor.Bool, shape, 0.5)
		if len(shape) == 0 {
			x = ints(tensor.Bool, shape, 1)
		}
		var want []int64
		for e := range x.len() {
			if x.i[e] != 0 {
				want = append(want, int64(e))
			}
		}
		y, err := ops.Compact(s, x.upload(t, m))
		require.NoError(t, err)
		require.NoError(t, y.Wait(context.Background()))
		got := download(t, y)
		require.NoError(t, y.Close())
		require.Equal(t, []int{len(want)}, got.shape)
		if len(want) > 0 {
			require.Equal(t, want, got.i, "shape %v", shape)
		}
	}
	// By name, as C and Python call it: ops.Call runs a dynamic op.
	x := ints(tensor.Int32, []int{2, 3}, 0, 5, 0, 7, 0, 9).upload(t, m)
	outs, err := ops.Call(context.Background(), m, "nonzero", []*tensor.Tensor{x}, nil, ops.Attrs{})
	require.NoError(t, err)
	got := download(t, outs[0])
	require.NoError(t, outs[0].Close())
	require.Equal(t, []int64{0, 1, 1, 1, 0, 2}, got.i)
}

func TestNonzeroErrors(t *testing.T) {
	m, _ := testutil.Manager(t)
	s, err := ops.DefaultStream(m)
	require.NoError(t, err)
	x := ints(tensor.Int32, []int{}, 3).upload(t, m)
	_, err = ops.Nonzero(s, x)
	require.ErrorIs(t, err, vkflow.ErrInvalid)
	require.ErrorContains(t, err, "0-d")
	// A dynamic op cannot be prepared.
	_, err = ops.Prepare(m, "nonzero", []*tensor.Tensor{x}, nil, ops.Attrs{})
	require.ErrorIs(t, err, vkflow.ErrInvalid)
	// A given output of the wrong shape.
	y := ints(tensor.Int32, []int{4}, 1, 0, 1, 1).upload(t, m)
	bad := ints(tensor.Int64, []int{1, 2}, 0, 0).upload(t, m)
	_, err = s.Call("nonzero", []*tensor.Tensor{y}, []*tensor.Tensor{bad}, ops.Attrs{})
	require.ErrorIs(t, err, vkflow.ErrInvalid)
}
