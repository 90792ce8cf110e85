package opcore

import (
	"fmt"

	"github.com/vkflow/vkflow/tensor"
)

// The array API's set functions, unique_all, unique_counts,
// unique_inverse and unique_values: dynamic ops (their outputs' length is
// the number of distinct values) built on the GPU from the stable radix
// sort (SortWithIndices), a flag at the first element of each run of
// equal sorted values, the compaction of those flags (Compact: the one
// count read back), and gathers and scatters by the run starts.
//
// Equality is the standard's: -0 and +0 are one value; every NaN is
// distinct from every other (each is its own value, with count 1), and
// NaNs come last. Values are in ascending order; indices are the first
// occurrence of each value in x (flattened, C order) as the stable sort
// leaves it; inverse_indices has x's shape; indices, inverse_indices and
// counts are int64. Every real dtype.

func init() {
	for name, want := range map[string][]int{
		"unique_all":     {uniqValues, uniqIndices, uniqInverse, uniqCounts},
		"unique_counts":  {uniqValues, uniqCounts},
		"unique_inverse": {uniqValues, uniqInverse},
		"unique_values":  {uniqValues},
	} {
		dynamic(name, func(s *Stream, in, out []*tensor.Tensor, _ Attrs) ([]*tensor.Tensor, error) {
			if err := Inputs(name, in, 1); err != nil {
				return nil, err
			}
			if err := TooMany(name, out, len(want)); err != nil {
				return nil, err
			}
			return s.unique(name, in[0], want, out)
		})
	}
}

// The outputs unique computes, in the standard's order.
const (
	uniqValues = iota
	uniqIndices
	uniqInverse
	uniqCounts
)

// Unique queues on s the set functions' four results of x: its distinct
// values, the index of each one's first occurrence, the inverse indices
// (x's shape: where each element of x is in values) and the counts (see
// above). The caller owns them. The number of distinct values is read
// back to the host (Unique waits for the work before it on s).
func Unique(s *Stream, x *tensor.Tensor) (values, indices, inverse, counts *tensor.Tensor, err error) {
	res, err := s.unique("unique_all", x, []int{uniqValues, uniqIndices, uniqInverse, uniqCounts}, nil)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	return res[0], res[1], res[2], res[3], nil
}

// unique queues the outputs want (uniq* constants, in order) of x's set
// function; out holds given outputs (nil entries: allocated).
func (s *Stream) unique(name string, x *tensor.Tensor, want []int, out []*tensor.Tensor) (res []*tensor.Tensor, err error) {
	if s == nil {
		return nil, fmt.Errorf("ops.%s: nil Stream", name)
	}
	if x == nil || x.Closed() {
		return nil, fmt.Errorf("ops.%s: input 0 is nil or closed", name)
	}
	if x.Dtype().IsComplex() {
		return nil, errorf(name, "complex values have no order to sort them by (%v)", x.Dtype())
	}
	var temps []*tensor.Tensor
	defer func() {
		for _, t := range temps {
			_ = t.Close() // freed once the queued work is done with them
		}
		if err != nil {
			for i, t := range res {
				if OutAt(out, i) == nil && t != nil {
					_ = t.Close()
				}
			}
			res = nil
		}
	}()
	step := func(role string, b Builder, in, given []*tensor.Tensor, at Attrs) ([]*tensor.Tensor, error) {
		return s.call(name+"/"+role, b, in, given, at)
	}
	n := x.Len()
	// The flattened x (a copy when x is not 1-d), sorted with its indices.
	flat := x
	if len(x.Shape()) != 1 {
		r, err := step("flatten", func(o Owner, in, out []*tensor.Tensor, at Attrs) (*Op, error) {
			return StridedCopy(o, in[0], nil, at)
		}, []*tensor.Tensor{x}, nil, Attrs{Shape: []int{n}})
		if err != nil {
			return nil, err
		}
		flat = r[0]
		temps = append(temps, flat)
	}
	sorted, err := step("sort", func(o Owner, in, _ []*tensor.Tensor, _ Attrs) (*Op, error) {
		return SortWithIndices(o, in[0], 0, false, nil, nil)
	}, []*tensor.Tensor{flat}, nil, Attrs{})
	if err != nil {
		return nil, err
	}
	temps = append(temps, sorted...)
	vals, perm := sorted[0], sorted[1]
	// Run starts: flags, compacted.
	flags, err := step("flags", uniqueFlagsBuilder(name), []*tensor.Tensor{vals}, nil, Attrs{})
	if err != nil {
		return nil, err
	}
	temps = append(temps, flags[0])
	starts, err := s.compact(name, flags[0], nil, true)
	if err != nil {
		return nil, err
	}
	temps = append(temps, starts)
	zero := 0
	for i, w := range want {
		var r []*tensor.Tensor
		given := []*tensor.Tensor{OutAt(out, i)}
		switch w {
		case uniqValues, uniqIndices:
			src := vals
			if w == uniqIndices {
				src = perm
			}
			r, err = step("take", func(o Owner, in, out []*tensor.Tensor, _ Attrs) (*Op, error) {
				return Take(o, in[0], in[1], &zero, OutAt(out, 0))
			}, []*tensor.Tensor{src, starts}, given, Attrs{})
		case uniqCounts:
			r, err = step("counts", uniqueCountsBuilder(name), []*tensor.Tensor{starts}, given, Attrs{Shape: []int{n}})
		case uniqInverse:
			// Each sorted element's run: the running count of run starts,
			// less one; scattered to where the element was in x.
			var runs []*tensor.Tensor
			runs, err = step("runs", func(o Owner, in, _ []*tensor.Tensor, _ Attrs) (*Op, error) {
				return CumulativeSum(o, in[0], &zero, tensor.Int64, false, nil)
			}, []*tensor.Tensor{flags[0]}, nil, Attrs{})
			if err != nil {
				break
			}
			temps = append(temps, runs[0])
			r, err = step("inverse", uniqueInverseBuilder(name), []*tensor.Tensor{runs[0], perm}, given, Attrs{Shape: x.Shape()})
		}
		if err != nil {
			return res, err
		}
		res = append(res, r[0])
	}
	return res, nil
}

