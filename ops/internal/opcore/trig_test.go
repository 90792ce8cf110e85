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
	"github.com/vkflow/vkflow/ops/internal/opcore"
	"github.com/vkflow/vkflow/tensor"
)

func init() {
	for name, f := range map[string]func(o ops.Owner, x, out *tensor.Tensor) (*ops.Op, error){
		"sin": ops.Sin, "cos": ops.Cos, "tan": ops.Tan, "asin": ops.Asin, "acos": ops.Acos, "atan": ops.Atan,
	} {
		unFns[name] = f
	}
	binFns["atan2"] = ops.Atan2
}

// trigSpecial are the array API's special cases (2023.12) of the
// trigonometric functions, bit for bit (signed zeros count; any NaN for
// NaN); the multiples of pi are the nearest values of the dtype.
var trigSpecial = []struct {
	fn      string
	x, y, w float64
}{
	{"sin", nan, 0, nan}, {"sin", 0, 0, 0}, {"sin", negZ, 0, negZ}, {"sin", inf, 0, nan}, {"sin", -inf, 0, nan},
	{"cos", nan, 0, nan}, {"cos", 0, 0, 1}, {"cos", negZ, 0, 1}, {"cos", inf, 0, nan}, {"cos", -inf, 0, nan},
	{"tan", nan, 0, nan}, {"tan", 0, 0, 0}, {"tan", negZ, 0, negZ}, {"tan", inf, 0, nan}, {"tan", -inf, 0, nan},
	{"asin", nan, 0, nan}, {"asin", 1.5, 0, nan}, {"asin", -1.5, 0, nan}, {"asin", 0, 0, 0}, {"asin", negZ, 0, negZ},
	{"asin", inf, 0, nan}, {"asin", 1, 0, math.Pi / 2}, {"asin", -1, 0, -math.Pi / 2},
	{"acos", nan, 0, nan}, {"acos", 1.5, 0, nan}, {"acos", -1.5, 0, nan}, {"acos", 1, 0, 0}, {"acos", -inf, 0, nan},
	{"acos", -1, 0, math.Pi}, {"acos", 0, 0, math.Pi / 2}, {"acos", negZ, 0, math.Pi / 2},
	{"atan", nan, 0, nan}, {"atan", 0, 0, 0}, {"atan", negZ, 0, negZ}, {"atan", inf, 0, math.Pi / 2}, {"atan", -inf, 0, -math.Pi / 2},
	{"atan", 1, 0, math.Pi / 4}, {"atan", -1, 0, -math.Pi / 4},
	// atan2(y, x): the standard's whole table.
	{"atan2", nan, 1, nan}, {"atan2", 1, nan, nan}, {"atan2", nan, nan, nan},
	{"atan2", 1, 0, math.Pi / 2}, {"atan2", 1, negZ, math.Pi / 2}, {"atan2", -1, 0, -math.Pi / 2}, {"atan2", -1, negZ, -math.Pi / 2},
	{"atan2", 0, 1, 0}, {"atan2", 0, 0, 0}, {"atan2", 0, negZ, math.Pi}, {"atan2", 0, -1, math.Pi},
	{"atan2", negZ, 1, negZ}, {"atan2", negZ, 0, negZ}, {"atan2", negZ, negZ, -math.Pi}, {"atan2", negZ, -1, -math.Pi},
	{"atan2", 0, inf, 0}, {"atan2", 0, -inf, math.Pi}, {"atan2", negZ, inf, negZ}, {"atan2", negZ, -inf, -math.Pi},
	{"atan2", 2, inf, 0}, {"atan2", 2, -inf, math.Pi}, {"atan2", -2, inf, negZ}, {"atan2", -2, -inf, -math.Pi},
	{"atan2", inf, 3, math.Pi / 2}, {"atan2", -inf, 3, -math.Pi / 2}, {"atan2", inf, -3, math.Pi / 2}, {"atan2", -inf, negZ, -math.Pi / 2},
	{"atan2", inf, inf, math.Pi / 4}, {"atan2", inf, -inf, 3 * math.Pi / 4}, {"atan2", -inf, inf, -math.Pi / 4}, {"atan2", -inf, -inf, -3 * math.Pi / 4},
	{"atan2", 1, 1, math.Pi / 4}, {"atan2", -1, -1, -3 * math.Pi / 4},
}

