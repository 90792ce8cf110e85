package opcore

import (
	"math"
	"math/big"
	"sync"
)

// The complex functions in multi-precision arithmetic (math/big), the
// reference of the accuracy tests: each from a formula that is exact in
// real arithmetic (log1p and expm1 by their series near 0, atanh by its
// log1p form), at 320 bits plus the spread of the argument's exponents,
// so that the cancellation in the formulas (asinh(x + iy) for y tiny
// against x: log1p of a sum that cancels to y's size) leaves 256 bits. A zero component of an argument is taken as ±2^-1500 (its
// sign kept), so that the side of a branch cut, and the sign of a zero
// result, come out as the limit from that side.

var cmPrec uint = 320

type bc struct{ re, im *big.Float }

func bfl(v float64) *big.Float { return new(big.Float).SetPrec(cmPrec).SetFloat64(v) }
func bnew() *big.Float         { return new(big.Float).SetPrec(cmPrec) }
func badd(a, b *big.Float) *big.Float {
	return bnew().Add(a, b)
}
func bsub(a, b *big.Float) *big.Float { return bnew().Sub(a, b) }
func bmul(a, b *big.Float) *big.Float { return bnew().Mul(a, b) }
func bquo(a, b *big.Float) *big.Float { return bnew().Quo(a, b) }
func bneg(a *big.Float) *big.Float    { return bnew().Neg(a) }
func bsqrt(a *big.Float) *big.Float   { return bnew().Sqrt(a) }

func (a bc) add(b bc) bc { return bc{badd(a.re, b.re), badd(a.im, b.im)} }
func (a bc) sub(b bc) bc { return bc{bsub(a.re, b.re), bsub(a.im, b.im)} }
func (a bc) mul(b bc) bc {
	return bc{bsub(bmul(a.re, b.re), bmul(a.im, b.im)), badd(bmul(a.re, b.im), bmul(a.im, b.re))}
}
func (a bc) quo(b bc) bc {
	d := badd(bmul(b.re, b.re), bmul(b.im, b.im))
	n := a.mul(bc{b.re, bneg(b.im)})
	return bc{bquo(n.re, d), bquo(n.im, d)}
}
func (a bc) neg() bc       { return bc{bneg(a.re), bneg(a.im)} }
func (a bc) timesI() bc    { return bc{bneg(a.im), a.re} } // i a
func (a bc) timesNegI() bc { return bc{a.im, bneg(a.re)} } // -i a
func bcReal(v float64) bc  { return bc{bfl(v), bfl(0)} }

func (a bc) c128() complex128 {
	r, _ := a.re.Float64()
	i, _ := a.im.Float64()
	return complex(r, i)
}

// bcFrom is z with zero parts made ±2^-1500.
func bcFrom(z complex128) bc {
	part := func(v float64) *big.Float {
		if v == 0 {
			t := bnew().SetMantExp(bfl(1), -1500)
			if math.Signbit(v) {
				t.Neg(t)
			}
			return t
		}
		return bfl(v)
	}
	return bc{part(real(z)), part(imag(z))}
}

var (
	cmRefOnce sync.Once
	cmLn2     *big.Float
	cmLn10    *big.Float
	cmPi      *big.Float
)

func cmRefInit() {
	cmRefOnce.Do(func() {
		cmLn2 = bmul(bfl(2), batanhSeries(bquo(bfl(1), bfl(3))))
		cmPi = bnew().Set(bigPiCached())
		cmLn10 = blog(bfl(10))
	})
}

// batanhSeries is atanh(t) for |t| <= 1/2.
func batanhSeries(t *big.Float) *big.Float {
	sum, pw, t2 := bnew(), bnew().Set(t), bmul(t, t)
	for k := 0; k < 400; k++ {
		term := bquo(pw, bfl(float64(2*k+1)))
		sum.Add(sum, term)
		if term.Sign() == 0 || term.MantExp(nil)-sum.MantExp(nil) < -int(cmPrec)-4 {
			break
		}
		pw.Mul(pw, t2)
	}
	return sum
}

