package opcore

import (
	"fmt"
	"math"
	"strings"

	"github.com/vkflow/vkflow/tensor"
)

// Unary element-wise ops. The output has x's shape and dtype (bool for
// the classifications isnan, isinf, isfinite and signbit); out nil
// allocates it, and out may be x itself (in place). float16 computes in
// float32 and rounds once on store.

func init() {
	for name, f := range map[string]func(Owner, *tensor.Tensor, *tensor.Tensor) (*Op, error){
		"abs": Abs, "neg": Neg, "exp": Exp, "log": Log, "sqrt": Sqrt, "tanh": Tanh, "sigmoid": Sigmoid, "relu": Relu,
	} {
		builtinUnary(name, f)
	}
	Builtin("clip", func(o Owner, in, out []*tensor.Tensor, at Attrs) (*Op, error) {
		if err := Inputs("clip", in, 1); err != nil {
			return nil, err
		}
		if err := TooMany("clip", out, 1); err != nil {
			return nil, err
		}
		return Clip(o, in[0], at.Min, at.Max, OutAt(out, 0))
	})
}

// unary builds the unary element-wise op name (ewDefs) over x.
func unary(o Owner, name string, x, out *tensor.Tensor) (*Op, error) {
	def := ewDefs[name]
	op, err := NewOp(o, name, x)
	if err != nil {
		return nil, err
	}
	dt := x.Dtype()
	e, helpers, err := ewExpr(op, name, def, dt)
	if err != nil {
		return op.Fail(err)
	}
	outDt := ewOutDtype(name, def, dt)
	ins := []*tensor.Tensor{x}
	if !strings.Contains(e, "a0") {
		// A constant (isnan of an integer): the compiler would drop an
		// unread input's binding.
		ins = nil
	}
	return op.elementwise(ewKernel{ins: ins, outDt: outDt, shape: x.Shape(), expr: e, helpers: helpers}, out)
}

// transcendental gives the expression calling fn+"F" (float16, float32)
// or fn+"D" (float64) from mathglsl.go.
func transcendental(fn string) exprFunc {
	return func(op *Op, dt tensor.Dtype) (string, string, error) {
		if dt == tensor.Float64 {
			return fn + "D(a0)", MathF64, nil
		}
		return fn + "F(a0)", mathF32, nil
	}
}

// Abs computes |x| element-wise. Dtypes: every numeric dtype; unsigned
// integers are unchanged, and the most negative signed integer stays as it
// is (it wraps, as in NumPy). For complex64 and complex128 it is the
// modulus, as float32 or float64 (see complex.go).
func Abs(o Owner, x, out *tensor.Tensor) (*Op, error) {
	return unary(o, "abs", x, out)
}

func absExpr(_ *Op, dt tensor.Dtype) (string, string, error) {
	switch {
	case dt.IsComplex():
		return Cfn("cabs", dt, "a0"), ComplexGLSL(dt), nil
	case IsFloat(dt):
		return "abs(a0)", "", nil
	case isSigned(dt):
		return fmt.Sprintf("a0 < %[1]s(0) ? -a0 : a0", ComputeType(dt)), "", nil
	}
	return "a0", "", nil
}

// Neg computes -x element-wise. Dtypes: every numeric dtype, complex
// included (both parts negated); integers wrap, unsigned ones included
// (-1 as uint8 is 255), as in NumPy.
func Neg(o Owner, x, out *tensor.Tensor) (*Op, error) {
	return unary(o, "neg", x, out)
}

// Exp computes e**x element-wise (within 2 ULPs; see mathglsl.go).
// Dtypes: floats; integers are ErrInvalid (Cast first).
func Exp(o Owner, x, out *tensor.Tensor) (*Op, error) {
	return unary(o, "exp", x, out)
}

// Log computes the natural logarithm element-wise (log 0 = -Inf, log of a
// negative number is NaN; within 2 ULPs). Dtypes: floats; integers are
// ErrInvalid (Cast first).
func Log(o Owner, x, out *tensor.Tensor) (*Op, error) {
	return unary(o, "log", x, out)
}

// Sqrt computes the square root element-wise (NaN for negative x).
// Dtypes: float16, float32 and float64; integers are ErrInvalid (Cast
// first).
func Sqrt(o Owner, x, out *tensor.Tensor) (*Op, error) {
	return unary(o, "sqrt", x, out)
}

// Tanh computes the hyperbolic tangent element-wise (within 4 ULPs).
// Dtypes: floats; integers are ErrInvalid (Cast first).
func Tanh(o Owner, x, out *tensor.Tensor) (*Op, error) {
	return unary(o, "tanh", x, out)
}

// Sigmoid computes 1/(1+e**-x) element-wise (e**x/(1+e**x) for x < 0,
// so that tiny results keep their precision; within 2 ULPs). Dtypes:
// floats; integers are ErrInvalid (Cast first).
func Sigmoid(o Owner, x, out *tensor.Tensor) (*Op, error) {
	return unary(o, "sigmoid", x, out)
}

