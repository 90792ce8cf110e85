package opcore

import (
	"fmt"

	"github.com/vkflow/vkflow/tensor"
)

// Binary element-wise ops, comparisons and Where. They broadcast their
// inputs as NumPy does: shapes align at the right, and each dimension is
// equal or 1 (a 1 stretches); a 0-d tensor is a scalar. The output has the
// broadcast shape; out nil allocates it (the caller owns it, see
// Op.Outputs), a given out must have that shape and the op's output dtype,
// and may be one of the inputs when that input has the output's shape (in
// place).
//
// Dtypes: inputs of different dtypes compute in their promoted dtype, as
// the array API standard's table defines it (ResultType, promote.go):
// only within a kind; integers with floats, bool with numbers, and uint64
// with a signed integer are ErrInvalid naming both (Cast one of them).
// float16 computes in float32 and rounds once on store; 8-
// and 16-bit integers compute in 32 bits and wrap on store, and every
// integer op wraps as NumPy's do.

func init() {
	for name, f := range map[string]func(Owner, *tensor.Tensor, *tensor.Tensor, *tensor.Tensor) (*Op, error){
		"add": Add, "sub": Sub, "mul": Mul, "div": Div, "pow": Pow, "minimum": Minimum, "maximum": Maximum,
		"equal": Equal, "not_equal": NotEqual, "less": Less, "less_equal": LessEqual,
		"greater": Greater, "greater_equal": GreaterEqual,
	} {
		Builtin(name, func(o Owner, in, out []*tensor.Tensor, _ Attrs) (*Op, error) {
			if err := Inputs(name, in, 2); err != nil {
				return nil, err
			}
			if err := TooMany(name, out, 1); err != nil {
				return nil, err
			}
			return f(o, in[0], in[1], OutAt(out, 0))
		})
	}
	Builtin("where", func(o Owner, in, out []*tensor.Tensor, _ Attrs) (*Op, error) {
		if err := Inputs("where", in, 3); err != nil {
			return nil, err
		}
		if err := TooMany("where", out, 1); err != nil {
			return nil, err
		}
		return Where(o, in[0], in[1], in[2], OutAt(out, 0))
	})
}

// exprFunc gives an op's GLSL expression for dtype dt, over a0, a1, ...
// (of dt's compute type), and the helper functions it calls; or an error
// for a dtype the op refuses.
type exprFunc func(op *Op, dt tensor.Dtype) (expr, helpers string, err error)

// ewDef defines an element-wise op: its inputs, the dtypes it takes,
// whether its output is bool (else the inputs' dtype), and its GLSL
// expression. The typed functions and Fuse both build from it.
type ewDef struct {
	arity int
	class dtypeClass
	bool  bool
	expr  exprFunc
}