// blog1p is log(1 + u), u > -1.
func blog1p(u *big.Float) *big.Float {
	if u.Sign() == 0 {
		return bnew()
	}
	if new(big.Float).Abs(u).Cmp(bfl(0.5)) < 0 {
		return bmul(bfl(2), batanhSeries(bquo(u, badd(bfl(2), u))))
	}
	return blog(badd(bfl(1), u))
}

// blog is log(x), x > 0.
func blog(x *big.Float) *big.Float {
	if d := bsub(x, bfl(1)); new(big.Float).Abs(d).Cmp(bfl(0.25)) < 0 && cmLn2 != nil {
		return blog1p(d)
	}
	m := bnew()
	e := x.MantExp(m) // x = m 2^e, m in [0.5, 1)
	if m.Cmp(bfl(math.Sqrt2/2)) < 0 {
		m.Mul(m, bfl(2))
		e--
	}
	r := bmul(bfl(2), batanhSeries(bquo(bsub(m, bfl(1)), badd(m, bfl(1)))))
	if e != 0 {
		l2 := cmLn2
		if l2 == nil {
			l2 = bmul(bfl(2), batanhSeries(bquo(bfl(1), bfl(3))))
		}
		r.Add(r, bmul(bfl(float64(e)), l2))
	}
	return r
}

// bexp is e^x for |x| < 1e6.
func bexp(x *big.Float) *big.Float {
	f, _ := x.Float64()
	k := math.Round(f / math.Ln2)
	r := bsub(x, bmul(bfl(k), cmLn2))
	r.SetMantExp(r, -10)
	sum, term := bfl(1), bfl(1)
	for n := 1; n < 60; n++ {
		term = bquo(bmul(term, r), bfl(float64(n)))
		sum.Add(sum, term)
	}
	for i := 0; i < 10; i++ {
		sum.Mul(sum, sum)
	}
	return sum.SetMantExp(sum, int(k))
}

// bexpm1 is e^x - 1 without cancellation near 0.
func bexpm1(x *big.Float) *big.Float {
	if new(big.Float).Abs(x).Cmp(bfl(0.5)) >= 0 {
		return bsub(bexp(x), bfl(1))
	}
	sum, term := bnew(), bfl(1)
	for n := 1; n < 90; n++ {
		term = bquo(bmul(term, x), bfl(float64(n)))
		sum.Add(sum, term)
	}
	return sum
}

// bsincos is sin x and cos x, reduced by pi/2 with bigPi's 1600 bits.
func bsincos(x *big.Float) (*big.Float, *big.Float) {
	p := new(big.Float).SetPrec(trigPrec).Quo(bigPiCached(), big.NewFloat(2))
	bx := new(big.Float).SetPrec(trigPrec).Set(x)
	q := new(big.Float).SetPrec(trigPrec).Quo(bx, p)
	fq, _ := q.Float64()
	qi, _ := new(big.Float).SetPrec(trigPrec).Add(q, big.NewFloat(math.Copysign(0.5, fq))).Int(nil)
	r := new(big.Float).SetPrec(trigPrec).Mul(new(big.Float).SetPrec(trigPrec).SetInt(qi), p)
	r.Sub(bx, r)
	rr := bnew().Set(r)
	s, c, term := bnew(), bnew(), bfl(1)
	for k := 0; k < 80; k++ {
		t := bnew().Set(term)
		if (k/2)%2 == 1 {
			t.Neg(t)
		}
		if k%2 == 0 {
			c.Add(c, t)
		} else {
			s.Add(s, t)
		}
		term = bquo(bmul(term, rr), bfl(float64(k+1)))
	}
	switch new(big.Int).And(qi, big.NewInt(3)).Int64() {
	case 1:
		s, c = c, bneg(s)
	case 2:
		s, c = bneg(s), bneg(c)
	case 3:
		s, c = bneg(c), s
	}
	return s, c
}