// uniqueFlagsBuilder: bool [n], true at i = 0 and wherever sorted[i] is
// not equal to sorted[i-1] (a NaN equals nothing, -0 equals +0).
func uniqueFlagsBuilder(name string) Builder {
	return func(o Owner, in, _ []*tensor.Tensor, _ Attrs) (*Op, error) {
		v := in[0]
		op, err := NewOp(o, name, v)
		if err != nil {
			return nil, err
		}
		if err := op.RequireDtypes(v.Dtype(), tensor.Bool); err != nil {
			return op.Fail(err)
		}
		n := v.Len()
		f, err := op.Output(nil, tensor.Bool, []int{n})
		if err != nil {
			return op.Fail(err)
		}
		if n == 0 {
			return op, nil
		}
		groups, err := op.Grid(uint64(n), LocalSize)
		if err != nil {
			return op.Fail(err)
		}
		return op.Done(op.Dispatch(uniqueFlagsSource(v.Dtype()), []*tensor.Tensor{v, f}, groups, uint32(n)))
	}
}

func uniqueFlagsSource(dt tensor.Dtype) string {
	ct := ComputeType(dt)
	return Header(dt, tensor.Bool) + fmt.Sprintf(`layout(local_size_x = %d) in;
layout(binding = 0) readonly buffer B0 { %s v[]; };
layout(binding = 1) writeonly buffer B1 { %s f[]; };
layout(push_constant) uniform P { uint n; };
%s
void main() {
	uint i = gid();
	if (i >= n) return;
	bool first = i == 0u || !(%s(v[i]) == %s(v[i - 1u]));
	f[i] = %s(first);
}
`, LocalSize, GLSLType(dt), GLSLType(tensor.Bool), IndexGLSL, ct, ct, GLSLType(tensor.Bool))
}

// uniqueCountsBuilder: int64 [count], starts[k+1] - starts[k] (n for the
// last one's end; Attrs.Shape is [n]).
func uniqueCountsBuilder(name string) Builder {
	return func(o Owner, in, out []*tensor.Tensor, at Attrs) (*Op, error) {
		st := in[0]
		op, err := NewOp(o, name, st)
		if err != nil {
			return nil, err
		}
		if err := op.RequireDtypes(tensor.Int64); err != nil {
			return op.Fail(err)
		}
		k := st.Len()
		c, err := op.OutputNoAlias(OutAt(out, 0), tensor.Int64, []int{k})
		if err != nil {
			return op.Fail(err)
		}
		if k == 0 {
			return op, nil
		}
		groups, err := op.Grid(uint64(k), LocalSize)
		if err != nil {
			return op.Fail(err)
		}
		return op.Done(op.Dispatch(uniqueCountsSource, []*tensor.Tensor{st, c}, groups, uint32(k), uint32(at.Shape[0])))
	}
}

var uniqueCountsSource = Header(tensor.Int64) + fmt.Sprintf(`layout(local_size_x = %d) in;
layout(binding = 0) readonly buffer B0 { int64_t st[]; };
layout(binding = 1) writeonly buffer B1 { int64_t c[]; };
layout(push_constant) uniform P { uint k; uint n; };
%s
void main() {
	uint i = gid();
	if (i >= k) return;
	int64_t end = i + 1u < k ? st[i + 1u] : int64_t(n);
	c[i] = end - st[i];
}
`, LocalSize, IndexGLSL)

// uniqueInverseBuilder: int64 of Attrs.Shape (x's), inv[perm[i]] =
// runs[i] - 1.
func uniqueInverseBuilder(name string) Builder {
	return func(o Owner, in, out []*tensor.Tensor, at Attrs) (*Op, error) {
		runs, perm := in[0], in[1]
		op, err := NewOp(o, name, runs, perm)
		if err != nil {
			return nil, err
		}
		if err := op.RequireDtypes(tensor.Int64); err != nil {
			return op.Fail(err)
		}
		inv, err := op.OutputNoAlias(OutAt(out, 0), tensor.Int64, at.Shape)
		if err != nil {
			return op.Fail(err)
		}
		n := runs.Len()
		if n == 0 {
			return op, nil
		}
		groups, err := op.Grid(uint64(n), LocalSize)
		if err != nil {
			return op.Fail(err)
		}
		return op.Done(op.Dispatch(uniqueInverseSource, []*tensor.Tensor{runs, perm, inv}, groups, uint32(n)))
	}
}

var uniqueInverseSource = Header(tensor.Int64) + fmt.Sprintf(`layout(local_size_x = %d) in;
layout(binding = 0) readonly buffer B0 { int64_t runs[]; };
layout(binding = 1) readonly buffer B1 { int64_t perm[]; };
layout(binding = 2) writeonly buffer B2 { int64_t inv[]; };
layout(push_constant) uniform P { uint n; };
%s
void main() {
	uint i = gid();
	if (i >= n) return;
	inv[uint(perm[i])] = runs[i] - 1;
}
`, LocalSize, IndexGLSL)
