package opcore

import (
	"fmt"
	"math"
	"regexp"
	"strings"

	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/tensor"
)

// Expr is an element-wise expression over tensors, which Fuse compiles
// into one kernel: one dispatch that reads each input once and writes the
// result once, instead of one dispatch and one intermediate tensor per op.
//
//	// y = sigmoid(a*w + b) in one pass
//	e := ops.Apply("sigmoid", ops.Apply("add", ops.Apply("mul", ops.Input(a), ops.Input(w)), ops.Input(b)))
//	op, err := ops.Fuse(mgr, e, nil)
//
// Every step follows the rules of the op of that name (dtypes,
// broadcasting, NaN), and rounds or wraps to its dtype as the unfused op
// would store it, so a fused expression computes exactly what the chain of
// ops does. Building an Expr checks nothing; Fuse reports what is wrong.
// An Expr may use a sub-expression several times; it is computed once.
type Expr struct{ n *exprNode }

type exprNode struct {
	op     string // "" for an input or a scalar, "cast", or an ewDefs name or "where"
	args   []*exprNode
	t      *tensor.Tensor
	scalar *float64
	dt     tensor.Dtype // cast's target
}

// Input is the expression reading tensor t.
func Input(t *tensor.Tensor) Expr { return Expr{&exprNode{t: t}} }

// Scalar is a constant. It takes the dtype of the other operands of the
// op it is given to (which must not all be scalars), and must be
// representable in it (as Clip's bounds).
func Scalar(v float64) Expr { return Expr{&exprNode{scalar: &v}} }

// Apply is the element-wise op called name (as registered: "add", "exp",
// "less", "where", ...) over args.
func Apply(name string, args ...Expr) Expr {
	n := &exprNode{op: name}
	for _, a := range args {
		n.args = append(n.args, a.n)
	}
	return Expr{n}
}

// AsType is e cast to dt, as Cast.
func AsType(e Expr, dt tensor.Dtype) Expr {
	return Expr{&exprNode{op: "cast", args: []*exprNode{e.n}, dt: dt}}
}

// Fuse prepares e as one element-wise kernel. Its inputs are the distinct
// tensors of e's Input leaves, in the order first met (depth first, left
// to right); the output has their broadcast shape and e's dtype (out nil
// allocates it). The Op is named "fuse". Each input and the output is a
// storage buffer of the kernel: the device's
// maxPerStageDescriptorStorageBuffers bounds the number of distinct inputs
// (pipeline creation fails past it).
func Fuse(o Owner, e Expr, out *tensor.Tensor) (*Op, error) {
	if _, err := core.From(o); err != nil {
		return nil, fmt.Errorf("ops.fuse: %w", err)
	}
	f := &fuser{done: map[*exprNode]fused{}, index: map[*tensor.Tensor]int{}}
	if err := f.collect(e.n, 0); err != nil {
		return nil, err
	}
	op, err := NewOp(o, "fuse", f.ins...)
	if err != nil {
		return nil, err
	}
	f.op = op
	r, err := f.visit(e.n, 0)
	if err != nil {
		return op.Fail(err)
	}
	shapes := make([][]int, len(f.ins))
	for i, t := range f.ins {
		shapes[i] = t.Shape()
	}
	shape, err := BroadcastShapes("fuse", shapes...)
	if err != nil {
		return op.Fail(err)
	}
	if err := op.RequireDtypes(f.dtypes...); err != nil {
		return op.Fail(err)
	}
	k := ewKernel{ins: f.ins, outDt: r.dt, shape: shape, expr: r.name, body: f.body.String(), helpers: f.helpers.String(), extra: f.dtypes}
	return op.elementwise(k, out)
}

// maxExprDepth bounds an expression's depth (and so the recursion).
const maxExprDepth = 256

type fused struct {
	name string // GLSL variable or literal
	dt   tensor.Dtype
}

type fuser struct {
	op      *Op
	ins     []*tensor.Tensor
	index   map[*tensor.Tensor]int
	done    map[*exprNode]fused
	body    strings.Builder
	helpers strings.Builder
	dtypes  []tensor.Dtype
	temps   int
}

// collect finds e's input tensors and checks its structure.
func (f *fuser) collect(e *exprNode, depth int) error {
	switch {
	case e == nil:
		return core.Invalid("ops.fuse: a nil Expr (the zero Expr)")
	case depth > maxExprDepth:
		return core.Invalid("ops.fuse: the expression is deeper than %d", maxExprDepth)
	case e.op == "" && e.scalar != nil:
		return nil
	case e.op == "":
		if e.t == nil {
			return core.Invalid("ops.fuse: Input of a nil tensor")
		}
		if _, ok := f.index[e.t]; !ok {
			f.index[e.t] = len(f.ins)
			f.ins = append(f.ins, e.t)
		}
		return nil
	}
	want := 0
	switch e.op {
	case "cast":
		want = 1
	case "where":
		want = 3
	default:
		def, ok := ewDefs[e.op]
		if !ok {
			return core.Invalid("ops.fuse: %q is not an element-wise op", e.op)
		}
		want = def.arity
	}
	if len(e.args) != want {
		return core.Invalid("ops.fuse: %s takes %d operands, got %d", e.op, want, len(e.args))
	}
	for _, a := range e.args {
		if err := f.collect(a, depth+1); err != nil {
			return err
		}
	}
	return nil
}

var operandRE = regexp.MustCompile(`\ba([0-9])\b`)