// bsinhcosh is sinh x and cosh x.
func bsinhcosh(x *big.Float) (*big.Float, *big.Float) {
	if new(big.Float).Abs(x).Cmp(bfl(0.5)) >= 0 {
		e := bexp(x)
		ie := bquo(bfl(1), e)
		return bmul(bfl(0.5), bsub(e, ie)), bmul(bfl(0.5), badd(e, ie))
	}
	em := bexpm1(x) // sinh = (em + em/(em+1))/2, cosh = sinh + 1/(em+1)
	e := badd(em, bfl(1))
	sh := bmul(bfl(0.5), badd(em, bquo(em, e)))
	return sh, badd(sh, bquo(bfl(1), e))
}

// batan2 is atan2(y, x) (the zeros are never exact here: see bcFrom).
func batan2(y, x *big.Float) *big.Float {
	ay, ax := new(big.Float).Abs(y), new(big.Float).Abs(x)
	var t *big.Float
	if ay.Cmp(ax) <= 0 {
		t = refAtan(new(big.Float).SetPrec(refPrec).Quo(ay, ax))
	} else {
		t = bsub(bquo(cmPi, bfl(2)), refAtan(new(big.Float).SetPrec(refPrec).Quo(ax, ay)))
	}
	t = bnew().Set(t)
	if x.Signbit() {
		t = bsub(cmPi, t)
	}
	if y.Signbit() {
		t.Neg(t)
	}
	return t
}

func babs(a bc) *big.Float { return bsqrt(badd(bmul(a.re, a.re), bmul(a.im, a.im))) }

func bcExp(z bc) bc {
	e := bexp(z.re)
	s, c := bsincos(z.im)
	return bc{bmul(e, c), bmul(e, s)}
}

func bcLog(z bc) bc {
	n := badd(bmul(z.re, z.re), bmul(z.im, z.im))
	return bc{bmul(bfl(0.5), blog(n)), batan2(z.im, z.re)}
}

// bcLog1p is log(1 + z): |1+z|^2 - 1 = 2x + x^2 + y^2.
func bcLog1p(z bc) bc {
	v := badd(bmul(bfl(2), z.re), badd(bmul(z.re, z.re), bmul(z.im, z.im)))
	return bc{bmul(bfl(0.5), blog1p(v)), batan2(z.im, badd(bfl(1), z.re))}
}

func bcSqrt(z bc) bc {
	t := bsqrt(bmul(bfl(0.5), badd(new(big.Float).Abs(z.re), babs(z))))
	u := bquo(new(big.Float).Abs(z.im), bmul(bfl(2), t))
	if z.re.Signbit() {
		t, u = u, t
	}
	if z.im.Signbit() {
		u.Neg(u)
	}
	return bc{t, u}
}

func bcSinh(z bc) bc {
	sh, ch := bsinhcosh(z.re)
	s, c := bsincos(z.im)
	return bc{bmul(sh, c), bmul(ch, s)}
}

func bcCosh(z bc) bc {
	sh, ch := bsinhcosh(z.re)
	s, c := bsincos(z.im)
	return bc{bmul(ch, c), bmul(sh, s)}
}

// bcTanh is (sinh 2x + i sin 2y) / (cosh 2x + cos 2y); past |x| = 400,
// sign(x) + i 4 sin y cos y e^(-2|x|).
func bcTanh(z bc) bc {
	x2 := bmul(bfl(2), z.re)
	s, c := bsincos(bmul(bfl(2), z.im))
	if f, _ := z.re.Float64(); math.Abs(f) > 400 {
		e := bexp(bfl(-2 * math.Abs(f)))
		return bc{bfl(math.Copysign(1, f)), bmul(bmul(bfl(2), s), e)}
	}
	sh, ch := bsinhcosh(x2)
	d := badd(ch, c)
	return bc{bquo(sh, d), bquo(s, d)}
}

