package opcore

import (
	"github.com/vkflow/vkflow/tensor"
)

func init() {
	for _, c := range []struct {
		name string
		kind scanKind
	}{{"cumulative_sum", scanSum}, {"cumulative_prod", scanProd}} {
		Builtin(c.name, func(o Owner, in, out []*tensor.Tensor, at Attrs) (*Op, error) {
			if err := Inputs(c.name, in, 1); err != nil {
				return nil, err
			}
			if err := TooMany(c.name, out, 1); err != nil {
				return nil, err
			}
			axis, err := optionalAxis(c.name, at.Axes)
			if err != nil {
				return nil, err
			}
			return scan(o, c.name, c.kind, in[0], axis, at.Dtype, at.IncludeInitial, OutAt(out, 0))
		})
	}
}

// CumulativeSum computes running sums of x along axis ("cumulative_sum";
// Attrs.Axes: one axis, or nil for a 1-d x; Attrs.Dtype; Attrs.IncludeInitial).
// Element k of the result along axis is x[0] + ... + x[k]; with
// includeInitial the result is one longer along axis and starts with 0.
//
// dtype is the result's dtype; zero is the array API standard's default:
// int64 for signed integers and bool, uint64 for unsigned integers, x's own
// for floats. x is converted to dtype element by element (as a cast) and
// summed in it (float16 in float32, rounded once per element; integers
// wrap modulo 2^bits). Every real dtype in, every numeric dtype out.
//
// It is a work-efficient scan of any length: per-workgroup scans of blocks
// of 2048 elements in shared memory, a scan of the blocks' totals (the same
// kernel, recursively), and passes adding them back: 2L dispatches for L
// levels (L = 1 up to 2048 elements along axis, 2 up to 4M). Floating-point
// sums are associated in a tree within each block, so they differ from a
// sequential loop's by rounding.
func CumulativeSum(o Owner, x *tensor.Tensor, axis *int, dtype tensor.Dtype, includeInitial bool, out *tensor.Tensor) (*Op, error) {
	return scan(o, "cumulative_sum", scanSum, x, axis, dtype, includeInitial, out)
}

// CumulativeProd computes running products of x along axis
// ("cumulative_prod"), with the initial value 1; otherwise as
// CumulativeSum.
func CumulativeProd(o Owner, x *tensor.Tensor, axis *int, dtype tensor.Dtype, includeInitial bool, out *tensor.Tensor) (*Op, error) {
	return scan(o, "cumulative_prod", scanProd, x, axis, dtype, includeInitial, out)
}

// scanDtype is the standard's default result dtype of a running sum or
// product of dt.
func scanDtype(dt tensor.Dtype) tensor.Dtype {
	switch {
	case isSigned(dt) || dt == tensor.Bool:
		return tensor.Int64
	case isUnsigned(dt):
		return tensor.Uint64
	}
	return dt
}

