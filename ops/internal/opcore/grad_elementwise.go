package opcore

import (
	"fmt"
	"math"

	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/tensor"
)

// VJPs of the element-wise ops (elementwise.go, mathfn.go, trig.go,
// complex.go, classify.go, intdiv.go). A unary rule returns g·conj(f'(x))
// from x, y = f(x) and the cotangent g; conj is a no-op on real tensors,
// so one rule serves real and complex dtypes where the op takes both.

type unaryVJP func(b *GradBuilder, x, y, g *tensor.Tensor) *tensor.Tensor

var unaryVJPs = map[string]unaryVJP{
	"neg": func(b *GradBuilder, _, _, g *tensor.Tensor) *tensor.Tensor { return b.Neg(g) },
	"exp": func(b *GradBuilder, _, y, g *tensor.Tensor) *tensor.Tensor { return b.Mul(g, b.Conj(y)) },
	"expm1": func(b *GradBuilder, _, y, g *tensor.Tensor) *tensor.Tensor {
		return b.Mul(g, b.Conj(b.addc(y, 1)))
	},
	"log":   func(b *GradBuilder, x, _, g *tensor.Tensor) *tensor.Tensor { return b.Div(g, b.Conj(x)) },
	"log1p": func(b *GradBuilder, x, _, g *tensor.Tensor) *tensor.Tensor { return b.Div(g, b.Conj(b.addc(x, 1))) },
	"log2": func(b *GradBuilder, x, _, g *tensor.Tensor) *tensor.Tensor {
		return b.Div(g, b.Conj(b.Scale(x, math.Ln2)))
	},
	"log10": func(b *GradBuilder, x, _, g *tensor.Tensor) *tensor.Tensor {
		return b.Div(g, b.Conj(b.Scale(x, math.Ln10)))
	},
	"sqrt":   func(b *GradBuilder, _, y, g *tensor.Tensor) *tensor.Tensor { return b.Div(g, b.Conj(b.Scale(y, 2))) },
	"square": func(b *GradBuilder, x, _, g *tensor.Tensor) *tensor.Tensor { return b.Mul(g, b.Conj(b.Scale(x, 2))) },
	"reciprocal": func(b *GradBuilder, _, y, g *tensor.Tensor) *tensor.Tensor {
		return b.Neg(b.Mul(g, b.Conj(b.Mul(y, y))))
	},
	"sin": func(b *GradBuilder, x, _, g *tensor.Tensor) *tensor.Tensor {
		return b.Mul(g, b.Conj(b.Unary("cos", x)))
	},
	"cos": func(b *GradBuilder, x, _, g *tensor.Tensor) *tensor.Tensor {
		return b.Neg(b.Mul(g, b.Conj(b.Unary("sin", x))))
	},
	"tan": func(b *GradBuilder, _, y, g *tensor.Tensor) *tensor.Tensor {
		return b.Mul(g, b.Conj(b.addc(b.Mul(y, y), 1)))
	},
	"asin": func(b *GradBuilder, x, _, g *tensor.Tensor) *tensor.Tensor {
		return b.Div(g, b.Conj(b.Unary("sqrt", b.Rsub(1, b.Mul(x, x)))))
	},
	"acos": func(b *GradBuilder, x, _, g *tensor.Tensor) *tensor.Tensor {
		return b.Neg(b.Div(g, b.Conj(b.Unary("sqrt", b.Rsub(1, b.Mul(x, x))))))
	},
	"atan": func(b *GradBuilder, x, _, g *tensor.Tensor) *tensor.Tensor {
		return b.Div(g, b.Conj(b.addc(b.Mul(x, x), 1)))
	},
	"sinh": func(b *GradBuilder, x, _, g *tensor.Tensor) *tensor.Tensor {
		return b.Mul(g, b.Conj(b.Unary("cosh", x)))
	},
	"cosh": func(b *GradBuilder, x, _, g *tensor.Tensor) *tensor.Tensor {
		return b.Mul(g, b.Conj(b.Unary("sinh", x)))
	},
	"tanh": func(b *GradBuilder, _, y, g *tensor.Tensor) *tensor.Tensor {
		return b.Mul(g, b.Conj(b.Rsub(1, b.Mul(y, y))))
	},
	"asinh": func(b *GradBuilder, x, _, g *tensor.Tensor) *tensor.Tensor {
		return b.Div(g, b.Conj(b.Unary("sqrt", b.addc(b.Mul(x, x), 1))))
	},
	"acosh": func(b *GradBuilder, x, _, g *tensor.Tensor) *tensor.Tensor {
		return b.Div(g, b.Conj(b.Unary("sqrt", b.Mul(b.addc(x, -1), b.addc(x, 1)))))
	},
	"atanh": func(b *GradBuilder, x, _, g *tensor.Tensor) *tensor.Tensor {
		return b.Div(g, b.Conj(b.Rsub(1, b.Mul(x, x))))
	},
	"sigmoid": func(b *GradBuilder, _, y, g *tensor.Tensor) *tensor.Tensor {
		return b.Mul(g, b.Mul(y, b.Rsub(1, y)))
	},
	"relu": func(b *GradBuilder, x, _, g *tensor.Tensor) *tensor.Tensor {
		return b.Where(b.Binary("greater", x, b.Zero(x)), g, b.Zero(g))
	},
	"abs": func(b *GradBuilder, x, _, g *tensor.Tensor) *tensor.Tensor {
		// g·sgn(x), sgn(z) = z/|z| for complex (0 at 0), as PyTorch.
		return b.Mul(b.CastTo(g, x.Dtype()), b.Unary("sign", x))
	},
	"conj": func(b *GradBuilder, _, _, g *tensor.Tensor) *tensor.Tensor { return b.Conj(g) },
	"real": func(b *GradBuilder, x, _, g *tensor.Tensor) *tensor.Tensor { return b.CastTo(g, x.Dtype()) },
	"imag": func(b *GradBuilder, x, _, g *tensor.Tensor) *tensor.Tensor {
		if !x.Dtype().IsComplex() {
			return b.Zeros(x.Dtype(), x.Shape())
		}
		return b.Mul(b.CastTo(g, x.Dtype()), b.Const(x.Dtype(), 1i))
	},
}

