package opcore

import (
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow/tensor"
)

// cmTol are the accuracy bounds, in ULPs of the component type, that
// TestComplexMathAccuracy holds each function to: of each component
// (complex64, complex128), or of |f(z)| for expm1 and pow (cmNormwise),
// whose components may cancel; pow's in units of max(1, |w log z|) ULPs
// (exp(w log z) inherits w log z's rounding; integral w by up to 12
// complex products).
var cmTol = map[string][2]float64{
	"exp": {4, 4}, "expm1": {4, 4}, "log": {4, 4}, "log1p": {4, 4}, "log2": {4, 4}, "log10": {4, 4},
	"sqrt": {4, 4}, "sin": {4, 4}, "cos": {4, 4}, "tan": {4, 4}, "sinh": {4, 4}, "cosh": {4, 4},
	"tanh": {4, 4}, "asin": {4, 4}, "acos": {4, 4}, "atan": {4, 4}, "asinh": {4, 4}, "acosh": {4, 4},
	"atanh": {4, 4}, "pow": {16, 16},
}

var cmNormwise = map[string]bool{"expm1": true, "pow": true}

// cmULP is the spacing of dt's component type at v (at the smallest
// normal below it).
func cmULP(dt tensor.Dtype, v float64) float64 {
	bits, minExp := 52, -1022
	if dt == tensor.Complex64 {
		bits, minExp = 23, -126
	}
	_, e := math.Frexp(math.Abs(v))
	return math.Ldexp(1, max(e-1, minExp)-bits)
}

// cmInputs draws the arguments of fn: random magnitudes over the
// function's range with random signs, zero parts, and points near the
// branch points, the branch cuts and |z| = 1.
func cmInputs(r *rand.Rand, fn string, dt tensor.Dtype, n int) []complex128 {
	c64 := dt == tensor.Complex64
	lo, hi := -30.0, 30.0 // log10 of the magnitudes
	if !c64 {
		lo, hi = -300, 300
	}
	sgn := func() float64 { return float64(2*r.IntN(2) - 1) }
	mag := func(lo, hi float64) float64 { return sgn() * math.Pow(10, lo+r.Float64()*(hi-lo)) }
	reLim, imLim := 0.0, 0.0 // |re| and |im| caps for the exponential family
	expMax := 85.0
	if !c64 {
		expMax = 700
	}
	switch fn {
	case "exp", "expm1", "sinh", "cosh", "tanh":
		reLim, imLim = expMax, 1e4
	case "sin", "cos", "tan":
		reLim, imLim = 1e4, expMax
	case "asin", "acos", "atan", "asinh", "acosh", "atanh":
		if c64 {
			lo, hi = -15, 15
		} else {
			lo, hi = -150, 150
		}
	case "pow":
		lo, hi = -3, 3
	}
	tiny := -40.0 // log10 of the smallest tiny part: normal numbers only
	if c64 {
		tiny = -37
	}
	zs := make([]complex128, n)
	for i := range zs {
		var x, y float64
		switch k := i % 10; {
		case k < 5:
			x, y = mag(lo, hi), mag(lo, hi)
		case k == 5: // moderate
			x, y = mag(-3, 1), mag(-3, 1)
		case k == 6: // a zero part
			x, y = mag(-3, 2), math.Copysign(0, sgn())
			if r.IntN(2) == 0 {
				x, y = y, x
			}
		case k == 7: // near +-1 and +-i
			x, y = sgn()*(1+mag(-12, -1)), mag(tiny, -1)
			if r.IntN(2) == 0 {
				x, y = y, x
			}
		case k == 8: // near the cuts: a tiny part, the other past 1
			x, y = sgn()*math.Pow(10, r.Float64()*3), mag(tiny, -3)
			if r.IntN(2) == 0 {
				x, y = y, x
			}
		default: // near |z| = 1 and |1 + z| = 1
			t := r.Float64() * 2 * math.Pi
			m := 1 + mag(-14, -2)
			x, y = m*math.Cos(t), m*math.Sin(t)
			if fn == "log1p" {
				x--
			}
		}
		if reLim > 0 {
			x = math.Max(-reLim, math.Min(reLim, x))
			y = math.Max(-imLim, math.Min(imLim, y))
		}
		if c64 {
			x, y = float64(float32(x)), float64(float32(y))
		}
		zs[i] = complex(x, y)
	}
	return zs
}