func scan(o Owner, name string, kind scanKind, x *tensor.Tensor, axis *int, dtype tensor.Dtype, inc bool, out *tensor.Tensor) (*Op, error) {
	op, err := NewOp(o, name, x)
	if err != nil {
		return nil, err
	}
	dt := x.Dtype()
	shape := x.Shape()
	if !IsFloat(dt) && !isSigned(dt) && !isUnsigned(dt) && dt != tensor.Bool {
		return op.Fail(op.Unsupported(dt, "bool, integers, float16, float32, float64"))
	}
	if dtype == 0 {
		dtype = scanDtype(dt)
	}
	if !IsFloat(dtype) && !isSigned(dtype) && !isUnsigned(dtype) {
		return op.Fail(op.Errorf("result dtype %v: want a numeric dtype", dtype))
	}
	if len(shape) == 0 {
		return op.Fail(op.Errorf("x is 0-d: a running %s needs at least one dimension", map[scanKind]string{scanSum: "sum", scanProd: "product"}[kind]))
	}
	ax := 0
	switch {
	case axis != nil:
		a, err := NormAxes(name, []int{*axis}, len(shape))
		if err != nil {
			return op.Fail(err)
		}
		ax = a[0]
	case len(shape) != 1:
		return op.Fail(op.Errorf("x has shape %v: give an axis (only a 1-d x may omit it)", shape))
	}
	acc := ComputeDtype(dtype)
	if err := op.RequireDtypes(dt, acc, dtype); err != nil {
		return op.Fail(err)
	}
	oshape := append([]int(nil), shape...)
	if inc {
		oshape[ax]++
	}
	y, err := op.OutputNoAlias(out, dtype, oshape)
	if err != nil {
		return op.Fail(err)
	}
	if y.Len() == 0 {
		return op, nil
	}
	n := shape[ax]
	inner := Numel(shape[ax+1:])
	outer := Numel(shape[:ax])
	total := y.Len()
	incN := 0
	if inc {
		incN = 1
	}
	groups, err := op.Grid(uint64(total), LocalSize)
	if err != nil {
		return op.Fail(err)
	}
	if n == 0 { // include_initial of an empty axis: the identity only
		return op.Done(op.Dispatch(scanOutSource(kind, acc, dtype, false, false), []*tensor.Tensor{y}, groups,
			uint32(n), uint32(inner), uint32(1), uint32(total), uint32(incN)))
	}
	levels, err := op.scanLevels(scanSpec{kind: kind, in: dt, acc: acc, out: dtype}, x, nil, outer*inner, n, inner)
	if err != nil {
		return op.Fail(err)
	}
	if err := op.scanAddBack(kind, acc, levels, 1, nil); err != nil {
		return op.Fail(err)
	}
	ts := []*tensor.Tensor{levels[0].s}
	nb := 1
	if len(levels) > 1 {
		ts = append(ts, levels[1].s)
		nb = levels[1].n
	}
	ts = append(ts, y)
	return op.Done(op.Dispatch(scanOutSource(kind, acc, dtype, true, len(levels) > 1), ts, groups,
		uint32(n), uint32(inner), uint32(nb), uint32(total), uint32(incN)))
}

// scanLevel is one level of a scan: s holds rows rows of n scanned
// elements (inclusive, within blocks).
type scanLevel struct {
	s *tensor.Tensor
	n int
}

// scanLevels dispatches the block scans of x, read as [rows/inner, n,
// inner], level by level until one block covers a row. levels[0] scans x
// (into first when given, else a scratch tensor); levels[i+1] scans the
// block totals of levels[i].
func (op *Op) scanLevels(sp scanSpec, x, first *tensor.Tensor, rows, n, inner int) ([]scanLevel, error) {
	var levels []scanLevel
	src := x
	for {
		nb := (n + scanBlock - 1) / scanBlock
		s := first
		if s == nil {
			var err error
			if s, err = op.Temp(sp.acc, []int{rows * n}); err != nil {
				return nil, err
			}
		}
		first = nil
		t, err := op.Temp(sp.acc, []int{rows * nb})
		if err != nil {
			return nil, err
		}
		blocks := rows * nb
		groups, err := op.Grid(uint64(blocks)*scanLocal, scanLocal)
		if err != nil {
			return nil, err
		}
		if err := op.Dispatch(scanBlockSource(sp), []*tensor.Tensor{src, s, t}, groups,
			uint32(n), uint32(inner), uint32(nb), uint32(blocks)); err != nil {
			return nil, err
		}
		levels = append(levels, scanLevel{s: s, n: n})
		if nb == 1 {
			return levels, nil
		}
		// The next level scans the totals, [rows, nb], contiguous.
		src, n, inner = t, nb, 1
		sp.in, sp.out, sp.flags = sp.acc, 0, false
	}
}

// scanAddBack adds each level's scanned totals into the level below, from
// the top down to level from (in place). cnt, when given, receives the
// last element of level from (rows must be 1).
func (op *Op) scanAddBack(kind scanKind, acc tensor.Dtype, levels []scanLevel, from int, cnt *tensor.Tensor) error {
	for i := len(levels) - 2; i >= from; i-- {
		lo, hi := levels[i], levels[i+1]
		total := lo.s.Len()
		groups, err := op.Grid(uint64(total), LocalSize)
		if err != nil {
			return err
		}
		ts := []*tensor.Tensor{lo.s, hi.s}
		withCount := cnt != nil && i == from
		if withCount {
			ts = append(ts, cnt)
		}
		if err := op.Dispatch(scanAddSource(kind, acc, withCount), ts, groups,
			uint32(lo.n), uint32(hi.n), uint32(total)); err != nil {
			return err
		}
	}
	return nil
}