// binaryVJP returns the gradients of a and b (before SumTo) from a, b,
// y = f(a, b) and g; want says which are asked for.
type binaryVJP func(bl *GradBuilder, a, b, y, g *tensor.Tensor, want [2]bool) (ga, gb *tensor.Tensor)

var binaryVJPs = map[string]binaryVJP{
	"add": func(_ *GradBuilder, _, _, _, g *tensor.Tensor, _ [2]bool) (*tensor.Tensor, *tensor.Tensor) {
		return g, g
	},
	"sub": func(bl *GradBuilder, _, _, _, g *tensor.Tensor, w [2]bool) (ga, gb *tensor.Tensor) {
		if w[1] {
			gb = bl.Neg(g)
		}
		return g, gb
	},
	"mul": func(bl *GradBuilder, a, b, _, g *tensor.Tensor, w [2]bool) (ga, gb *tensor.Tensor) {
		if w[0] {
			ga = bl.Mul(g, bl.Conj(b))
		}
		if w[1] {
			gb = bl.Mul(g, bl.Conj(a))
		}
		return ga, gb
	},
	"div": func(bl *GradBuilder, _, b, y, g *tensor.Tensor, w [2]bool) (ga, gb *tensor.Tensor) {
		ga = bl.Div(g, bl.Conj(b))
		if w[1] {
			gb = bl.Neg(bl.Mul(ga, bl.Conj(y)))
		}
		return ga, gb
	},
	"pow": func(bl *GradBuilder, a, b, y, g *tensor.Tensor, w [2]bool) (ga, gb *tensor.Tensor) {
		if w[0] {
			// b·a^(b-1), and 0 where b == 0 (as PyTorch).
			d := bl.Mul(b, bl.Binary("pow", a, bl.addc(b, -1)))
			ga = bl.Where(bl.Binary("equal", b, bl.Zero(b)), bl.Zero(g), bl.Mul(g, d))
		}
		if w[1] {
			// y·log a, and 0 where a == 0 and b >= 0 (as PyTorch).
			mask := bl.Binary("logical_and", bl.Binary("equal", a, bl.Zero(a)), bl.Binary("greater_equal", b, bl.Zero(b)))
			gb = bl.Where(mask, bl.Zero(g), bl.Mul(g, bl.Mul(y, bl.Unary("log", a))))
		}
		return ga, gb
	},
	"maximum": minMaxVJP("greater"),
	"minimum": minMaxVJP("less"),
	"atan2": func(bl *GradBuilder, a, b, _, g *tensor.Tensor, w [2]bool) (ga, gb *tensor.Tensor) {
		den := bl.Add(bl.Mul(a, a), bl.Mul(b, b))
		if w[0] {
			ga = bl.Div(bl.Mul(g, b), den)
		}
		if w[1] {
			gb = bl.Neg(bl.Div(bl.Mul(g, a), den))
		}
		return ga, gb
	},
	"hypot": func(bl *GradBuilder, a, b, y, g *tensor.Tensor, w [2]bool) (ga, gb *tensor.Tensor) {
		q := bl.Div(g, y)
		if w[0] {
			ga = bl.Mul(q, a)
		}
		if w[1] {
			gb = bl.Mul(q, b)
		}
		return ga, gb
	},
	"copysign": func(bl *GradBuilder, a, b, y, g *tensor.Tensor, w [2]bool) (ga, gb *tensor.Tensor) {
		if w[0] {
			// g·y/a, 0 where a == 0 (as PyTorch).
			ga = bl.Where(bl.Binary("equal", a, bl.Zero(a)), bl.Zero(g), bl.Mul(g, bl.Div(y, a)))
		}
		if w[1] {
			gb = bl.Zeros(b.Dtype(), b.Shape())
		}
		return ga, gb
	},
	"logaddexp": func(bl *GradBuilder, a, b, y, g *tensor.Tensor, w [2]bool) (ga, gb *tensor.Tensor) {
		if w[0] {
			ga = bl.Mul(g, bl.Unary("exp", bl.Sub(a, y)))
		}
		if w[1] {
			gb = bl.Mul(g, bl.Unary("exp", bl.Sub(b, y)))
		}
		return ga, gb
	},
	"remainder": func(bl *GradBuilder, a, b, _, g *tensor.Tensor, w [2]bool) (ga, gb *tensor.Tensor) {
		if w[1] {
			gb = bl.Neg(bl.Mul(g, bl.Binary("floor_divide", a, b)))
		}
		return g, gb
	},
}