var ewDefs = map[string]ewDef{
	"add":           {2, numericC, false, fixed("a0 + a1")},
	"sub":           {2, numericC, false, fixed("a0 - a1")},
	"mul":           {2, numericC, false, mulExpr},
	"div":           {2, floatsC, false, divExpr},
	"pow":           {2, numeric, false, powExpr},
	"minimum":       {2, numeric, false, minMax("min")},
	"maximum":       {2, numeric, false, minMax("max")},
	"equal":         {2, anyDtype, true, compareExpr("a0 == a1", false)},
	"not_equal":     {2, anyDtype, true, compareExpr("a0 == a1", true)},
	"less":          {2, ordered, true, compareExpr("a0 < a1", false)},
	"less_equal":    {2, ordered, true, compareExpr("a0 <= a1", false)},
	"greater":       {2, ordered, true, compareExpr("a0 > a1", false)},
	"greater_equal": {2, ordered, true, compareExpr("a0 >= a1", false)},
	"abs":           {1, numericC, false, absExpr},
	"neg":           {1, numericC, false, fixed("-a0")},
	"exp":           {1, floats, false, transcendental("exp")},
	"log":           {1, floats, false, transcendental("log")},
	"sqrt":          {1, floats, false, fixed("sqrt(a0)")},
	"tanh":          {1, floats, false, transcendental("tanh")},
	"sigmoid":       {1, floats, false, transcendental("sigmoid")},
	"relu":          {1, numeric, false, reluExpr},

	// classify.go.
	"isnan":    {1, numericC, true, classExpr("isnan(a0)", false)},
	"isinf":    {1, numericC, true, classExpr("isinf(a0)", false)},
	"isfinite": {1, numericC, true, classExpr("!(isnan(a0) || isinf(a0))", true)},
	"signbit":  {1, numeric, true, signbitExpr},
	"sign":     {1, numericC, false, signExpr},
	"floor":    {1, numeric, false, roundingExpr("floor")},
	"ceil":     {1, numeric, false, roundingExpr("ceil")},
	"trunc":    {1, numeric, false, roundingExpr("trunc")},
	"round":    {1, numericC, false, roundingExpr("roundEven")},

	// mathfn.go.
	"expm1":      {1, floats, false, extFn("expm1x", "a0")},
	"log1p":      {1, floats, false, extFn("log1p", "a0")},
	"log2":       {1, floats, false, extFn("log2", "a0")},
	"log10":      {1, floats, false, extFn("log10", "a0")},
	"sinh":       {1, floats, false, extFn("sinh", "a0")},
	"cosh":       {1, floats, false, extFn("cosh", "a0")},
	"asinh":      {1, floats, false, extFn("asinh", "a0")},
	"acosh":      {1, floats, false, extFn("acosh", "a0")},
	"atanh":      {1, floats, false, extFn("atanh", "a0")},
	"reciprocal": {1, floats, false, reciprocalExpr},
	"hypot":      {2, floats, false, extFn("hypot", "a0, a1")},
	"copysign":   {2, floats, false, copysignExpr},
	"logaddexp":  {2, floats, false, extFn("logaddexp", "a0, a1")},
	"nextafter":  {2, floats, false, nextafterExpr},

	// trig.go.
	"sin":   {1, floats, false, trigFn("sin", "a0")},
	"cos":   {1, floats, false, trigFn("cos", "a0")},
	"tan":   {1, floats, false, trigFn("tan", "a0")},
	"asin":  {1, floats, false, trigFn("asin", "a0")},
	"acos":  {1, floats, false, trigFn("acos", "a0")},
	"atan":  {1, floats, false, trigFn("atan", "a0")},
	"atan2": {2, floats, false, trigFn("atan2", "a0, a1")},

	// intdiv.go and bitwise.go.
	"floor_divide":        {2, numeric, false, floorDivideExpr},
	"remainder":           {2, numeric, false, remainderExpr},
	"bitwise_and":         {2, integersBool, false, fixed("a0 & a1")},
	"bitwise_or":          {2, integersBool, false, fixed("a0 | a1")},
	"bitwise_xor":         {2, integersBool, false, fixed("a0 ^ a1")},
	"bitwise_invert":      {1, integersBool, false, invertExpr},
	"bitwise_left_shift":  {2, integers, false, shiftExpr(true)},
	"bitwise_right_shift": {2, integers, false, shiftExpr(false)},
	"logical_and":         {2, boolOnly, true, fixed("a0 & a1")},
	"logical_or":          {2, boolOnly, true, fixed("a0 | a1")},
	"logical_xor":         {2, boolOnly, true, fixed("a0 ^ a1")},
	"logical_not":         {1, boolOnly, true, fixed("a0 ^ 1u")},

	// complex.go.
	"square": {1, numericC, false, squareExpr},
	"real":   {1, numericC, false, realExpr},
	"imag":   {1, numericC, false, imagExpr},
	"conj":   {1, numericC, false, conjExpr},
}

// dtype classes an op takes.
type dtypeClass int

const (
	numeric      dtypeClass = iota // real floats and integers, not bool
	floats                         // float16, float32, float64
	anyDtype                       // every dtype, bool and complex included
	numericC                       // numeric and the complex dtypes
	floatsC                        // floats and the complex dtypes
	ordered                        // every dtype but the complex ones (an order exists)
	integers                       // the integer dtypes, not bool
	integersBool                   // the integer dtypes and bool
	boolOnly                       // bool
)

func (c dtypeClass) String() string {
	switch c {
	case numeric:
		return "float16, float32, float64 and the integer dtypes"
	case numericC:
		return "float16, float32, float64, complex64, complex128 and the integer dtypes"
	case floatsC:
		return "float16, float32, float64, complex64 and complex128; Cast an integer tensor to a float dtype first"
	case ordered:
		return "every dtype but complex64 and complex128 (complex numbers have no order)"
	case floats:
		return "float16, float32 and float64; Cast an integer tensor to a float dtype first"
	case integers:
		return "the integer dtypes; Cast a float or bool tensor to an integer dtype first"
	case integersBool:
		return "bool and the integer dtypes; Cast a float tensor to an integer dtype first"
	case boolOnly:
		return "bool only; cast to bool first (Cast, or a comparison)"
	}
	return "every dtype"
}

