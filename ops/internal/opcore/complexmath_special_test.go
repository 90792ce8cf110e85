package opcore

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/vkflow/vkflow/tensor"
)

// cmSpecial are the special cases of the array API standard (2023.12) for
// complex inputs, as its docstrings list them: fn, the class of a =
// real(x) and of b = imag(x), and the result as "re|im". Classes: +0, -0,
// ±0, 1, +inf, -inf, nan, fin (finite), posfin, nzfin (nonzero finite),
// nz (not equal to 0: NaN and ±inf too), any. Results: a number, ±v (sign
// unspecified), nan, pi/2, 3pi/4, pi/4, pi, and the cis forms of the
// standard ("inf*cis(b)", "0*cis(b)", with "-1" after them for expm1).
var cmSpecial = []struct{ fn, a, b, want string }{
	{"exp", "±0", "+0", "1|+0"}, {"exp", "fin", "+inf", "nan|nan"}, {"exp", "fin", "nan", "nan|nan"},
	{"exp", "+inf", "+0", "+inf|+0"}, {"exp", "-inf", "fin", "0*cis(b)"}, {"exp", "+inf", "nzfin", "inf*cis(b)"},
	{"exp", "-inf", "+inf", "±0|±0"}, {"exp", "+inf", "+inf", "±inf|nan"}, {"exp", "-inf", "nan", "±0|±0"},
	{"exp", "+inf", "nan", "±inf|nan"}, {"exp", "nan", "+0", "nan|+0"}, {"exp", "nan", "nz", "nan|nan"},

	{"expm1", "±0", "+0", "+0|+0"}, {"expm1", "fin", "+inf", "nan|nan"}, {"expm1", "fin", "nan", "nan|nan"},
	{"expm1", "+inf", "+0", "+inf|+0"}, {"expm1", "-inf", "fin", "0*cis(b)-1"}, {"expm1", "+inf", "nzfin", "inf*cis(b)-1"},
	{"expm1", "-inf", "+inf", "-1|±0"}, {"expm1", "+inf", "+inf", "±inf|nan"}, {"expm1", "-inf", "nan", "-1|±0"},
	{"expm1", "+inf", "nan", "±inf|nan"}, {"expm1", "nan", "+0", "nan|+0"}, {"expm1", "nan", "nz", "nan|nan"},

	{"log", "-0", "+0", "-inf|pi"}, {"log", "+0", "+0", "-inf|+0"}, {"log", "fin", "+inf", "+inf|pi/2"},
	{"log", "fin", "nan", "nan|nan"}, {"log", "-inf", "posfin", "+inf|pi"}, {"log", "+inf", "posfin", "+inf|+0"},
	{"log", "-inf", "+inf", "+inf|3pi/4"}, {"log", "+inf", "+inf", "+inf|pi/4"}, {"log", "±inf", "nan", "+inf|nan"},
	{"log", "nan", "fin", "nan|nan"}, {"log", "nan", "+inf", "+inf|nan"}, {"log", "nan", "nan", "nan|nan"},

	{"log1p", "-1", "+0", "-inf|+0"}, {"log1p", "fin", "+inf", "+inf|pi/2"}, {"log1p", "fin", "nan", "nan|nan"},
	{"log1p", "-inf", "posfin", "+inf|pi"}, {"log1p", "+inf", "posfin", "+inf|+0"}, {"log1p", "-inf", "+inf", "+inf|3pi/4"},
	{"log1p", "+inf", "+inf", "+inf|pi/4"}, {"log1p", "±inf", "nan", "+inf|nan"}, {"log1p", "nan", "fin", "nan|nan"},
	{"log1p", "nan", "+inf", "+inf|nan"}, {"log1p", "nan", "nan", "nan|nan"},

	{"sqrt", "±0", "+0", "+0|+0"}, {"sqrt", "any", "+inf", "+inf|+inf"}, {"sqrt", "fin", "nan", "nan|nan"},
	{"sqrt", "-inf", "posfin", "+0|+inf"}, {"sqrt", "+inf", "posfin", "+inf|+0"}, {"sqrt", "-inf", "nan", "nan|±inf"},
	{"sqrt", "+inf", "nan", "+inf|nan"}, {"sqrt", "nan", "fin", "nan|nan"}, {"sqrt", "nan", "nan", "nan|nan"},

	{"sinh", "+0", "+0", "+0|+0"}, {"sinh", "+0", "+inf", "±0|nan"}, {"sinh", "+0", "nan", "±0|nan"},
	{"sinh", "posfin", "+inf", "nan|nan"}, {"sinh", "posfin", "nan", "nan|nan"}, {"sinh", "+inf", "+0", "+inf|+0"},
	{"sinh", "+inf", "posfin", "inf*cis(b)"}, {"sinh", "+inf", "+inf", "±inf|nan"}, {"sinh", "+inf", "nan", "±inf|nan"},
	{"sinh", "nan", "+0", "nan|+0"}, {"sinh", "nan", "nzfin", "nan|nan"}, {"sinh", "nan", "nan", "nan|nan"},

	{"cosh", "+0", "+0", "1|+0"}, {"cosh", "+0", "+inf", "nan|±0"}, {"cosh", "+0", "nan", "nan|±0"},
	{"cosh", "nzfin", "+inf", "nan|nan"}, {"cosh", "nzfin", "nan", "nan|nan"}, {"cosh", "+inf", "+0", "+inf|+0"},
	{"cosh", "+inf", "nzfin", "inf*cis(b)"}, {"cosh", "+inf", "+inf", "±inf|nan"}, {"cosh", "+inf", "nan", "+inf|nan"},
	{"cosh", "nan", "±0", "nan|±0"}, {"cosh", "nan", "nzfin", "nan|nan"}, {"cosh", "nan", "nan", "nan|nan"},

	{"tanh", "+0", "+0", "+0|+0"}, {"tanh", "nzfin", "+inf", "nan|nan"}, {"tanh", "+0", "+inf", "+0|nan"},
	{"tanh", "nzfin", "nan", "nan|nan"}, {"tanh", "+0", "nan", "+0|nan"}, {"tanh", "+inf", "posfin", "1|+0"},
	{"tanh", "+inf", "+inf", "1|±0"}, {"tanh", "+inf", "nan", "1|±0"}, {"tanh", "nan", "+0", "nan|+0"},
	{"tanh", "nan", "nz", "nan|nan"}, {"tanh", "nan", "nan", "nan|nan"},

	{"acos", "±0", "+0", "pi/2|-0"}, {"acos", "±0", "nan", "pi/2|nan"}, {"acos", "fin", "+inf", "pi/2|-inf"},
	{"acos", "nzfin", "nan", "nan|nan"}, {"acos", "-inf", "posfin", "pi|-inf"}, {"acos", "+inf", "posfin", "+0|-inf"},
	{"acos", "-inf", "+inf", "3pi/4|-inf"}, {"acos", "+inf", "+inf", "pi/4|-inf"}, {"acos", "±inf", "nan", "nan|±inf"},
	{"acos", "nan", "fin", "nan|nan"}, {"acos", "nan", "+inf", "nan|-inf"}, {"acos", "nan", "nan", "nan|nan"},

	{"acosh", "±0", "+0", "+0|pi/2"}, {"acosh", "fin", "+inf", "+inf|pi/2"}, {"acosh", "nzfin", "nan", "nan|nan"},
	{"acosh", "+0", "nan", "nan|±pi/2"}, {"acosh", "-inf", "posfin", "+inf|pi"}, {"acosh", "+inf", "posfin", "+inf|+0"},
	{"acosh", "-inf", "+inf", "+inf|3pi/4"}, {"acosh", "+inf", "+inf", "+inf|pi/4"}, {"acosh", "±inf", "nan", "+inf|nan"},
	{"acosh", "nan", "fin", "nan|nan"}, {"acosh", "nan", "+inf", "+inf|nan"}, {"acosh", "nan", "nan", "nan|nan"},

	{"asinh", "+0", "+0", "+0|+0"}, {"asinh", "posfin", "+inf", "+inf|pi/2"}, {"asinh", "fin", "nan", "nan|nan"},
	{"asinh", "+inf", "posfin", "+inf|+0"}, {"asinh", "+inf", "+inf", "+inf|pi/4"}, {"asinh", "nan", "+0", "nan|+0"},
	{"asinh", "nan", "nzfin", "nan|nan"}, {"asinh", "nan", "+inf", "±inf|nan"}, {"asinh", "nan", "nan", "nan|nan"},

	{"atanh", "+0", "+0", "+0|+0"}, {"atanh", "+0", "nan", "+0|nan"}, {"atanh", "1", "+0", "+inf|+0"},
	{"atanh", "posfin", "+inf", "+0|pi/2"}, {"atanh", "nzfin", "nan", "nan|nan"}, {"atanh", "+inf", "posfin", "+0|pi/2"},
	{"atanh", "+inf", "+inf", "+0|pi/2"}, {"atanh", "+inf", "nan", "+0|nan"}, {"atanh", "nan", "fin", "nan|nan"},
	{"atanh", "nan", "+inf", "±0|pi/2"}, {"atanh", "nan", "nan", "nan|nan"},
}