// bcAsinh is log1p(w + w^2/(1 + sqrt(1 + w^2))) for Re w >= 0, odd.
func bcAsinh(z bc) bc {
	if z.re.Signbit() {
		return bcAsinh(z.neg()).neg()
	}
	w2 := z.mul(z)
	s := bcSqrt(w2.add(bcReal(1)))
	return bcLog1p(z.add(w2.quo(s.add(bcReal(1)))))
}

// bcAcosh is log(z + sqrt(z+1) sqrt(z-1)) as log1p((z - 1) + ...).
func bcAcosh(z bc) bc {
	zm := z.sub(bcReal(1))
	return bcLog1p(zm.add(bcSqrt(z.add(bcReal(1))).mul(bcSqrt(zm))))
}

// bcAtanh is log1p(4x/((1-x)^2 + y^2))/4 + i atan2(2y, (1-x)(1+x) - y^2)/2.
func bcAtanh(z bc) bc {
	xm := bsub(bfl(1), z.re)
	d := badd(bmul(xm, xm), bmul(z.im, z.im))
	re := bmul(bfl(0.25), blog1p(bquo(bmul(bfl(4), z.re), d)))
	im := bmul(bfl(0.5), batan2(bmul(bfl(2), z.im), bsub(bmul(xm, badd(bfl(1), z.re)), bmul(z.im, z.im))))
	return bc{re, im}
}

// cmRef is the reference of fn at z (and w for pow).
func cmRef(fn string, z, w complex128) complex128 {
	cmPrec = 320
	cmRefInit()
	spread, tiny := 0, 0
	for _, c := range []complex128{z, w} {
		e := [2]int{-1500, -1500}
		for k, v := range []float64{real(c), imag(c)} {
			if v != 0 && !math.IsInf(v, 0) {
				_, e[k] = math.Frexp(v)
			}
		}
		spread = max(spread, e[0]-e[1], e[1]-e[0])
		tiny = max(tiny, -min(e[0], e[1]))
	}
	cmPrec = uint(320 + spread + min(tiny, 1100))
	defer func() { cmPrec = 320 }()
	b := bcFrom(z)
	var r bc
	switch fn {
	case "exp":
		r = bcExp(b)
	case "expm1":
		s, c := bsincos(b.im)
		h, _ := bsincos(bmul(bfl(0.5), b.im)) // e^x cos y - 1 = expm1(x) cos y - 2 sin^2(y/2)
		em := bexpm1(b.re)
		r = bc{bsub(bmul(em, c), bmul(bfl(2), bmul(h, h))), bmul(badd(em, bfl(1)), s)}
	case "log":
		r = bcLog(b)
	case "log2", "log10":
		r = bcLog(b)
		k := cmLn2
		if fn == "log10" {
			k = cmLn10
		}
		r = bc{bquo(r.re, k), bquo(r.im, k)}
	case "log1p":
		r = bcLog1p(b)
	case "sqrt":
		r = bcSqrt(b)
	case "sinh":
		r = bcSinh(b)
	case "cosh":
		r = bcCosh(b)
	case "tanh":
		r = bcTanh(b)
	case "sin":
		r = bcSinh(b.timesI()).timesNegI()
	case "cos":
		r = bcCosh(b.timesI())
	case "tan":
		r = bcTanh(b.timesI()).timesNegI()
	case "asinh":
		r = bcAsinh(b)
	case "asin":
		r = bcAsinh(b.timesI()).timesNegI()
	case "acos":
		a := bcAsinh(b.timesI()).timesNegI()
		r = bc{bsub(bquo(cmPi, bfl(2)), a.re), bneg(a.im)}
	case "acosh":
		r = bcAcosh(b)
	case "atanh":
		r = bcAtanh(b)
	case "atan":
		r = bcAtanh(b.timesI()).timesNegI()
	case "pow":
		r = bcExp(bcFrom(w).mul(bcLog(b)))
	}
	return r.c128()
}
