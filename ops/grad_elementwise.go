package ops

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
	"neg": func(b *GradBuilder, _, _, g *tensor.Tensor) *tensor.Tensor { return b.neg(g) },
	"exp": func(b *GradBuilder, _, y, g *tensor.Tensor) *tensor.Tensor { return b.mul(g, b.conj(y)) },
	"expm1": func(b *GradBuilder, _, y, g *tensor.Tensor) *tensor.Tensor {
		return b.mul(g, b.conj(b.addc(y, 1)))
	},
	"log":   func(b *GradBuilder, x, _, g *tensor.Tensor) *tensor.Tensor { return b.div(g, b.conj(x)) },
	"log1p": func(b *GradBuilder, x, _, g *tensor.Tensor) *tensor.Tensor { return b.div(g, b.conj(b.addc(x, 1))) },
	"log2": func(b *GradBuilder, x, _, g *tensor.Tensor) *tensor.Tensor {
		return b.div(g, b.conj(b.scale(x, math.Ln2)))
	},
	"log10": func(b *GradBuilder, x, _, g *tensor.Tensor) *tensor.Tensor {
		return b.div(g, b.conj(b.scale(x, math.Ln10)))
	},
	"sqrt":   func(b *GradBuilder, _, y, g *tensor.Tensor) *tensor.Tensor { return b.div(g, b.conj(b.scale(y, 2))) },
	"square": func(b *GradBuilder, x, _, g *tensor.Tensor) *tensor.Tensor { return b.mul(g, b.conj(b.scale(x, 2))) },
	"reciprocal": func(b *GradBuilder, _, y, g *tensor.Tensor) *tensor.Tensor {
		return b.neg(b.mul(g, b.conj(b.mul(y, y))))
	},
	"sin": func(b *GradBuilder, x, _, g *tensor.Tensor) *tensor.Tensor { return b.mul(g, b.conj(b.un("cos", x))) },
	"cos": func(b *GradBuilder, x, _, g *tensor.Tensor) *tensor.Tensor {
		return b.neg(b.mul(g, b.conj(b.un("sin", x))))
	},
	"tan": func(b *GradBuilder, _, y, g *tensor.Tensor) *tensor.Tensor {
		return b.mul(g, b.conj(b.addc(b.mul(y, y), 1)))
	},
	"asin": func(b *GradBuilder, x, _, g *tensor.Tensor) *tensor.Tensor {
		return b.div(g, b.conj(b.un("sqrt", b.rsub(1, b.mul(x, x)))))
	},
	"acos": func(b *GradBuilder, x, _, g *tensor.Tensor) *tensor.Tensor {
		return b.neg(b.div(g, b.conj(b.un("sqrt", b.rsub(1, b.mul(x, x))))))
	},
	"atan": func(b *GradBuilder, x, _, g *tensor.Tensor) *tensor.Tensor {
		return b.div(g, b.conj(b.addc(b.mul(x, x), 1)))
	},
	"sinh": func(b *GradBuilder, x, _, g *tensor.Tensor) *tensor.Tensor { return b.mul(g, b.conj(b.un("cosh", x))) },
	"cosh": func(b *GradBuilder, x, _, g *tensor.Tensor) *tensor.Tensor { return b.mul(g, b.conj(b.un("sinh", x))) },
	"tanh": func(b *GradBuilder, _, y, g *tensor.Tensor) *tensor.Tensor {
		return b.mul(g, b.conj(b.rsub(1, b.mul(y, y))))
	},
	"asinh": func(b *GradBuilder, x, _, g *tensor.Tensor) *tensor.Tensor {
		return b.div(g, b.conj(b.un("sqrt", b.addc(b.mul(x, x), 1))))
	},
	"acosh": func(b *GradBuilder, x, _, g *tensor.Tensor) *tensor.Tensor {
		return b.div(g, b.conj(b.un("sqrt", b.mul(b.addc(x, -1), b.addc(x, 1)))))
	},
	"atanh": func(b *GradBuilder, x, _, g *tensor.Tensor) *tensor.Tensor {
		return b.div(g, b.conj(b.rsub(1, b.mul(x, x))))
	},
	"sigmoid": func(b *GradBuilder, _, y, g *tensor.Tensor) *tensor.Tensor {
		return b.mul(g, b.mul(y, b.rsub(1, y)))
	},
	"relu": func(b *GradBuilder, x, _, g *tensor.Tensor) *tensor.Tensor {
		return b.where(b.bin("greater", x, b.zero(x)), g, b.zero(g))
	},
	"abs": func(b *GradBuilder, x, _, g *tensor.Tensor) *tensor.Tensor {
		// g·sgn(x), sgn(z) = z/|z| for complex (0 at 0), as PyTorch.
		return b.mul(b.castTo(g, x.Dtype()), b.un("sign", x))
	},
	"conj": func(b *GradBuilder, _, _, g *tensor.Tensor) *tensor.Tensor { return b.conj(g) },
	"real": func(b *GradBuilder, x, _, g *tensor.Tensor) *tensor.Tensor { return b.castTo(g, x.Dtype()) },
	"imag": func(b *GradBuilder, x, _, g *tensor.Tensor) *tensor.Tensor {
		if !x.Dtype().IsComplex() {
			return b.Zeros(x.Dtype(), x.Shape())
		}
		return b.mul(b.castTo(g, x.Dtype()), b.Const(x.Dtype(), 1i))
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
			gb = bl.neg(g)
		}
		return g, gb
	},
	"mul": func(bl *GradBuilder, a, b, _, g *tensor.Tensor, w [2]bool) (ga, gb *tensor.Tensor) {
		if w[0] {
			ga = bl.mul(g, bl.conj(b))
		}
		if w[1] {
			gb = bl.mul(g, bl.conj(a))
		}
		return ga, gb
	},
	"div": func(bl *GradBuilder, _, b, y, g *tensor.Tensor, w [2]bool) (ga, gb *tensor.Tensor) {
		ga = bl.div(g, bl.conj(b))
		if w[1] {
			gb = bl.neg(bl.mul(ga, bl.conj(y)))
		}
		return ga, gb
	},
	"pow": func(bl *GradBuilder, a, b, y, g *tensor.Tensor, w [2]bool) (ga, gb *tensor.Tensor) {
		if w[0] {
			// b·a^(b-1), and 0 where b == 0 (as PyTorch).
			d := bl.mul(b, bl.bin("pow", a, bl.addc(b, -1)))
			ga = bl.where(bl.bin("equal", b, bl.zero(b)), bl.zero(g), bl.mul(g, d))
		}
		if w[1] {
			// y·log a, and 0 where a == 0 and b >= 0 (as PyTorch).
			mask := bl.bin("logical_and", bl.bin("equal", a, bl.zero(a)), bl.bin("greater_equal", b, bl.zero(b)))
			gb = bl.where(mask, bl.zero(g), bl.mul(g, bl.mul(y, bl.un("log", a))))
		}
		return ga, gb
	},
	"maximum": minMaxVJP("greater"),
	"minimum": minMaxVJP("less"),
	"atan2": func(bl *GradBuilder, a, b, _, g *tensor.Tensor, w [2]bool) (ga, gb *tensor.Tensor) {
		den := bl.add(bl.mul(a, a), bl.mul(b, b))
		if w[0] {
			ga = bl.div(bl.mul(g, b), den)
		}
		if w[1] {
			gb = bl.neg(bl.div(bl.mul(g, a), den))
		}
		return ga, gb
	},
	"hypot": func(bl *GradBuilder, a, b, y, g *tensor.Tensor, w [2]bool) (ga, gb *tensor.Tensor) {
		q := bl.div(g, y)
		if w[0] {
			ga = bl.mul(q, a)
		}
		if w[1] {
			gb = bl.mul(q, b)
		}
		return ga, gb
	},
	"copysign": func(bl *GradBuilder, a, b, y, g *tensor.Tensor, w [2]bool) (ga, gb *tensor.Tensor) {
		if w[0] {
			// g·y/a, 0 where a == 0 (as PyTorch).
			ga = bl.where(bl.bin("equal", a, bl.zero(a)), bl.zero(g), bl.mul(g, bl.div(y, a)))
		}
		if w[1] {
			gb = bl.Zeros(b.Dtype(), b.Shape())
		}
		return ga, gb
	},
	"logaddexp": func(bl *GradBuilder, a, b, y, g *tensor.Tensor, w [2]bool) (ga, gb *tensor.Tensor) {
		if w[0] {
			ga = bl.mul(g, bl.un("exp", bl.sub(a, y)))
		}
		if w[1] {
			gb = bl.mul(g, bl.un("exp", bl.sub(b, y)))
		}
		return ga, gb
	},
	"remainder": func(bl *GradBuilder, a, b, _, g *tensor.Tensor, w [2]bool) (ga, gb *tensor.Tensor) {
		if w[1] {
			gb = bl.neg(bl.mul(g, bl.bin("floor_divide", a, b)))
		}
		return g, gb
	},
}