// cmSymmetry is the symmetry each function's special cases extend by
// besides f(conj z) = conj f(z), which all have: odd (f(-z) = -f(z), the
// standard's for asinh and atanh, C99's for sinh and tanh) or even
// (cosh, C99).
var cmSymmetry = map[string]string{"asinh": "odd", "atanh": "odd", "sinh": "odd", "tanh": "odd", "cosh": "even"}

var cmClasses = func() map[string][]float64 {
	nz, inf := math.Copysign(0, -1), math.Inf(1)
	c := map[string][]float64{
		"+0": {0}, "-0": {nz}, "±0": {0, nz}, "1": {1}, "-1": {-1}, "+inf": {inf}, "-inf": {-inf}, "±inf": {inf, -inf},
		"nan": {math.NaN()}, "posfin": {0.5, 1, 3, 1e30}, "nzfin": {-2.5, -1, 0.5, 1, 3, -1e30},
	}
	c["fin"] = append([]float64{0, nz}, c["nzfin"]...)
	c["nz"] = append([]float64{inf, -inf, math.NaN()}, c["nzfin"]...)
	c["any"] = append([]float64{0, nz}, c["nz"]...)
	return c
}()

// cmPart is one expected component.
type cmPart struct {
	v       float64
	anySign bool // the sign is unspecified
	approx  bool // a multiple of pi: within a few ULPs
}