func TestTrigSpecialCases(t *testing.T) {
	m, _ := testutil.Manager(t)
	for _, dt := range []tensor.Dtype{tensor.Float16, tensor.Float32, tensor.Float64} {
		byFn := map[string][][3]float64{}
		var order []string
		for _, c := range trigSpecial {
			if byFn[c.fn] == nil {
				order = append(order, c.fn)
			}
			byFn[c.fn] = append(byFn[c.fn], [3]float64{c.x, c.y, roundTo(dt, c.w)})
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
	_, err := ops.Sin(m, ints(tensor.Int32, []int{1}, 1).upload(t, m), nil)
	require.ErrorIs(t, err, vkflow.ErrInvalid)
}

// trigDraw gives n inputs for fn: sin, cos and tan a third each in
// [-4, 4], [-1e4, 1e4] and log-uniform up to the dtype's largest value;
// asin and acos in [-1, 1] (a tenth near ±1 and near 0); atan and atan2
// log-uniform over 2^-30..2^30 with both signs.
func trigDraw(r *rand.Rand, fn string, dt tensor.Dtype, n int) []float64 {
	maxE := 127.0
	if dt == tensor.Float64 {
		maxE = 1023
	}
	v := make([]float64, n)
	for i := range v {
		s := 1.0
		if r.IntN(2) == 0 {
			s = -1
		}
		switch fn {
		case "sin", "cos", "tan":
			switch i % 3 {
			case 0:
				v[i] = s * 4 * r.Float64()
			case 1:
				v[i] = s * 1e4 * r.Float64()
			default:
				v[i] = s * math.Exp2(r.Float64()*maxE)
			}
		case "asin", "acos":
			v[i] = s * r.Float64()
			if i%10 == 1 {
				v[i] = s * (1 - math.Exp2(-1-r.Float64()*50))
			} else if i%10 == 2 {
				v[i] = s * math.Exp2(-r.Float64()*60)
			}
		default:
			v[i] = s * math.Exp2(60*r.Float64()-30)
		}
	}
	return v
}

// TestTrigReference compares with a 200-bit reference (opcore.TrigRef) over
// 20,000 random inputs per function and dtype, and logs the worst error.
func TestTrigReference(t *testing.T) {
	m, _ := testutil.Manager(t)
	r := rand.New(rand.NewPCG(23, 7))
	const n = 20000
	for _, fn := range []string{"sin", "cos", "tan", "asin", "acos", "atan", "atan2"} {
		for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
			t.Run(fmt.Sprintf("%s/%v", fn, dt), func(t *testing.T) {
				xs := trigDraw(r, fn, dt, n)
				if fn == "sin" || fn == "cos" || fn == "tan" {
					copy(xs, trigHard(dt))
				}
				x := floats(dt, []int{n}, xs...)
				y := floats(dt, []int{n}, trigDraw(r, fn, dt, n)...)
				got := runMath(t, m, fn, x, y)
				want := arr{dt: dt, shape: x.shape}
				worst, at := 0.0, 0
				for i := range x.f {
					w := roundTo(dt, opcore.TrigRef(fn, x.f[i], y.f[i]))
					want.f = append(want.f, w)
					if u := ulps(dt, w, got.f[i]); u > worst {
						worst, at = u, i
					}
				}
				t.Logf("%s %v: worst %v ULPs over %d inputs (at x=%v y=%v: got %v want %v)", fn, dt, worst, n,
					x.f[at], y.f[at], got.f[at], want.f[at])
				same(t, want, got, 2, fmt.Sprintf("%s %v", fn, dt))
			})
		}
	}
}

// trigHard are arguments whose reduction cancels most: the dtype's values
// nearest to k*pi/2 for k up to 2^20 (those near the Cody-Waite limit
// included) and the hardest known float64 and float32 cases (Muller,
// Elementary Functions: 6381956970095103 * 2^797 is within 2^-61 of a
// multiple of pi/2; float32 16367173 * 2^72).
func trigHard(dt tensor.Dtype) []float64 {
	var v []float64
	for _, k := range []float64{1, 2, 3, 4, 5, 7, 10, 100, 355, 710, 1000, 2047, 2048, 2049, 4095, 65536, 524287, 524288, 524289, 1 << 20} {
		v = append(v, roundTo(dt, k*math.Pi/2))
	}
	if dt == tensor.Float64 {
		v = append(v, math.Ldexp(6381956970095103, 797), math.Ldexp(5319372648404785, 70))
	} else {
		v = append(v, math.Ldexp(16367173, 72), math.Ldexp(13176795, 0))
	}
	return v
}
