package opcore

import (
	"math"
	"math/big"
	"sync"
)

// TrigRef is the tests' reference for the trigonometric functions in
// float64: computed with 200-bit arithmetic (the reduction of sin, cos and
// tan with 1600 bits of pi), so that it is within half an ULP (Go's math
// is not: its Acos loses digits near 1).
var TrigRef = trigRef

const refPrec = 200

var (
	refPiOnce sync.Once
	refPi     *big.Float
)

func rf(v float64) *big.Float { return new(big.Float).SetPrec(refPrec).SetFloat64(v) }

// refAtan is atan(t), t >= 0 finite, at refPrec.
func refAtan(t *big.Float) *big.Float {
	one := rf(1)
	inv := t.Cmp(one) > 0
	y := new(big.Float).SetPrec(refPrec).Set(t)
	if inv {
		y.Quo(one, y)
	}
	for i := 0; i < 4; i++ { // atan y = 2 atan(y / (1 + sqrt(1 + y^2)))
		d := new(big.Float).SetPrec(refPrec).Mul(y, y)
		d.Add(d, one)
		d.Sqrt(d)
		d.Add(d, one)
		y.Quo(y, d)
	}
	sum := new(big.Float).SetPrec(refPrec)
	pw := new(big.Float).SetPrec(refPrec).Set(y)
	y2 := new(big.Float).SetPrec(refPrec).Mul(y, y)
	for k := 0; k < 60; k++ {
		term := new(big.Float).SetPrec(refPrec).Quo(pw, rf(float64(2*k+1)))
		if k%2 == 1 {
			term.Neg(term)
		}
		sum.Add(sum, term)
		pw.Mul(pw, y2)
	}
	sum.Mul(sum, rf(16))
	if inv {
		h := new(big.Float).SetPrec(refPrec).Quo(refPi, rf(2))
		sum.Sub(h, sum)
	}
	return sum
}

// refSinCos gives sin and cos of x.
func refSinCos(x float64) (*big.Float, *big.Float) {
	p := new(big.Float).SetPrec(trigPrec).Quo(bigPiCached(), big.NewFloat(2))
	bx := new(big.Float).SetPrec(trigPrec).SetFloat64(x)
	q := new(big.Float).SetPrec(trigPrec).Quo(bx, p)
	qi, _ := q.Int(nil)
	// round to nearest
	frac := new(big.Float).SetPrec(trigPrec).Sub(q, new(big.Float).SetInt(qi))
	if frac.Cmp(big.NewFloat(0.5)) > 0 {
		qi.Add(qi, big.NewInt(1))
	} else if frac.Cmp(big.NewFloat(-0.5)) < 0 {
		qi.Sub(qi, big.NewInt(1))
	}
	r := new(big.Float).SetPrec(trigPrec).Mul(new(big.Float).SetPrec(trigPrec).SetInt(qi), p)
	r.Sub(bx, r)
	r.SetPrec(refPrec)
	s, c := rf(0), rf(0)
	term := rf(1) // r^k/k!
	for k := 0; k < 90; k++ {
		t := new(big.Float).SetPrec(refPrec).Set(term)
		if (k/2)%2 == 1 {
			t.Neg(t)
		}
		if k%2 == 0 {
			c.Add(c, t)
		} else {
			s.Add(s, t)
		}
		term.Mul(term, r)
		term.Quo(term, rf(float64(k+1)))
	}
	qm := new(big.Int).And(qi, big.NewInt(3)).Int64()
	switch qm {
	case 1:
		s, c = c, s.Neg(s)
	case 2:
		s, c = s.Neg(s), c.Neg(c)
	case 3:
		s, c = c.Neg(c), s
	}
	return s, c
}

func bigPiCached() *big.Float {
	refPiOnce.Do(func() { refPi = bigPi() })
	return refPi
}

func trigRef(fn string, x, y float64) float64 {
	bigPiCached()
	if math.IsNaN(x) || math.IsInf(x, 0) || x == 0 || (fn == "atan2" && (y == 0 || math.IsInf(y, 0) || math.IsNaN(y))) {
		return map[string]func(float64, float64) float64{
			"sin": func(x, _ float64) float64 { return math.Sin(x) }, "cos": func(x, _ float64) float64 { return math.Cos(x) },
			"tan": func(x, _ float64) float64 { return math.Tan(x) }, "asin": func(x, _ float64) float64 { return math.Asin(x) },
			"acos": func(x, _ float64) float64 { return math.Acos(x) }, "atan": func(x, _ float64) float64 { return math.Atan(x) },
			"atan2": math.Atan2,
		}[fn](x, y)
	}
	var r *big.Float
	switch fn {
	case "sin", "cos", "tan":
		s, c := refSinCos(x)
		switch fn {
		case "sin":
			r = s
		case "cos":
			r = c
		default:
			r = s.Quo(s, c)
		}
	case "atan":
		r = refAtan(rf(math.Abs(x)))
		if x < 0 {
			r.Neg(r)
		}
	case "asin", "acos":
		if math.Abs(x) > 1 {
			return math.NaN()
		}
		// asin x = atan(x / sqrt(1 - x^2)); acos x = 2 atan(sqrt((1-x)/(1+x)))
		if fn == "asin" {
			if math.Abs(x) == 1 {
				return math.Asin(x)
			}
			d := rf(1)
			d.Sub(d, new(big.Float).SetPrec(refPrec).Mul(rf(x), rf(x)))
			d.Sqrt(d)
			r = refAtan(new(big.Float).SetPrec(refPrec).Quo(rf(math.Abs(x)), d))
			if x < 0 {
				r.Neg(r)
			}
		} else {
			if x == -1 {
				return math.Pi
			}
			n := rf(1)
			n.Sub(n, rf(x))
			d := rf(1)
			d.Add(d, rf(x))
			n.Quo(n, d)
			n.Sqrt(n)
			r = refAtan(n)
			r.Mul(r, rf(2))
		}
	case "atan2": // y is the x coordinate here: atan2(x, y)
		r = refAtan(new(big.Float).SetPrec(refPrec).Quo(rf(math.Abs(x)), rf(math.Abs(y))))
		if y < 0 {
			r.Sub(refPi, r)
		}
		if x < 0 {
			r.Neg(r)
		}
	}
	v, _ := r.Float64()
	return v
}