// minMaxVJP is maximum's (cmp "greater") or minimum's (cmp "less"): the
// cotangent goes to the input that won, half to each on a tie (as
// PyTorch).
func minMaxVJP(cmp string) binaryVJP {
	return func(bl *GradBuilder, a, b, _, g *tensor.Tensor, w [2]bool) (ga, gb *tensor.Tensor) {
		half := bl.scale(g, 0.5)
		tie := bl.where(bl.bin("equal", a, b), half, bl.zero(g))
		if w[0] {
			ga = bl.where(bl.bin(cmp, a, b), g, tie)
		}
		if w[1] {
			gb = bl.where(bl.bin(cmp, b, a), g, tie)
		}
		return ga, gb
	}
}

func init() {
	for name, f := range unaryVJPs {
		defVJP(name, func(b *GradBuilder) []*tensor.Tensor {
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
		defVJP(name, func(bl *GradBuilder) []*tensor.Tensor {
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
	defVJP("sign", func(b *GradBuilder) []*tensor.Tensor {
		if b.In(0).Dtype().IsComplex() {
			b.fail(fmt.Errorf("ops.sign: VJP: %w: the complex sign's VJP is not written yet: %w", ErrNoGradient, core.ErrInvalid))
			return nil
		}
		return zeroVJP(b)
	})
	defNoGrad("a comparison: its bool result has no derivative",
		"equal", "not_equal", "less", "less_equal", "greater", "greater_equal")
	defNoGrad("a logical op: bool in, bool out", "logical_and", "logical_or", "logical_xor", "logical_not",
		"all", "any")
	defNoGrad("a bitwise op: integers in, integers out", "bitwise_and", "bitwise_or", "bitwise_xor",
		"bitwise_invert", "bitwise_left_shift", "bitwise_right_shift")
	defNoGrad("a classification: its bool result has no derivative", "isnan", "isinf", "isfinite", "signbit")
	defNoGrad("nextafter steps to the next float: a step function of its inputs", "nextafter")
	defVJP("where", whereVJP)
	defVJP("clip", clipVJP)
	defVJP("cast", castVJP)
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
	z := bl.zero(g)
	if bl.Wants(1) {
		res[1] = bl.SumTo(bl.where(c, g, z), a.Shape())
	}
	if bl.Wants(2) {
		res[2] = bl.SumTo(bl.where(c, z, g), b.Shape())
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
		mask = b.bin("greater_equal", x, b.Const(x.Dtype(), complex(*at.Min, 0)))
	}
	if at.Max != nil {
		m := b.bin("less_equal", x, b.Const(x.Dtype(), complex(*at.Max, 0)))
		if mask == nil {
			mask = m
		} else {
			mask = b.bin("logical_and", mask, m)
		}
	}
	if mask == nil {
		return []*tensor.Tensor{g}
	}
	return []*tensor.Tensor{b.where(mask, g, b.zero(g))}
}

// castVJP casts the cotangent back (its real part for a real input of a
// complex cast).
func castVJP(b *GradBuilder) []*tensor.Tensor {
	g := b.Cot(0)
	if b.err != nil || !differentiableDtype(g.Dtype()) {
		return []*tensor.Tensor{nil}
	}
	return []*tensor.Tensor{b.castTo(g, b.In(0).Dtype())}
}
