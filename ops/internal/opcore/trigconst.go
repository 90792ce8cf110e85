package opcore

import (
	"fmt"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"
)

// Constants of the trigonometric GLSL (trig_glsl.go), computed here in
// 400-bit arithmetic: the bits of 2/pi for Payne and Hanek's reduction,
// pi/2, pi/4 and pi as two floats (hi + lo), atan(k/8) for the atan table,
// and the Taylor coefficients of sin, cos, atan and asin.

const trigPrec = 1600 // bits: 2/pi needs 40 words of 32 bits

// bigPi computes pi to trigPrec bits (Machin: 16 atan(1/5) - 4 atan(1/239)).
func bigPi() *big.Float {
	a5, a239 := bigAtanInv(5), bigAtanInv(239)
	a5.Mul(a5, big.NewFloat(16).SetPrec(trigPrec))
	a239.Mul(a239, big.NewFloat(4).SetPrec(trigPrec))
	return a5.Sub(a5, a239)
}

// bigAtanInv is atan(1/n) by its series.
func bigAtanInv(n int64) *big.Float {
	x := new(big.Float).SetPrec(trigPrec).Quo(big.NewFloat(1).SetPrec(trigPrec), big.NewFloat(float64(n)).SetPrec(trigPrec))
	return bigAtanSeries(x)
}

// bigAtanSeries sums atan's series, for |x| <= 1/2.
func bigAtanSeries(x *big.Float) *big.Float {
	sum := new(big.Float).SetPrec(trigPrec)
	pw := new(big.Float).SetPrec(trigPrec).Set(x)
	x2 := new(big.Float).SetPrec(trigPrec).Mul(x, x)
	eps := new(big.Float).SetMantExp(big.NewFloat(1), -trigPrec-8)
	for k := int64(0); ; k++ {
		term := new(big.Float).SetPrec(trigPrec).Quo(pw, big.NewFloat(float64(2*k+1)).SetPrec(trigPrec))
		if k%2 == 1 {
			term.Neg(term)
		}
		sum.Add(sum, term)
		if new(big.Float).Abs(term).Cmp(eps) < 0 {
			return sum
		}
		pw.Mul(pw, x2)
	}
}

// bigAtan is atan(x) for 0 <= x <= 1: halved twice (atan x = 2 atan(x /
// (1 + sqrt(1 + x^2)))), then the series.
func bigAtan(x *big.Float) *big.Float {
	one := big.NewFloat(1).SetPrec(trigPrec)
	y := new(big.Float).SetPrec(trigPrec).Set(x)
	for i := 0; i < 2; i++ {
		d := new(big.Float).SetPrec(trigPrec).Mul(y, y)
		d.Add(d, one)
		d.Sqrt(d)
		d.Add(d, one)
		y.Quo(y, d)
	}
	r := bigAtanSeries(y)
	return r.Mul(r, big.NewFloat(4).SetPrec(trigPrec))
}

// twoOverPiWords are the first 40 32-bit words of 2/pi's fraction, most
// significant first (2/pi < 1: no integer part).
func twoOverPiWords() []uint32 {
	pi := bigPi()
	v := new(big.Float).SetPrec(trigPrec).Quo(big.NewFloat(2).SetPrec(trigPrec), pi)
	words := make([]uint32, 40)
	w := new(big.Float).SetPrec(trigPrec)
	for i := range words {
		v.Mul(v, new(big.Float).SetMantExp(big.NewFloat(1), 32))
		u, _ := v.Uint64()
		words[i] = uint32(u)
		v.Sub(v, w.SetUint64(u))
	}
	return words
}

// split2 gives v as hi + lo in float32 (double false) or float64.
func split2(v *big.Float, double bool) (float64, float64) {
	r := new(big.Float).SetPrec(trigPrec).Set(v)
	var hi float64
	if double {
		hi, _ = r.Float64()
	} else {
		f, _ := r.Float32()
		hi = float64(f)
	}
	r.Sub(r, big.NewFloat(hi))
	if double {
		lo, _ := r.Float64()
		return hi, lo
	}
	lo, _ := r.Float32()
	return hi, float64(lo)
}

// glslLit formats v as a GLSL float or double literal that reads back
// as the same value.
func glslLit(v float64, double bool) string {
	s := strconv.FormatFloat(v, 'g', -1, 32)
	if double {
		s = strconv.FormatFloat(v, 'g', -1, 64)
	}
	if !strings.ContainsAny(s, ".en") {
		s += ".0"
	}
	if double {
		s += "lf"
	}
	return s
}

// horner gives c[0] + z*(c[1] + z*(...)) in GLSL.
func horner(c []float64, double bool) string {
	s := glslLit(c[len(c)-1], double)
	for i := len(c) - 2; i >= 0; i-- {
		s = "(" + glslLit(c[i], double) + " + z * " + s + ")"
	}
	return s
}

