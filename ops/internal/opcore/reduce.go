package opcore

import (
	"slices"

	"github.com/vkflow/vkflow/tensor"
	"github.com/vkflow/vkflow/vk"
)

func init() {
	for name, f := range map[string]func(Owner, *tensor.Tensor, []int, bool, *tensor.Tensor) (*Op, error){
		"sum": Sum, "mean": Mean, "max": Max, "min": Min, "prod": Prod,
	} {
		Builtin(name, reduceBuilder(name, f))
	}
	Builtin("argmax", func(o Owner, in, out []*tensor.Tensor, at Attrs) (*Op, error) {
		if err := Inputs("argmax", in, 1); err != nil {
			return nil, err
		}
		if err := TooMany("argmax", out, 1); err != nil {
			return nil, err
		}
		axis, err := optionalAxis("argmax", at.Axes)
		if err != nil {
			return nil, err
		}
		return Argmax(o, in[0], axis, at.KeepDims, OutAt(out, 0))
	})
}

func reduceBuilder(name string, f func(Owner, *tensor.Tensor, []int, bool, *tensor.Tensor) (*Op, error)) Builder {
	return func(o Owner, in, out []*tensor.Tensor, at Attrs) (*Op, error) {
		if err := Inputs(name, in, 1); err != nil {
			return nil, err
		}
		if err := TooMany(name, out, 1); err != nil {
			return nil, err
		}
		return f(o, in[0], at.Axes, at.KeepDims, OutAt(out, 0))
	}
}

// Sum adds x's elements along axes ("sum"); out nil allocates the
// result. What follows holds for every reduction (Sum, Mean, Prod, Max,
// Min, Argmax).
//
// Axes: nil reduces every axis; negative axes count from the end; an
// empty, non-nil list reduces none (each output is one element, as NumPy's
// axis=()). keepDims keeps the reduced axes as dimensions of size 1.
//
// Result dtypes, as the array API gives them:
//
//	op        input                         result
//	sum, prod float16, float32, float64     the same (float16 accumulates in float32, rounded once at the end)
//	          int8..int64, bool             int64 (wraps as int64 does)
//	          uint8..uint64                 uint64
//	          complex64, complex128         the same (prod multiplies as complex numbers)
//	mean      float16, float32, float64     the same; integers are an error: cast first
//	          complex64, complex128         the same
//	max, min  every real dtype              the same (bool: logical or / and); complex is an error
//	argmax    every real dtype              int64; complex is an error
//
// Empty reductions: a sum is 0, a prod 1, a mean NaN; max, min and argmax
// of an empty segment are ErrInvalid (NumPy raises). NaN propagates
// through max and min; argmax takes NaN as the maximum and gives the
// first index among equals (NumPy's first occurrence).
//
// Any size is right: the op is a few passes, each reducing every output's
// segment by up to 16384 (see reduce_glsl.go), recorded as one dispatch
// per pass; the sequence or graph puts the barriers between them.
// Workgroups combine their lanes with subgroup arithmetic where the
// device has it, else in shared memory. A float sum rounds each element's
// contribution at most 25 times per pass, so its error is at most
// 25 * passes * eps * sum(|x|) (2 passes up to 268M elements).
func Sum(o Owner, x *tensor.Tensor, axes []int, keepDims bool, out *tensor.Tensor) (*Op, error) {
	return reduce(o, "sum", KindSum, ReducePlain, x, axes, keepDims, out)
}

// Mean averages x's elements along axes ("mean"); floating-point dtypes
// only. Axes, dtypes and sizes as for Sum.
func Mean(o Owner, x *tensor.Tensor, axes []int, keepDims bool, out *tensor.Tensor) (*Op, error) {
	return reduce(o, "mean", KindSum, reduceMean, x, axes, keepDims, out)
}