func (c dtypeClass) has(dt tensor.Dtype) bool {
	switch c {
	case numeric:
		return dt != tensor.Bool && !dt.IsComplex()
	case numericC:
		return dt != tensor.Bool
	case floatsC:
		return IsFloat(dt) || dt.IsComplex()
	case ordered:
		return !dt.IsComplex()
	case floats:
		return IsFloat(dt)
	case integers:
		return isSigned(dt) || isUnsigned(dt)
	case integersBool:
		return isSigned(dt) || isUnsigned(dt) || dt == tensor.Bool
	case boolOnly:
		return dt == tensor.Bool
	}
	return true
}

// binary builds the binary element-wise op name (ewDefs) over a and b.
func binary(o Owner, name string, a, b, out *tensor.Tensor) (*Op, error) {
	def := ewDefs[name]
	op, err := NewOp(o, name, a, b)
	if err != nil {
		return nil, err
	}
	dt, err := op.promoted("inputs", a.Dtype(), b.Dtype())
	if err != nil {
		return op.Fail(err)
	}
	e, helpers, err := ewExpr(op, name, def, dt)
	if err != nil {
		return op.Fail(err)
	}
	shape, err := BroadcastShapes(name, a.Shape(), b.Shape())
	if err != nil {
		return op.Fail(err)
	}
	outDt := ewOutDtype(name, def, dt)
	return op.elementwise(ewKernel{ins: []*tensor.Tensor{a, b}, outDt: outDt, as: []tensor.Dtype{dt, dt},
		shape: shape, expr: e, helpers: helpers}, out)
}

// fixed returns an expr function giving e for every dtype.
func fixed(e string) exprFunc {
	return func(*Op, tensor.Dtype) (string, string, error) { return e, "", nil }
}

// Add computes a + b element-wise with broadcasting. Dtypes: every
// numeric dtype (integers wrap).
func Add(o Owner, a, b, out *tensor.Tensor) (*Op, error) {
	return binary(o, "add", a, b, out)
}

// Sub computes a - b element-wise with broadcasting. Dtypes: every
// numeric dtype (integers wrap).
func Sub(o Owner, a, b, out *tensor.Tensor) (*Op, error) {
	return binary(o, "sub", a, b, out)
}

// Mul computes a * b element-wise with broadcasting. Dtypes: every
// numeric dtype (integers wrap).
func Mul(o Owner, a, b, out *tensor.Tensor) (*Op, error) {
	return binary(o, "mul", a, b, out)
}

// Div computes a / b element-wise with broadcasting (true division, IEEE:
// x/0 is ±Inf or NaN). Dtypes: floats only; Cast integers to a float
// dtype first.
func Div(o Owner, a, b, out *tensor.Tensor) (*Op, error) {
	return binary(o, "div", a, b, out)
}

// Minimum computes the element-wise minimum with broadcasting; a NaN in
// either input gives NaN, as NumPy's minimum. Dtypes: every numeric dtype.
func Minimum(o Owner, a, b, out *tensor.Tensor) (*Op, error) {
	return binary(o, "minimum", a, b, out)
}

// Maximum computes the element-wise maximum with broadcasting; a NaN in
// either input gives NaN, as NumPy's maximum. Dtypes: every numeric dtype.
func Maximum(o Owner, a, b, out *tensor.Tensor) (*Op, error) {
	return binary(o, "maximum", a, b, out)
}

func minMax(f string) exprFunc {
	return func(_ *Op, dt tensor.Dtype) (string, string, error) {
		if IsFloat(dt) {
			// GLSL's min and max may return either operand for a NaN.
			return fmt.Sprintf("(isnan(a0) || isnan(a1)) ? (a0 + a1) : %s(a0, a1)", f), "", nil
		}
		return fmt.Sprintf("%s(a0, a1)", f), "", nil
	}
}

// Pow computes a ** b element-wise with broadcasting. Dtypes: every
// numeric dtype.
//
// Floats follow C's pow: pow(x, ±0) = 1 and pow(1, y) = 1 even for NaN;
// a negative base with an integral exponent gives the signed result, with
// a non-integral one NaN; pow(±0, y) is Inf for y < 0 and 0 for y > 0,
// negative for -0 and an odd integral y; pow(±Inf, y) likewise. Other
// results are exp(y*log|x|): for float16 and float32 computed in double
// (within 1 ULP of float32), or, on a device without shaderFloat64, the
// driver's exp2(y*log2|x|) in float32, whose error grows with
// |y*log2|x||; for float64 with log|x| and the product in double-double
// arithmetic (within 1 ULP; see powF64).
//
// Integers multiply by repeated squaring (at most 64 steps) and wrap as
// NumPy does. NumPy refuses a negative integer exponent; here it gives
// what the real result truncates to: 1 for a base of 1, ±1 for a base of
// -1 (by the exponent's parity), and 0 for every other base (0 included).
func Pow(o Owner, a, b, out *tensor.Tensor) (*Op, error) {
	return binary(o, "pow", a, b, out)
}