// visit emits e's steps and returns the variable holding its value.
// Scalars are resolved by their parent (scalarIn).
func (f *fuser) visit(e *exprNode, depth int) (fused, error) {
	if r, ok := f.done[e]; ok {
		return r, nil
	}
	if e.op == "" {
		if e.scalar != nil {
			return fused{}, f.op.Errorf("a Scalar needs an operand that is not a scalar, to take its dtype")
		}
		j := f.index[e.t]
		return fused{name: fmt.Sprintf("a%d", j), dt: e.t.Dtype()}, nil
	}
	// Operands: tensors and sub-expressions first, then scalars in their
	// dtype.
	args := make([]fused, len(e.args))
	var dt tensor.Dtype
	for i, a := range e.args {
		if a.op == "" && a.scalar != nil {
			continue
		}
		r, err := f.visit(a, depth+1)
		if err != nil {
			return fused{}, err
		}
		args[i] = r
		if e.op == "where" && i == 0 {
			continue
		}
		if dt == 0 {
			dt = r.dt
		}
	}
	for i, a := range e.args {
		if a.op != "" || a.scalar == nil {
			continue
		}
		sdt := dt
		if e.op == "where" && i == 0 {
			sdt = tensor.Bool
		}
		if sdt == 0 {
			return fused{}, f.op.Errorf("%s: a Scalar needs an operand that is not a scalar, to take its dtype", e.op)
		}
		lit, err := scalarGLSL(f.op, sdt, *a.scalar)
		if err != nil {
			return fused{}, fmt.Errorf("%w (a Scalar given to %s)", err, e.op)
		}
		args[i] = fused{name: lit, dt: sdt}
	}

	var expr, helpers string
	var err error
	outDt := args[0].dt
	switch e.op {
	case "cast":
		if !e.dt.Valid() {
			return fused{}, f.op.Errorf("cast: target dtype %v is not a dtype", e.dt)
		}
		if err := castRefused(f.op, args[0].dt, e.dt); err != nil {
			return fused{}, err
		}
		expr, outDt = castExpr(args[0].dt, e.dt), e.dt
	case "where":
		if args[0].dt != tensor.Bool {
			return fused{}, f.op.Errorf("where: cond is %v, want bool", args[0].dt)
		}
		if args[1].dt != args[2].dt {
			return fused{}, f.op.Errorf("where: a and b are %v and %v: both must have the same dtype (Cast one of them; there is no implicit conversion)", args[1].dt, args[2].dt)
		}
		expr, outDt = "a0 != 0u ? a1 : a2", args[1].dt
	default:
		def := ewDefs[e.op]
		if len(args) == 2 && args[0].dt != args[1].dt {
			return fused{}, f.op.Errorf("%s: operands are %v and %v: both must have the same dtype (Cast one of them; there is no implicit conversion)", e.op, args[0].dt, args[1].dt)
		}
		if expr, helpers, err = ewExpr(f.op, e.op, def, outDt); err != nil {
			return fused{}, fmt.Errorf("%w (in %s)", err, e.op)
		}
		outDt = ewOutDtype(e.op, def, outDt)
	}
	for _, a := range args {
		f.dtypes = append(f.dtypes, a.dt)
	}
	f.dtypes = append(f.dtypes, outDt)
	f.helpers.WriteString(helpers)
	expr = operandRE.ReplaceAllStringFunc(expr, func(s string) string {
		return "(" + args[s[1]-'0'].name + ")"
	})
	// Store as the unfused op would: round float16, wrap narrow integers.
	ct := ComputeType(outDt)
	if st := GLSLType(outDt); st != ct && outDt != tensor.Bool {
		expr = fmt.Sprintf("%s(%s(%s))", ct, st, expr)
	}
	name := fmt.Sprintf("t%d", f.temps)
	f.temps++
	fmt.Fprintf(&f.body, "\t%s %s = %s(%s);\n", ct, name, ct, expr)
	r := fused{name: name, dt: outDt}
	f.done[e] = r
	return r, nil
}

// scalarGLSL is v as a GLSL constant of dt's compute type, exactly.
func scalarGLSL(op *Op, dt tensor.Dtype, v float64) (string, error) {
	if dt == tensor.Bool {
		if v != 0 && v != 1 {
			return "", op.Errorf("scalar %v is not a bool (0 or 1)", v)
		}
		return fmt.Sprintf("%du", int(v)), nil
	}
	if dt.IsComplex() {
		// The real part; the imaginary part is 0.
		re, err := scalarGLSL(op, dt.Real(), v)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%s(%s, 0)", ComputeType(dt), re), nil
	}
	c, err := clipBound(op, dt, "scalar", v)
	if err != nil {
		return "", err
	}
	switch x := c.(type) {
	case float32:
		return fmt.Sprintf("uintBitsToFloat(0x%08xu)", math.Float32bits(x)), nil
	case float64:
		b := math.Float64bits(x)
		return fmt.Sprintf("packDouble2x32(uvec2(0x%08xu, 0x%08xu))", uint32(b), uint32(b>>32)), nil
	case int32:
		return fmt.Sprintf("int(0x%08xu)", uint32(x)), nil
	case uint32:
		return fmt.Sprintf("%du", x), nil
	case int64:
		return fmt.Sprintf("int64_t(0x%016xul)", uint64(x)), nil
	case uint64:
		return fmt.Sprintf("uint64_t(%dul)", x), nil
	}
	return "", op.Errorf("scalar of %v", dt)
}