// cmErr is the error of got against want in ULPs of dt's component type
// (for pow divided by max(1, |w log z|), the error exp(w log z) inherits
// from w log z's rounding).
func cmErr(dt tensor.Dtype, fn string, got, want, z, w complex128) float64 {
	if fn == "pow" {
		return cmErr(dt, "expm1", got, want, 0, 0) / max(1, cmplx.Abs(w*cmplx.Log(z)))
	}
	if dt == tensor.Complex64 {
		want = complex(float64(float32(real(want))), float64(float32(imag(want))))
	}
	worst := 0.0
	if math.IsInf(real(want), 0) || math.IsInf(imag(want), 0) {
		// Overflow: the infinite parts must match, the others may be
		// infinite too (Inf times cis(angle)).
		for k, w := range []float64{real(want), imag(want)} {
			if g := []float64{real(got), imag(got)}[k]; math.IsInf(w, 0) && g != w {
				return math.Inf(1)
			}
		}
		return 0
	}
	for k, g := range []float64{real(got), imag(got)} {
		w := []float64{real(want), imag(want)}[k]
		if math.IsInf(w, 0) || math.IsNaN(w) || math.IsInf(g, 0) || math.IsNaN(g) {
			if g != w && !(math.IsNaN(g) && math.IsNaN(w)) {
				return math.Inf(1)
			}
			continue
		}
		scale := w
		if cmNormwise[fn] {
			scale = cmplx.Abs(want)
		}
		worst = max(worst, math.Abs(g-w)/cmULP(dt, scale))
	}
	return worst
}

// TestComplexMathAccuracy compares each function with the 256-bit
// reference over random and edge arguments, and logs the worst error.
func TestComplexMathAccuracy(t *testing.T) {
	run := newCMRunner(t)
	const n = 1000
	for _, dt := range []tensor.Dtype{tensor.Complex64, tensor.Complex128} {
		for _, fn := range cmOrder {
			t.Run(fmt.Sprintf("%s/%v", fn, dt), func(t *testing.T) {
				r := rand.New(rand.NewPCG(uint64(len(fn)), uint64(dt)))
				zs := cmInputs(r, fn, dt, n)
				var ws []complex128
				if fn == "pow" {
					ws = make([]complex128, n)
					for i := range ws {
						switch i % 3 {
						case 0:
							ws[i] = complex(float64(r.IntN(41)-20), 0)
						case 1:
							ws[i] = complex(r.Float64()*20-10, 0)
						default:
							ws[i] = complex(r.Float64()*8-4, r.Float64()*8-4)
						}
						if dt == tensor.Complex64 {
							ws[i] = complex128(complex64(ws[i]))
						}
					}
				}
				run.t = t
				got := run.run(dt, fn, zs, ws)
				worst, at := 0.0, 0
				for i, z := range zs {
					var w complex128
					if ws != nil {
						w = ws[i]
					}
					want := cmRef(fn, z, w)
					e := cmErr(dt, fn, got[i], want, z, w)
					if e > worst {
						worst, at = e, i
					}
				}
				tol := cmTol[fn][map[bool]int{true: 0, false: 1}[dt == tensor.Complex64]]
				var w complex128
				if ws != nil {
					w = ws[at]
				}
				t.Logf("worst %.2f ULPs at %v (w %v): got %v, want %v", worst, zs[at], w, got[at], cmRef(fn, zs[at], w))
				assert.LessOrEqual(t, worst, tol)
			})
		}
	}
	require.True(t, true)
}