// powExpr is Pow's expression for dt.
func powExpr(op *Op, dt tensor.Dtype) (string, string, error) {
	if dt == tensor.Float64 {
		return "powD(a0, a1)", PowF64, nil
	}
	ct := ComputeType(dt)
	if IsFloat(dt) {
		if op.dev.Features.ShaderFloat64 {
			return "powC(a0, a1)", PowF32, nil
		}
		return "powC(a0, a1)", PowF32Lite, nil
	}
	neg := ""
	if isSigned(dt) {
		neg = fmt.Sprintf(`	if (e < %[1]s(0)) {
		if (b == %[1]s(1)) return %[1]s(1);
		if (b == %[1]s(-1)) return (e & %[1]s(1)) != %[1]s(0) ? %[1]s(-1) : %[1]s(1);
		return %[1]s(0);
	}
`, ct)
	}
	return "ipow(a0, a1)", Guard("IPOW_"+ct, fmt.Sprintf(`%[1]s ipow(%[1]s b, %[1]s e) {
%[2]s	%[1]s r = %[1]s(1);
	for (int k = 0; k < 64 && e != %[1]s(0); k++) {
	if ((e & %[1]s(1)) != %[1]s(0)) r *= b;
	b *= b;
	e >>= 1;
	}
	return r;
}
`, ct, neg)), nil
}

// Comparisons give a bool tensor (1 where true). Every dtype, bool
// included; a comparison with NaN is false, except NotEqual, which is
// true.

// Equal computes a == b element-wise with broadcasting, as bool.
func Equal(o Owner, a, b, out *tensor.Tensor) (*Op, error) {
	return binary(o, "equal", a, b, out)
}

// NotEqual computes a != b element-wise with broadcasting, as bool; true
// where either is NaN.
func NotEqual(o Owner, a, b, out *tensor.Tensor) (*Op, error) {
	return binary(o, "not_equal", a, b, out)
}

// Less computes a < b element-wise with broadcasting, as bool.
func Less(o Owner, a, b, out *tensor.Tensor) (*Op, error) {
	return binary(o, "less", a, b, out)
}

// LessEqual computes a <= b element-wise with broadcasting, as bool.
func LessEqual(o Owner, a, b, out *tensor.Tensor) (*Op, error) {
	return binary(o, "less_equal", a, b, out)
}

// Greater computes a > b element-wise with broadcasting, as bool.
func Greater(o Owner, a, b, out *tensor.Tensor) (*Op, error) {
	return binary(o, "greater", a, b, out)
}

// GreaterEqual computes a >= b element-wise with broadcasting, as bool.
func GreaterEqual(o Owner, a, b, out *tensor.Tensor) (*Op, error) {
	return binary(o, "greater_equal", a, b, out)
}

// compareExpr is a comparison's expression; not negates cond (NotEqual is
// !(a == b), which is true for NaN, where an ordered != would be false).
func compareExpr(cond string, not bool) exprFunc {
	if not {
		cond = "!(" + cond + ")"
	}
	return fixed("(" + cond + ") ? 1u : 0u")
}

// Where computes cond ? a : b element-wise, with cond, a and b broadcast
// together. cond must be bool; a and b have any dtype, promoted as for
// the binary ops (ResultType), which is the output's.
func Where(o Owner, cond, a, b, out *tensor.Tensor) (*Op, error) {
	op, err := NewOp(o, "where", cond, a, b)
	if err != nil {
		return nil, err
	}
	if cond.Dtype() != tensor.Bool {
		return op.Fail(op.Errorf("cond is %v, want bool (compute it with a comparison, or Cast it to bool)", cond.Dtype()))
	}
	dt, err := op.promoted("a and b", a.Dtype(), b.Dtype())
	if err != nil {
		return op.Fail(err)
	}
	shape, err := BroadcastShapes("where", cond.Shape(), a.Shape(), b.Shape())
	if err != nil {
		return op.Fail(err)
	}
	return op.elementwise(ewKernel{ins: []*tensor.Tensor{cond, a, b}, outDt: dt, as: []tensor.Dtype{tensor.Bool, dt, dt},
		shape: shape, expr: "a0 != 0u ? a1 : a2"}, out)
}