func (p cmPart) neg() cmPart { p.v = -p.v; return p }

func (p cmPart) ok(dt tensor.Dtype, g float64) bool {
	switch {
	case math.IsNaN(p.v):
		return math.IsNaN(g)
	case p.approx:
		tol := 4e-16
		if dt == tensor.Complex64 {
			tol = 2.5e-7
		}
		v := p.v
		if p.anySign {
			g, v = math.Abs(g), math.Abs(v)
		}
		return math.Abs(g-v) <= tol*math.Abs(v)
	case p.anySign:
		return math.Abs(g) == math.Abs(p.v)
	}
	return g == p.v && math.Signbit(g) == math.Signbit(p.v)
}

func parsePart(s string) cmPart {
	var p cmPart
	if strings.HasPrefix(s, "±") {
		p.anySign = true
		s = strings.TrimPrefix(s, "±")
	}
	pis := map[string]float64{"pi/2": math.Pi / 2, "pi": math.Pi, "3pi/4": 3 * math.Pi / 4, "pi/4": math.Pi / 4}
	if v, ok := pis[s]; ok {
		p.v, p.approx = v, true
		return p
	}
	switch s {
	case "nan":
		p.v = math.NaN()
	case "+inf", "inf":
		p.v = math.Inf(1)
	case "-inf":
		p.v = math.Inf(-1)
	case "+0", "0":
		p.v = 0
	case "-0":
		p.v = math.Copysign(0, -1)
	case "1":
		p.v = 1
	case "-1":
		p.v = -1
	default:
		panic("complexmath test: bad part " + s)
	}
	return p
}

// cmExpect gives the expected parts for input b (the cis forms use it).
func cmExpect(want string, dt tensor.Dtype, b float64) [2]cmPart {
	c, s := math.Cos(b), math.Sin(b)
	if dt == tensor.Complex64 {
		c, s = math.Cos(float64(float32(b))), math.Sin(float64(float32(b)))
	}
	inf := math.Inf(1)
	switch want {
	case "inf*cis(b)", "inf*cis(b)-1":
		return [2]cmPart{{v: inf * c}, {v: inf * s}}
	case "0*cis(b)":
		return [2]cmPart{{v: 0 * c}, {v: 0 * s}}
	case "0*cis(b)-1":
		return [2]cmPart{{v: -1}, {v: 0 * s}}
	}
	re, im, _ := strings.Cut(want, "|")
	return [2]cmPart{parsePart(re), parsePart(im)}
}