// Relu computes max(x, 0) element-wise; relu(NaN) is NaN. Dtypes: every
// numeric dtype (unsigned integers are unchanged).
func Relu(o Owner, x, out *tensor.Tensor) (*Op, error) {
	return unary(o, "relu", x, out)
}

func reluExpr(_ *Op, dt tensor.Dtype) (string, string, error) {
	if isUnsigned(dt) {
		return "a0", "", nil
	}
	return fmt.Sprintf("a0 < %[1]s(0) ? %[1]s(0) : a0", ComputeType(dt)), "", nil
}

// Clip limits x to [lo, hi] element-wise: minimum(maximum(x, lo), hi), as
// NumPy's clip, so lo > hi gives hi everywhere and a NaN in x stays NaN.
// A nil bound is unbounded. Dtypes: every numeric dtype. A bound must be
// representable in x's dtype: an integral value within the integer
// dtype's range, or for floats any value (rounded to the nearest float16
// or float32; one past the finite range becomes ±Inf); a NaN bound is
// ErrInvalid.
func Clip(o Owner, x *tensor.Tensor, lo, hi *float64, out *tensor.Tensor) (*Op, error) {
	op, err := NewOp(o, "clip", x)
	if err != nil {
		return nil, err
	}
	dt := x.Dtype()
	if !numeric.has(dt) {
		return op.Fail(op.Unsupported(dt, numeric.String()))
	}
	ct := ComputeType(dt)
	// The bounds are push constants of x's compute type, before n.
	var decl string
	var push []any
	body := "v"
	for _, bd := range []struct {
		v    *float64
		name string
		f    string
	}{{lo, "lo", "max"}, {hi, "hi", "min"}} {
		if bd.v == nil {
			continue
		}
		v, err := clipBound(op, dt, bd.name, *bd.v)
		if err != nil {
			return op.Fail(err)
		}
		push = append(push, v)
		decl += fmt.Sprintf(" %s %s;", ct, bd.name)
		body = clipStep(dt, bd.f, body, bd.name)
	}
	helpers := fmt.Sprintf("%[1]s clipC(%[1]s v) { return %[2]s; }\n", ct, body)
	k := ewKernel{ins: []*tensor.Tensor{x}, outDt: dt, shape: x.Shape(), expr: "clipC(a0)", helpers: helpers, pushDecl: decl, push: push}
	return op.elementwise(k, out)
}

// clipStep applies f (min or max) with bound to v; for floats a NaN v
// stays NaN.
func clipStep(dt tensor.Dtype, f, v, bound string) string {
	if IsFloat(dt) {
		return fmt.Sprintf("(isnan(%[2]s) ? %[2]s : %[1]s(%[2]s, %[3]s))", f, v, bound)
	}
	return fmt.Sprintf("%s(%s, %s)", f, v, bound)
}

// clipBound converts a clip bound to x's compute type, as a push
// constant value.
func clipBound(op *Op, dt tensor.Dtype, name string, v float64) (any, error) {
	if math.IsNaN(v) {
		return nil, op.Errorf("%s bound is NaN", name)
	}
	if IsFloat(dt) {
		if dt == tensor.Float64 {
			return v, nil
		}
		if dt == tensor.Float16 {
			return tensor.HalfFrom(float32(v)).Float32(), nil
		}
		return float32(v), nil
	}
	lo, hi := intRange(dt)
	if v != math.Trunc(v) || v < lo || v > hi {
		return nil, op.Errorf("%s bound %v is not representable in %v", name, v, dt)
	}
	switch dt {
	case tensor.Int64:
		return int64(v), nil
	case tensor.Uint64:
		return uint64(v), nil
	case tensor.Int8, tensor.Int16, tensor.Int32:
		return int32(v), nil
	}
	return uint32(v), nil
}

// intRange returns the smallest and largest values of an integer dtype,
// as float64 (the 64-bit limits rounded to the float64 values that are
// still in range).
func intRange(dt tensor.Dtype) (float64, float64) {
	switch dt {
	case tensor.Int8:
		return math.MinInt8, math.MaxInt8
	case tensor.Int16:
		return math.MinInt16, math.MaxInt16
	case tensor.Int32:
		return math.MinInt32, math.MaxInt32
	case tensor.Int64:
		return math.MinInt64, math.Nextafter(math.MaxInt64, 0)
	case tensor.Uint8:
		return 0, math.MaxUint8
	case tensor.Uint16:
		return 0, math.MaxUint16
	case tensor.Uint32:
		return 0, math.MaxUint32
	case tensor.Uint64:
		return 0, math.Nextafter(math.MaxUint64, 0)
	}
	return 0, 1
}