// minMaxVJP is maximum's (cmp "greater") or minimum's (cmp "less"): the
// cotangent goes to the input that won, half to each on a tie (as
// PyTorch).
func minMaxVJP(cmp string) binaryVJP {
	return func(bl *GradBuilder, a, b, _, g *tensor.Tensor, w [2]bool) (ga, gb *tensor.Tensor) {
		half := bl.Scale(g, 0.5)
		tie := bl.Where(bl.Binary("equal", a, b), half, bl.Zero(g))
		if w[0] {
			ga = bl.Where(bl.Binary(cmp, a, b), g, tie)
		}
		if w[1] {
			gb = bl.Where(bl.Binary(cmp, b, a), g, tie)
		}
		return ga, gb
	}
}

func init() {
	for name, f := range unaryVJPs {
		DefVJP(name, func(b *GradBuilder) []*tensor.Tensor {
			x := b.In(0)
			var y *tensor.Tensor
			switch name {
			case "exp", "expm1", "sqrt", "reciprocal", "tan", "tanh", "sigmoid":
				y = b.Out(0)
			}
			g := b.Cot(0)
			if b.err != nil {
				return nil
			}
			return []*tensor.Tensor{f(b, x, y, g)}
		})
	}
	for name, f := range binaryVJPs {
		DefVJP(name, func(bl *GradBuilder) []*tensor.Tensor {
			a, b := bl.In(0), bl.In(1)
			var y *tensor.Tensor
			switch name {
			case "div", "pow", "hypot", "copysign", "logaddexp":
				y = bl.Out(0)
			}
			g := bl.Cot(0)
			if bl.err != nil {
				return nil
			}
			w := [2]bool{bl.Wants(0), bl.Wants(1)}
			ga, gb := f(bl, a, b, y, g, w)
			res := make([]*tensor.Tensor, 2)
			if w[0] && ga != nil {
				res[0] = bl.SumTo(ga, a.Shape())
			}
			if w[1] && gb != nil {
				res[1] = bl.SumTo(gb, b.Shape())
			}
			return res
		})
	}
	defZeroVJP("floor", "ceil", "trunc", "round", "floor_divide")
	DefVJP("sign", func(b *GradBuilder) []*tensor.Tensor {
		if b.In(0).Dtype().IsComplex() {
			b.Fail(fmt.Errorf("ops.sign: VJP: %w: the complex sign's VJP is not written yet: %w", ErrNoGradient, core.ErrInvalid))
			return nil
		}
		return zeroVJP(b)
	})
	DefNoGrad("a comparison: its bool result has no derivative",
		"equal", "not_equal", "less", "less_equal", "greater", "greater_equal")
	DefNoGrad("a logical op: bool in, bool out", "logical_and", "logical_or", "logical_xor", "logical_not",
		"all", "any")
	DefNoGrad("a bitwise op: integers in, integers out", "bitwise_and", "bitwise_or", "bitwise_xor",
		"bitwise_invert", "bitwise_left_shift", "bitwise_right_shift")
	DefNoGrad("a classification: its bool result has no derivative", "isnan", "isinf", "isfinite", "signbit")
	DefNoGrad("nextafter steps to the next float: a step function of its inputs", "nextafter")
	DefVJP("where", whereVJP)
	DefVJP("clip", clipVJP)
	DefVJP("cast", castVJP)
}