func TestComplexSpecialCases(t *testing.T) {
	r := newCMRunner(t)
	for _, dt := range []tensor.Dtype{tensor.Complex64, tensor.Complex128} {
		type tc struct {
			z    complex128
			want [2]cmPart
			src  string
		}
		byFn := map[string][]tc{}
		for _, c := range cmSpecial {
			for _, a := range cmClasses[c.a] {
				for _, b := range cmClasses[c.b] {
					w := cmExpect(c.want, dt, b)
					src := fmt.Sprintf("%s(%s, %s) -> %s", c.fn, c.a, c.b, c.want)
					add := func(z complex128, w [2]cmPart, how string) {
						byFn[c.fn] = append(byFn[c.fn], tc{z, w, src + how})
					}
					add(complex(a, b), w, "")
					add(complex(a, -b), [2]cmPart{w[0], w[1].neg()}, " (conj)")
					switch cmSymmetry[c.fn] {
					case "odd":
						add(complex(-a, -b), [2]cmPart{w[0].neg(), w[1].neg()}, " (odd)")
						add(complex(-a, b), [2]cmPart{w[0].neg(), w[1]}, " (odd, conj)")
					case "even":
						add(complex(-a, -b), w, " (even)")
						add(complex(-a, b), [2]cmPart{w[0], w[1].neg()}, " (even, conj)")
					}
				}
			}
		}
		for fn, cs := range byFn {
			zs := make([]complex128, len(cs))
			for i, c := range cs {
				zs[i] = c.z
			}
			got := r.run(dt, fn, zs, nil)
			for i, c := range cs {
				g := got[i]
				assert.True(t, c.want[0].ok(dt, real(g)) && c.want[1].ok(dt, imag(g)),
					"%v %s: %s(%v): got (%v, %v), want (%v, %v)", dt, c.src, fn, fmtC(c.z), fmtF(real(g)), fmtF(imag(g)),
					fmtF(c.want[0].v), fmtF(c.want[1].v))
			}
		}
	}
}

// TestComplexPowSpecial: pow(z, 0) = 1 + 0j for every z, 0^w = 0 for
// Re w > 0, and small integral powers are exact.
func TestComplexPowSpecial(t *testing.T) {
	r := newCMRunner(t)
	nan, inf := math.NaN(), math.Inf(1)
	zs := []complex128{complex(nan, nan), complex(inf, 0), complex(0, 0), complex(2, 3), complex(-1, 0), complex(0, 0), complex(0, 0), complex(1, 1), complex(1, 2), complex(2, -1), complex(3, 4), complex(-2, 0)}
	ws := []complex128{0, complex(0, math.Copysign(0, -1)), complex(math.Copysign(0, -1), 0), 0, 0, 2, complex(0.5, 3), 2, 3, -1, 0.5, -2}
	want := []complex128{1, 1, 1, 1, 1, 0, 0, complex(0, 2), complex(-11, -2), complex(0.4, 0.2), complex(2, 1), 0.25}
	for _, dt := range []tensor.Dtype{tensor.Complex64, tensor.Complex128} {
		got := r.run(dt, "pow", zs, ws)
		for i := range zs {
			ok := got[i] == want[i] && (imag(want[i]) != 0 || !math.Signbit(imag(got[i]))) && (real(want[i]) != 0 || !math.Signbit(real(got[i])))
			if i == 9 || i == 10 { // not exactly representable
				ok = math.Abs(real(got[i])-real(want[i])) < 1e-6 && math.Abs(imag(got[i])-imag(want[i])) < 1e-6
			}
			assert.True(t, ok, "%v pow(%v, %v) = %v, want %v", dt, zs[i], ws[i], got[i], want[i])
		}
	}
}

func fmtF(v float64) string {
	if v == 0 && math.Signbit(v) {
		return "-0"
	}
	return fmt.Sprint(v)
}

func fmtC(z complex128) string { return "(" + fmtF(real(z)) + ", " + fmtF(imag(z)) + ")" }