// Prod multiplies x's elements along axes ("prod"). Axes, dtypes and
// sizes as for Sum.
func Prod(o Owner, x *tensor.Tensor, axes []int, keepDims bool, out *tensor.Tensor) (*Op, error) {
	return reduce(o, "prod", kindProd, ReducePlain, x, axes, keepDims, out)
}

// Max takes the largest of x's elements along axes ("max"); NaN wins.
// Axes, dtypes and sizes as for Sum.
func Max(o Owner, x *tensor.Tensor, axes []int, keepDims bool, out *tensor.Tensor) (*Op, error) {
	return reduce(o, "max", KindMax, ReducePlain, x, axes, keepDims, out)
}

// Min takes the smallest of x's elements along axes ("min"); NaN wins.
// Axes, dtypes and sizes as for Sum.
func Min(o Owner, x *tensor.Tensor, axes []int, keepDims bool, out *tensor.Tensor) (*Op, error) {
	return reduce(o, "min", KindMin, ReducePlain, x, axes, keepDims, out)
}

// Argmax gives the int64 index of the largest element along axis, or of
// the flattened array when axis is nil ("argmax"; Attrs.Axes of zero or
// one entry). Ties give the first index; NaN counts as the largest.
func Argmax(o Owner, x *tensor.Tensor, axis *int, keepDims bool, out *tensor.Tensor) (*Op, error) {
	var axes []int
	if axis != nil {
		axes = []int{*axis}
	}
	return reduce(o, "argmax", kindArgmax, ReducePlain, x, axes, keepDims, out)
}

// reduceHooks break the pass structure, for the tests that show the suite
// notices. Tests set them; nothing else does.
var reduceHooks struct {
	sharedOnly bool // the shared-memory tree even where subgroup arithmetic exists
	skipLast   bool // drop the last pass: the output is never written
	onePass    bool // end after the first pass, which then reduces only each segment's first chunk
	scalar     bool // load elements one by one even where 4-vectors would do
	noColumns  bool // no column mode for strided reads
}

// reduceMode is what a reduction computes beyond its kind.
type reduceMode int

const (
	ReducePlain reduceMode = iota
	reduceMean             // the sum, divided by the count
	reduceTruth            // all/any: over x != 0 as 0 or 1, a bool result (passSpec.truth)
)

func reduce(o Owner, name string, kind ReduceKind, mode reduceMode, x *tensor.Tensor, axes []int, keepDims bool, out *tensor.Tensor) (*Op, error) {
	op, err := NewOp(o, name, x)
	if err != nil {
		return nil, err
	}
	shape := x.Shape()
	ax, err := NormAxes(name, axes, len(shape))
	if err != nil {
		return op.Fail(err)
	}
	dt := x.Dtype()
	outDt, acc, err := op.ReduceDtypes(kind, mode, dt)
	if err != nil {
		return op.Fail(err)
	}
	if err := op.RequireDtypes(dt, acc, outDt); err != nil {
		return op.Fail(err)
	}
	lay, err := op.ReduceLayout(shape, ax)
	if err != nil {
		return op.Fail(err)
	}
	if lay.M > 0 && lay.N == 0 && kind != KindSum && kind != kindProd && mode != reduceTruth {
		return op.Fail(op.Errorf("reduction over an empty axis of shape %v: %s has no identity", shape, name))
	}
	y, err := op.OutputNoAlias(out, outDt, ReducedShape(shape, ax, keepDims))
	if err != nil {
		return op.Fail(err)
	}
	spec := PassSpec{Kind: kind, In: dt, Acc: acc, Out: outDt, mean: mode == reduceMean, truth: mode == reduceTruth}
	return op.Done(op.ReducePasses(spec, x, nil, lay, y))
}