// whereVJP: the cotangent goes to a where cond holds, to b elsewhere;
// cond gets none.
func whereVJP(bl *GradBuilder) []*tensor.Tensor {
	c, a, b := bl.In(0), bl.In(1), bl.In(2)
	g := bl.Cot(0)
	if bl.err != nil {
		return nil
	}
	res := make([]*tensor.Tensor, 3)
	z := bl.Zero(g)
	if bl.Wants(1) {
		res[1] = bl.SumTo(bl.Where(c, g, z), a.Shape())
	}
	if bl.Wants(2) {
		res[2] = bl.SumTo(bl.Where(c, z, g), b.Shape())
	}
	return res
}

// clipVJP: the cotangent passes where lo <= x <= hi (both inclusive, as
// PyTorch's clamp).
func clipVJP(b *GradBuilder) []*tensor.Tensor {
	x := b.In(0)
	g := b.Cot(0)
	if b.err != nil {
		return nil
	}
	at := b.Attrs()
	var mask *tensor.Tensor
	if at.Min != nil {
		mask = b.Binary("greater_equal", x, b.Const(x.Dtype(), complex(*at.Min, 0)))
	}
	if at.Max != nil {
		m := b.Binary("less_equal", x, b.Const(x.Dtype(), complex(*at.Max, 0)))
		if mask == nil {
			mask = m
		} else {
			mask = b.Binary("logical_and", mask, m)
		}
	}
	if mask == nil {
		return []*tensor.Tensor{g}
	}
	return []*tensor.Tensor{b.Where(mask, g, b.Zero(g))}
}

// castVJP casts the cotangent back (its real part for a real input of a
// complex cast).
func castVJP(b *GradBuilder) []*tensor.Tensor {
	g := b.Cot(0)
	if b.err != nil || !differentiableDtype(g.Dtype()) {
		return []*tensor.Tensor{nil}
	}
	return []*tensor.Tensor{b.CastTo(g, b.In(0).Dtype())}
}
