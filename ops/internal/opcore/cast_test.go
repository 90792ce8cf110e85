package opcore_test

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/ops"
	"github.com/vkflow/vkflow/tensor"
)

var allCasts = flag.Bool("allcasts", false, "test Cast between every pair of dtypes (144 kernels), not a covering subset")

// castInput makes values of src that are defined when cast to dst: every
// integer (integer casts wrap), and for floats values within dst's range
// (NaN, ±Inf and out-of-range values are undefined for integer targets),
// with NaN, ±Inf, overflow and a round-to-even tie for float targets.
func castInput(r *rand.Rand, src, dst tensor.Dtype) arr {
	if !isFloatDt(src) {
		x := random(r, src, []int{12}, 0)
		x.i = append(x.i, 0, 1, wrapTo(src, -1), wrapTo(src, math.MaxInt64), wrapTo(src, math.MinInt64), 65520, 2049)
		for i, v := range x.i {
			x.i[i] = wrapTo(src, v)
		}
		x.shape = []int{len(x.i)}
		return x
	}
	v := []float64{0, 1, 2.5, 7.75, 100.9, 126.5, math.Copysign(0, -1), 3.5}
	if !isUnsignedDt(dst) || dst == tensor.Bool {
		v = append(v, -1, -2.5, -99.9, -127.5)
	}
	switch {
	case isFloatDt(dst) || dst == tensor.Bool:
		v = append(v, math.NaN(), math.Inf(1), math.Inf(-1), 1e4, 65504, 70000, 1.00048828125, 1e-3)
	case dst == tensor.Int64 || dst == tensor.Uint64 || dst == tensor.Int32 || dst == tensor.Uint32:
		v = append(v, 1e6, 65504, 2e9)
	case dst == tensor.Int16 || dst == tensor.Uint16:
		v = append(v, 1e4, 32000.5)
	}
	if src == tensor.Float16 && !isFloatDt(dst) && dst != tensor.Bool {
		v = slices.DeleteFunc(v, func(f float64) bool { return math.Abs(f) > 65504 })
	}
	return floats(src, []int{len(v)}, v...)
}

// castRef is NumPy's astype for in-range values.
func castRef(x arr, dst tensor.Dtype) arr {
	out := arr{dt: dst, shape: x.shape}
	for k := range x.len() {
		if isFloatDt(x.dt) {
			v := x.f[k]
			switch {
			case dst == tensor.Bool:
				out.i = append(out.i, map[bool]int64{true: 1, false: 0}[v != 0])
			case isFloatDt(dst):
				out.f = append(out.f, roundTo(dst, v))
			case dst == tensor.Uint64:
				out.i = append(out.i, int64(uint64(math.Trunc(v))))
			default:
				out.i = append(out.i, wrapTo(dst, int64(math.Trunc(v))))
			}
			continue
		}
		v := x.i[k]
		unsigned := x.dt == tensor.Uint64
		switch dst {
		case tensor.Float64:
			if unsigned {
				out.f = append(out.f, float64(uint64(v)))
			} else {
				out.f = append(out.f, float64(v))
			}
		case tensor.Float32, tensor.Float16:
			f := float32(v)
			if unsigned {
				f = float32(uint64(v))
			}
			out.f = append(out.f, roundTo(dst, float64(f)))
		default:
			out.i = append(out.i, wrapTo(dst, v))
		}
	}
	return out
}

// castPairs is a subset that covers every dtype as source and target and
// each kind of conversion: to and from bool and float32 for every dtype,
// sign and zero extension, truncation, float to int, int to float, float
// to float.
func castPairs() [][2]tensor.Dtype {
	var pairs [][2]tensor.Dtype
	if *allCasts {
		for _, s := range tensor.Dtypes() {
			for _, d := range tensor.Dtypes() {
				pairs = append(pairs, [2]tensor.Dtype{s, d})
			}
		}
		return pairs
	}
	for _, d := range tensor.Dtypes() {
		pairs = append(pairs, [2]tensor.Dtype{d, tensor.Bool}, [2]tensor.Dtype{d, tensor.Float32})
		if d != tensor.Bool && d != tensor.Float32 {
			pairs = append(pairs, [2]tensor.Dtype{tensor.Float32, d})
		}
	}
	for _, d := range []tensor.Dtype{tensor.Float16, tensor.Int8} {
		pairs = append(pairs, [2]tensor.Dtype{tensor.Bool, d})
	}
	return append(pairs,
		[2]tensor.Dtype{tensor.Int8, tensor.Uint64}, [2]tensor.Dtype{tensor.Uint8, tensor.Int64},
		[2]tensor.Dtype{tensor.Int64, tensor.Int8}, [2]tensor.Dtype{tensor.Uint64, tensor.Int32},
		[2]tensor.Dtype{tensor.Float64, tensor.Int64}, [2]tensor.Dtype{tensor.Uint64, tensor.Float64},
		[2]tensor.Dtype{tensor.Float64, tensor.Float16}, [2]tensor.Dtype{tensor.Float16, tensor.Float64},
	)
}

func TestCast(t *testing.T) {
	m, _ := testutil.Manager(t)
	r := rand.New(rand.NewPCG(3, 1))
	for _, p := range castPairs() {
		t.Run(fmt.Sprintf("%v to %v", p[0], p[1]), func(t *testing.T) {
			x := castInput(r, p[0], p[1])
			op, err := ops.Cast(m, x.upload(t, m), p[1], nil)
			got := run(t, op, err)
			closeOut(t, op)
			same(t, castRef(x, p[1]), got, 0, fmt.Sprintf("%v %v", x.f, x.i))
		})
	}
	// 0-d, the vec4 kernel (32-bit to 32-bit, a multiple of 4), and the
	// registry (Attrs.Dtype).
	x0 := floats(tensor.Float32, []int{}, -7.9)
	op, err := ops.Cast(m, x0.upload(t, m), tensor.Int32, nil)
	same(t, castRef(x0, tensor.Int32), run(t, op, err), 0)
	closeOut(t, op)
	x4 := random(r, tensor.Float32, []int{4096}, 1e6)
	outs, err := ops.Call(t.Context(), m, "cast", []*tensor.Tensor{x4.upload(t, m)}, nil, ops.Attrs{Dtype: tensor.Int32})
	require.NoError(t, err)
	t.Cleanup(func() { _ = outs[0].Close() })
	same(t, castRef(x4, tensor.Int32), download(t, outs[0]), 0)

	_, err = ops.Cast(m, x0.upload(t, m), 0, nil)
	require.ErrorIs(t, err, vkflow.ErrInvalid)
	require.Contains(t, err.Error(), "not a dtype")
}