// ReduceDtypes returns the result and accumulator dtypes of kind over dt.
func (op *Op) ReduceDtypes(kind ReduceKind, mode reduceMode, dt tensor.Dtype) (out, acc tensor.Dtype, err error) {
	switch {
	case mode == reduceTruth:
		// Partials are 0 or 1 (an empty segment's identity, 0xffffffff for
		// the minimum, becomes true in the last pass).
		return tensor.Bool, tensor.Uint32, nil
	case mode == reduceMean && !IsFloat(dt) && !dt.IsComplex():
		return 0, 0, op.Errorf("the mean of %v is not computed: cast to a float dtype first (Cast)", dt)
	case dt.IsComplex() && kind != KindSum && kind != kindProd:
		return 0, 0, op.Errorf("%v has no order: %s takes real dtypes only", dt, op.name)
	case kind == KindSum || kind == kindProd:
		switch {
		case IsFloat(dt), dt.IsComplex():
			return dt, ComputeDtype(dt), nil
		case isUnsigned(dt):
			return tensor.Uint64, tensor.Uint64, nil
		}
		return tensor.Int64, tensor.Int64, nil
	case kind == kindArgmax:
		return tensor.Int64, ComputeDtype(dt), nil
	}
	return dt, ComputeDtype(dt), nil
}

// ComputeDtype is computeType as a dtype: what partial results are stored
// as.
func ComputeDtype(dt tensor.Dtype) tensor.Dtype {
	switch dt {
	case tensor.Float16, tensor.Float32:
		return tensor.Float32
	case tensor.Int8, tensor.Int16, tensor.Int32:
		return tensor.Int32
	case tensor.Uint8, tensor.Uint16, tensor.Uint32, tensor.Bool:
		return tensor.Uint32
	}
	return dt
}

// ReducedShape is shape without axes, or with them as 1 (keepDims).
func ReducedShape(shape, axes []int, keepDims bool) []int {
	out := []int{}
	for i, d := range shape {
		switch {
		case !slices.Contains(axes, i):
			out = append(out, d)
		case keepDims:
			out = append(out, 1)
		}
	}
	return out
}

// RedLayout is how a first pass reads a row-major input: m outputs of n
// elements each. Contiguous: output o's elements are o*n .. o*n+n-1.
// Otherwise dims and strides (merged) list the kept dimensions (nk of
// them: output o, row-major) and then the reduced ones (element r of a
// segment, row-major).
type RedLayout struct {
	M, N    int
	Strided bool
	nk      int
	Dims    []int
	Strides []int
}

func (op *Op) ReduceLayout(shape, axes []int) (RedLayout, error) {
	st := Contiguous(shape)
	var ks, kst, rs, rst []int
	for i, d := range shape {
		if slices.Contains(axes, i) {
			rs, rst = append(rs, d), append(rst, st[i])
		} else {
			ks, kst = append(ks, d), append(kst, st[i])
		}
	}
	ks, kk := Merge(ks, kst)
	rs, rr := Merge(rs, rst)
	l := RedLayout{M: Numel(ks), N: Numel(rs)}
	if (len(rs) == 0 || (len(rs) == 1 && rr[0][0] == 1)) && (len(ks) == 0 || (len(ks) == 1 && kk[0][0] == l.N)) {
		return l, nil
	}
	if len(ks)+len(rs) > MaxRank {
		return l, op.Errorf("shape %v reduced over %v needs %d dimensions, more than %d", shape, axes, len(ks)+len(rs), MaxRank)
	}
	l.Strided, l.nk = true, len(ks)
	l.Dims = append(ks, rs...)
	l.Strides = append(kk[0], rr[0]...)
	return l, nil
}

// passShape returns how a pass reduces segments of n elements: chunks of
// items << lg elements, 1 << lg lanes each loading items elements. The
// fewest lanes that load a segment whole with itemsPerLane each, at most
// the workgroup; but a segment of over 1024 elements gets the whole
// workgroup (whose tree is the cheapest: subgroup arithmetic) and as few
// items per lane (a multiple of 4) as cover it.
func passShape(n int) (lg, items int) {
	for itemsPerLane<<lg < n && 1<<lg < reduceLocal {
		lg++
	}
	if 1<<lg < reduceLocal && n > 4*reduceLocal {
		per := (n + reduceLocal - 1) / reduceLocal
		return 8, (per + 3) / 4 * 4
	}
	return lg, itemsPerLane
}