// trigConsts are the template's constants for float (double false) or
// double, longest name first (no name may shadow a longer one).
func trigConsts(double bool) [][2]string {
	pi := bigPi()
	half := new(big.Float).SetPrec(trigPrec).Quo(pi, big.NewFloat(2))
	quarter := new(big.Float).SetPrec(trigPrec).Quo(pi, big.NewFloat(4))
	three := new(big.Float).SetPrec(trigPrec).Mul(quarter, big.NewFloat(3))
	var cs [][2]string
	add := func(name string, v float64) { cs = append(cs, [2]string{name, glslLit(v, double)}) }
	for _, c := range []struct {
		name string
		v    *big.Float
	}{{"PIO2", half}, {"PIO4", quarter}, {"PI", pi}, {"P3O4", three}} {
		hi, lo := split2(c.v, double)
		add("$"+c.name+"_HI", hi)
		add("$"+c.name+"_LO", lo)
	}
	// Taylor coefficients: sin's (-1)^n/(2n+1)! from n = 1, cos's
	// (-1)^n/(2n)! from n = 2, atan's (-1)^n/(2n+1) from n = 1, asin's
	// (2n)!/(4^n (n!)^2 (2n+1)) from n = 1. Degrees: the first term
	// left out is below 2^-60 (double) or 2^-30 (float) of the result on
	// the reduced ranges (|r| <= pi/4, |u| <= 1/16, |x| <= 1/2).
	nSin, nCos, nAtan, nAsin := 6, 7, 5, 13
	if double {
		nSin, nCos, nAtan, nAsin = 10, 11, 9, 28
	}
	var sinC, cosC, atanC, asinC []float64
	f := 1.0
	for k := 1; k <= 2*nCos+2; k++ {
		f *= float64(k)
		n := k / 2
		sg := 1.0
		if n%2 == 1 {
			sg = -1
		}
		if k%2 == 1 && n >= 1 && n <= nSin {
			sinC = append(sinC, sg/f)
		}
		if k%2 == 0 && n >= 2 && n <= nCos {
			cosC = append(cosC, sg/f)
		}
	}
	for n := 1; n <= nAtan; n++ {
		sg := 1.0
		if n%2 == 1 {
			sg = -1
		}
		atanC = append(atanC, sg/float64(2*n+1))
	}
	c := 1.0 // (2n)!/(4^n (n!)^2)
	for n := 1; n <= nAsin; n++ {
		c *= float64(2*n-1) / float64(2*n)
		asinC = append(asinC, c/float64(2*n+1))
	}
	cs = append(cs, [2]string{"$SINPOLY", horner(sinC, double)}, [2]string{"$COSPOLY", horner(cosC, double)},
		[2]string{"$ATANPOLY", horner(atanC, double)}, [2]string{"$ASINPOLY", horner(asinC, double)})
	// atan(k/8), k = 0..8, as hi and lo arrays.
	var his, los []string
	for k := 0; k <= 8; k++ {
		x := new(big.Float).SetPrec(trigPrec).Quo(big.NewFloat(float64(k)), big.NewFloat(8))
		hi, lo := split2(bigAtan(x), double)
		his, los = append(his, glslLit(hi, double)), append(los, glslLit(lo, double))
	}
	cs = append(cs, [2]string{"$ATANHI", strings.Join(his, ", ")}, [2]string{"$ATANLO", strings.Join(los, ", ")})
	// Cody and Waite's pi/2 = C1 + C2 + C3 + C4: C1 (truncated) and C2
	// with cwBits significant bits, so that q*C1 and q*C2 are exact for q
	// below 2^(53-33) (double) or 2^(24-12) (float); CWMAX keeps q below
	// half of that.
	cwBits, mant := uint(12), 24
	if double {
		cwBits, mant = 33, 53
	}
	c1 := new(big.Float).SetPrec(trigPrec).SetMantExp(big.NewFloat(1), int(cwBits)-1)
	c1.Mul(c1, half)
	ci, _ := c1.Int(nil)
	c1.SetInt(ci).SetMantExp(c1, 1-int(cwBits))
	rem := new(big.Float).SetPrec(trigPrec).Sub(half, c1)
	c2 := new(big.Float).SetPrec(cwBits).Set(rem)
	rem.Sub(rem, c2)
	c3, c4 := split2(rem, double)
	c1f, _ := c1.Float64()
	c2f, _ := c2.Float64()
	cwMax, _ := new(big.Float).Mul(half, new(big.Float).SetMantExp(big.NewFloat(1), mant-int(cwBits)-1)).Float64()
	add("$CW1", c1f)
	add("$CW2", c2f)
	add("$CW3", c3)
	add("$CW4", c4)
	add("$CWMAX", math.Floor(cwMax))
	if double {
		cs = append(cs, [2]string{"$SPLIT", "134217729.0lf"}, [2]string{"$MBITS", "53"}, [2]string{"$K", "6"})
	} else {
		cs = append(cs, [2]string{"$SPLIT", "4097.0"}, [2]string{"$MBITS", "24"}, [2]string{"$K", "4"})
	}
	sort.SliceStable(cs, func(i, j int) bool { return len(cs[i][0]) > len(cs[j][0]) })
	return cs
}

// twoOverPiGLSL declares the table of 2/pi's bits.
func twoOverPiGLSL() string {
	var b strings.Builder
	ws := twoOverPiWords()
	fmt.Fprintf(&b, "const uint TWO_OVER_PI[%d] = uint[%d](", len(ws), len(ws))
	for i, w := range ws {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "0x%08xu", w)
	}
	b.WriteString(");\n")
	return b.String()
}
