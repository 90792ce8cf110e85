package opcore_test

import (
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

var (
	inf    = math.Inf(1)
	negZ   = math.Copysign(0, -1)
	nan    = math.NaN()
	unFns  = map[string]func(o ops.Owner, x, out *tensor.Tensor) (*ops.Op, error){"expm1": ops.Expm1, "log1p": ops.Log1p, "log2": ops.Log2, "log10": ops.Log10, "sinh": ops.Sinh, "cosh": ops.Cosh, "asinh": ops.Asinh, "acosh": ops.Acosh, "atanh": ops.Atanh, "reciprocal": ops.Reciprocal, "tanh": ops.Tanh, "exp": ops.Exp, "log": ops.Log}
	binFns = map[string]func(o ops.Owner, a, b, out *tensor.Tensor) (*ops.Op, error){"hypot": ops.Hypot, "copysign": ops.Copysign, "logaddexp": ops.Logaddexp, "nextafter": ops.Nextafter}
)

// mathSpecial are special cases from the array API's tables (2023.12),
// which must hold bit for bit (signed zeros count; any NaN for NaN).
var mathSpecial = []struct {
	fn      string
	x, y, w float64
}{
	{"tanh", negZ, 0, negZ}, {"tanh", 0, 0, 0}, {"tanh", inf, 0, 1}, {"tanh", -inf, 0, -1}, {"tanh", nan, 0, nan},
	{"expm1", negZ, 0, negZ}, {"expm1", 0, 0, 0}, {"expm1", inf, 0, inf}, {"expm1", -inf, 0, -1}, {"expm1", nan, 0, nan},
	{"log1p", -1, 0, -inf}, {"log1p", -2, 0, nan}, {"log1p", negZ, 0, negZ}, {"log1p", 0, 0, 0}, {"log1p", inf, 0, inf}, {"log1p", nan, 0, nan},
	{"log2", -1, 0, nan}, {"log2", 0, 0, -inf}, {"log2", negZ, 0, -inf}, {"log2", 1, 0, 0}, {"log2", inf, 0, inf}, {"log2", 8, 0, 3}, {"log2", 0.125, 0, -3},
	{"log10", -1, 0, nan}, {"log10", negZ, 0, -inf}, {"log10", 1, 0, 0}, {"log10", inf, 0, inf}, {"log10", nan, 0, nan},
	{"sinh", negZ, 0, negZ}, {"sinh", 0, 0, 0}, {"sinh", inf, 0, inf}, {"sinh", -inf, 0, -inf}, {"sinh", nan, 0, nan}, {"sinh", 1000, 0, inf},
	{"cosh", negZ, 0, 1}, {"cosh", 0, 0, 1}, {"cosh", -inf, 0, inf}, {"cosh", inf, 0, inf}, {"cosh", nan, 0, nan}, {"cosh", -1000, 0, inf},
	{"asinh", negZ, 0, negZ}, {"asinh", 0, 0, 0}, {"asinh", -inf, 0, -inf}, {"asinh", nan, 0, nan},
	{"acosh", 0.5, 0, nan}, {"acosh", 1, 0, 0}, {"acosh", inf, 0, inf}, {"acosh", -inf, 0, nan}, {"acosh", nan, 0, nan},
	{"atanh", -1, 0, -inf}, {"atanh", 1, 0, inf}, {"atanh", 2, 0, nan}, {"atanh", -2, 0, nan}, {"atanh", negZ, 0, negZ}, {"atanh", 0, 0, 0},
	{"reciprocal", 0, 0, inf}, {"reciprocal", negZ, 0, -inf}, {"reciprocal", -inf, 0, negZ}, {"reciprocal", 4, 0, 0.25},
	{"hypot", inf, nan, inf}, {"hypot", nan, -inf, inf}, {"hypot", nan, 1, nan}, {"hypot", negZ, negZ, 0}, {"hypot", 3, -4, 5}, {"hypot", 1e300, 1e300, 1e300 * math.Sqrt2},
	{"copysign", 1, negZ, -1}, {"copysign", -2, 0, 2}, {"copysign", inf, -1, -inf}, {"copysign", negZ, 1, 0}, {"copysign", 0, math.Copysign(nan, -1), negZ},
	{"logaddexp", nan, 1, nan}, {"logaddexp", inf, 1, inf}, {"logaddexp", 1, inf, inf}, {"logaddexp", inf, -inf, inf}, {"logaddexp", -inf, -inf, -inf}, {"logaddexp", -inf, 2, 2},
	{"nextafter", nan, 1, nan}, {"nextafter", 1, nan, nan}, {"nextafter", 0, negZ, negZ}, {"nextafter", negZ, 0, 0}, {"nextafter", 2, 2, 2}, {"nextafter", inf, 0, math.MaxFloat64},
}

// special returns w for dt: the float64 value rounded, or the float32 or
// float16 largest finite value for nextafter(inf, 0).
func special(dt tensor.Dtype, fn string, x, w float64) float64 {
	switch {
	case fn == "nextafter" && w == math.MaxFloat64 && dt == tensor.Float32:
		return math.MaxFloat32
	case fn == "nextafter" && w == math.MaxFloat64 && dt == tensor.Float16:
		return 65504
	case fn == "hypot" && x == 1e300 && dt != tensor.Float64:
		return inf
	}
	return roundTo(dt, w)
}

func runMath(t *testing.T, m *vkflow.Manager, fn string, x, y arr) arr {
	t.Helper()
	var op *ops.Op
	var err error
	if f, ok := unFns[fn]; ok {
		op, err = f(m, x.upload(t, m), nil)
	} else {
		op, err = binFns[fn](m, x.upload(t, m), y.upload(t, m), nil)
	}
	got := run(t, op, err)
	closeOut(t, op)
	return got
}

func TestMathSpecialCases(t *testing.T) {
	m, _ := testutil.Manager(t)
	for _, dt := range []tensor.Dtype{tensor.Float16, tensor.Float32, tensor.Float64} {
		byFn := map[string][][3]float64{}
		var order []string
		for _, c := range mathSpecial {
			if byFn[c.fn] == nil {
				order = append(order, c.fn)
			}
			byFn[c.fn] = append(byFn[c.fn], [3]float64{c.x, c.y, special(dt, c.fn, c.x, c.w)})
		}
		for _, fn := range order {
			cs := byFn[fn]
			var xs, ys, ws []float64
			for _, c := range cs {
				xs, ys, ws = append(xs, c[0]), append(ys, c[1]), append(ws, c[2])
			}
			n := []int{len(cs)}
			got := runMath(t, m, fn, floats(dt, n, xs...), floats(dt, n, ys...))
			want := arr{dt: dt, shape: n, f: ws}
			if bad := mismatches(want, got); bad > 0 {
				t.Errorf("%s %v: inputs %v, %v: got %v, want %v", fn, dt, xs, ys, got.f, want.f)
			}
		}
	}
}

// mathRefs are the references (Go's math, correctly rounded or within an
// ULP of float64) and the tolerances in ULPs, float32 then float64.
var mathRefs = []struct {
	fn     string
	f      func(x, y float64) float64
	lo, hi float64 // x (and y) in [lo, hi], half of them scaled by 1e-4
	tol32  float64
	tol64  float64
}{
	{"expm1", func(x, _ float64) float64 { return math.Expm1(x) }, -50, 80, 2, 2},
	{"log1p", func(x, _ float64) float64 { return math.Log1p(x) }, -1, 1e6, 2, 2},
	{"log2", func(x, _ float64) float64 { return log2Ref(x) }, 0, 1e6, 2, 2},
	{"log10", func(x, _ float64) float64 { return math.Log10(x) }, 0, 1e6, 2, 2},
	{"sinh", func(x, _ float64) float64 { return math.Sinh(x) }, -90, 90, 2, 2},
	{"cosh", func(x, _ float64) float64 { return math.Cosh(x) }, -90, 90, 2, 2},
	{"asinh", func(x, _ float64) float64 { return math.Asinh(x) }, -1e5, 1e5, 2, 2},
	{"acosh", func(x, _ float64) float64 { return math.Acosh(x) }, 1, 1e5, 2, 2},
	{"atanh", func(x, _ float64) float64 { return math.Atanh(x) }, -1, 1, 2, 2},
	{"reciprocal", func(x, _ float64) float64 { return 1 / x }, -1e3, 1e3, 0, 0},
	{"hypot", math.Hypot, -1e30, 1e30, 2, 2},
	{"copysign", math.Copysign, -1e3, 1e3, 0, 0},
	{"logaddexp", func(x, y float64) float64 {
		return math.Max(x, y) + math.Log1p(math.Exp(-math.Abs(x-y)))
	}, -100, 100, 2, 2},
}

// TestMathReference compares with Go's math over random inputs, and logs
// the worst error found.
func TestMathReference(t *testing.T) {
	m, _ := testutil.Manager(t)
	r := rand.New(rand.NewPCG(9, 1))
	const n = 20000
	for _, ref := range mathRefs {
		for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
			t.Run(fmt.Sprintf("%s/%v", ref.fn, dt), func(t *testing.T) {
				draw := func() arr {
					v := make([]float64, n)
					for i := range v {
						v[i] = ref.lo + r.Float64()*(ref.hi-ref.lo)
						if i%2 == 1 {
							v[i] = ref.lo + (v[i]-ref.lo)*1e-4 // near the low end
						}
						if i%5 == 2 && ref.lo < 0 {
							v[i] *= 1e-6 // near 0
						}
					}
					return floats(dt, []int{n}, v...)
				}
				x, y := draw(), draw()
				got := runMath(t, m, ref.fn, x, y)
				tol := ref.tol32
				if dt == tensor.Float64 {
					tol = ref.tol64
				}
				worst := 0.0
				for i := range got.f {
					w := roundTo(dt, ref.f(x.f[i], y.f[i]))
					worst = max(worst, ulps(dt, w, got.f[i]))
				}
				t.Logf("%s %v: worst %v ULPs over %d inputs", ref.fn, dt, worst, n)
				want := ref2(dt, ref.f, x, y)
				same(t, want, got, tol, fmt.Sprintf("%s %v", ref.fn, dt))
			})
		}
	}
	// nextafter: bit-exact against math.Nextafter32 and math.Nextafter.
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		vals := []float64{0, negZ, 1, -1, 1e-40, -1e-300, math.SmallestNonzeroFloat32, math.MaxFloat32, inf, -inf, 3.5, -3.5}
		var xs, ys []float64
		for _, a := range vals {
			for _, b := range vals {
				xs, ys = append(xs, a), append(ys, b)
			}
		}
		x, y := floats(dt, []int{len(xs)}, xs...), floats(dt, []int{len(xs)}, ys...)
		got := runMath(t, m, "nextafter", x, y)
		want := arr{dt: dt, shape: x.shape}
		for i := range x.f {
			if x.f[i] == y.f[i] { // C's nextafter gives y (Go's gives x: 0 toward -0 is -0 in C)
				want.f = append(want.f, y.f[i])
			} else if dt == tensor.Float32 {
				want.f = append(want.f, float64(math.Nextafter32(float32(x.f[i]), float32(y.f[i]))))
			} else {
				want.f = append(want.f, math.Nextafter(x.f[i], y.f[i]))
			}
		}
		sameBits(t, want, got, fmt.Sprintf("nextafter %v", dt))
	}
	// float16 steps in float16: 1 toward 2 is 1 + 2^-10.
	got := runMath(t, m, "nextafter", floats(tensor.Float16, []int{3}, 1, 0, 65504), floats(tensor.Float16, []int{3}, 2, -1, inf))
	sameBits(t, floats(tensor.Float16, []int{3}, 1+1.0/1024, -math.Pow(2, -24), inf), got, "nextafter float16")
	// Integers are refused.
	_, err := ops.Log2(m, ints(tensor.Int32, []int{1}, 1).upload(t, m), nil)
	require.ErrorIs(t, err, vkflow.ErrInvalid)
}

// ref2 is ref for a binary or unary float function.
func ref2(dt tensor.Dtype, f func(x, y float64) float64, x, y arr) arr {
	out := arr{dt: dt, shape: x.shape}
	for i := range x.f {
		out.f = append(out.f, roundTo(dt, f(x.f[i], y.f[i])))
	}
	return out
}

// log2Ref is log2 x: Go's math.Log2 cancels near 1 (it adds the exponent
// of a mantissa in [0.5, 1)), so results below 1 in magnitude come from
// 300-bit arithmetic.
func log2Ref(x float64) float64 {
	if x <= 0.5 || x >= 2 || math.IsNaN(x) {
		return math.Log2(x)
	}
	l := bigLog(x)
	r, _ := l.Quo(l, bigLog(2)).Float64()
	return r
}