// subgroupAble reports whether passes whose chunk is the whole workgroup
// reduce with subgroup arithmetic: where the device has it in compute
// shaders, for 32-bit and float64 accumulators (8-, 16- and 64-bit
// integers would need shaderSubgroupExtendedTypes), not for argmax.
func (op *Op) subgroupAble(kind ReduceKind, acc tensor.Dtype) bool {
	if kind == kindArgmax {
		return false
	}
	switch acc {
	case tensor.Float32, tensor.Float64, tensor.Int32, tensor.Uint32:
	default:
		return false
	}
	sg := op.dev.Info.Subgroup
	return sg.Size >= 4 && sg.Compute(vk.SubgroupBasic|vk.SubgroupArithmetic)
}

// ReducePasses adds the passes that reduce x (laid out as lay) into y: the
// first reads x as lay says and writes one partial per chunk into a
// scratch tensor; each later pass reads the last one's partials,
// contiguous, until one chunk covers each segment: that pass writes y.
// base gives the kind and dtypes; m is softmax's per-output maximum
// (base.expOf).
func (op *Op) ReducePasses(base PassSpec, x, m *tensor.Tensor, lay RedLayout, y *tensor.Tensor) error {
	if lay.M == 0 {
		return nil
	}
	n := lay.N
	srcs := []*tensor.Tensor{x}
	for pass := 0; ; pass++ {
		lg, items := passShape(n)
		s := base
		s.first = pass == 0
		s.strided = s.first && lay.Strided
		// Reading through strides where the outputs' innermost dimension
		// is contiguous (reducing leading axes): one lane per chunk of
		// itemsPerLane, neighbouring lanes on neighbouring outputs, so
		// their loads share cache lines.
		s.columns = s.strided && lay.nk > 0 && lay.Strides[lay.nk-1] == 1 && !reduceHooks.noColumns
		if s.columns {
			lg, items = 0, itemsPerLane
		}
		g := max(1, (n+items<<lg-1)/(items<<lg))
		s.expOf = s.first && base.expOf
		if !s.first {
			s.In = s.Acc
		}
		s.last = g == 1 || reduceHooks.onePass
		if s.last {
			g = 1
		}
		s.sgAble = op.subgroupAble(s.Kind, s.Acc)
		s.subgroup = s.sgAble && lg == 8 && !reduceHooks.sharedOnly
		s.vec4 = s.hasVec4() && !s.strided && !reduceHooks.scalar
		pairs := lay.M * g
		var dsts []*tensor.Tensor
		switch {
		case s.last && reduceHooks.skipLast:
			return nil
		case s.last:
			dsts = []*tensor.Tensor{y}
		default:
			t, err := op.Temp(s.Acc, []int{pairs})
			if err != nil {
				return err
			}
			dsts = []*tensor.Tensor{t}
			if s.Kind == kindArgmax {
				ti, err := op.Temp(tensor.Uint32, []int{pairs})
				if err != nil {
					return err
				}
				dsts = append(dsts, ti)
			}
		}
		ts := append(slices.Clone(srcs), dsts...)
		if s.expOf {
			ts = append(ts, m)
		}
		groups, err := op.Grid(uint64(pairs)<<lg, reduceLocal)
		if err != nil {
			return err
		}
		push := s.pushValues(uint32(n), uint32(pairs), uint32(g), uint32(lg), uint32(lay.N), uint32(items), lay.Dims, lay.Strides, lay.nk)
		if err := op.dispatchSpec(reduceSource(s), ts, groups, s.specs(), push...); err != nil {
			return err
		}
		if s.last {
			return nil
		}
		srcs, n = dsts, g
	}
}
