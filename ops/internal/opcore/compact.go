package opcore

import (
	"fmt"
	"strings"

	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/tensor"
)

// Compaction: the positions of the nonzero elements of a tensor, in C
// order, found on the GPU in three steps: flags (x != 0) scanned with the
// multi-pass scan (scan.go) into each element's rank among the nonzero
// ones, the count read back to the host to size the output, and a scatter
// of each nonzero element's coordinates to its rank. Nonzero and Compact
// are the building blocks for data-dependent ops (boolean-mask indexing,
// unique_*).

func init() {
	dynamic("nonzero", func(s *Stream, in, out []*tensor.Tensor, at Attrs) ([]*tensor.Tensor, error) {
		if err := Inputs("nonzero", in, 1); err != nil {
			return nil, err
		}
		if err := TooMany("nonzero", out, 1); err != nil {
			return nil, err
		}
		y, err := s.compact("nonzero", in[0], OutAt(out, 0), false)
		if err != nil {
			return nil, err
		}
		return []*tensor.Tensor{y}, nil
	})
}

// Nonzero queues on s the indices of x's nonzero elements ("nonzero"): an
// int64 tensor [ndim, count], row d holding the coordinates along axis d
// of the count nonzero elements, in C (row-major) order. Nonzero means x
// != 0: true for bool, NaN counts, -0.0 does not. Every dtype; x must have
// at least one dimension. The count is read back to the host (Nonzero
// waits for the work before it on s); the flags, the scan and the scatter
// run on the GPU. The caller owns the result.
func Nonzero(s *Stream, x *tensor.Tensor) (*tensor.Tensor, error) {
	return s.compact("nonzero", x, nil, false)
}

// Compact queues on s the flat (C-order) indices of the nonzero elements
// of flags, of any shape and dtype, as an int64 tensor [count]: the
// stream compaction under nonzero, for ops that gather by a predicate (a
// mask, the first element of each run of a sorted array). Otherwise as
// Nonzero.
func Compact(s *Stream, flags *tensor.Tensor) (*tensor.Tensor, error) {
	return s.compact("compact", flags, nil, true)
}

// compact runs the compaction of x on s into out (nil: allocated): flat
// indices [count], or coordinates [ndim, count].
func (s *Stream) compact(name string, x, out *tensor.Tensor, flat bool) (*tensor.Tensor, error) {
	if s == nil {
		return nil, core.Invalid("ops.%s: nil Stream", name)
	}
	if x == nil {
		return nil, core.Invalid("ops.%s: input 0 is nil", name)
	}
	if x.Closed() {
		return nil, core.Closed(fmt.Sprintf("ops.%s: input 0", name))
	}
	shape := x.Shape()
	if !flat && len(shape) == 0 {
		return nil, errorf(name, "x is 0-d: give it at least one dimension (the standard leaves 0-d undefined)")
	}
	if len(shape) > MaxRank {
		return nil, errorf(name, "x has %d dimensions, more than %d", len(shape), MaxRank)
	}
	if GLSLType(x.Dtype()) == "invalid" {
		return nil, errorf(name, "dtype %v is not supported", x.Dtype())
	}
	n := x.Len()
	outShape := func(count int) []int {
		if flat {
			return []int{count}
		}
		return []int{len(shape), count}
	}
	// Step 1: each element's inclusive rank (uint32 [n]) and the count.
	scanned, err := s.call(name+"/scan", compactScanBuilder(name), []*tensor.Tensor{x}, nil, Attrs{})
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, t := range scanned {
			_ = t.Close() // freed once the queued work is done with them
		}
	}()
	count := 0
	if n > 0 {
		if count, err = s.readCount(scanned[1]); err != nil {
			return nil, fmt.Errorf("ops.%s: %w", name, err)
		}
	}
	// Step 2: scatter the coordinates (nothing to do when count is 0).
	coords := shape
	if flat {
		coords = []int{n}
	}
	res, err := s.call(name+"/scatter", compactScatterBuilder(name, coords),
		[]*tensor.Tensor{x, scanned[0]}, []*tensor.Tensor{out}, Attrs{Shape: outShape(count)})
	if err != nil {
		return nil, err
	}
	return res[0], nil
}

// errorf is an ErrInvalid error of op name.
func errorf(name, format string, args ...any) error {
	return (&Op{name: name}).Errorf(format, args...)
}

// compactScanBuilder prepares step 1: outputs the inclusive scan of the
// flags (uint32 [n]) and the count (uint32 [1]).
func compactScanBuilder(name string) Builder {
	return func(o Owner, in, out []*tensor.Tensor, _ Attrs) (*Op, error) {
		x := in[0]
		op, err := NewOp(o, name, x)
		if err != nil {
			return nil, err
		}
		if err := op.RequireDtypes(x.Dtype(), tensor.Uint32); err != nil {
			return op.Fail(err)
		}
		n := x.Len()
		s, err := op.Output(nil, tensor.Uint32, []int{n})
		if err != nil {
			return op.Fail(err)
		}
		cnt, err := op.Output(nil, tensor.Uint32, []int{1})
		if err != nil {
			return op.Fail(err)
		}
		if n == 0 {
			return op, nil
		}
		levels, err := op.scanLevels(scanSpec{kind: scanSum, in: x.Dtype(), acc: tensor.Uint32, flags: true}, x, s, 1, n, 1)
		if err != nil {
			return op.Fail(err)
		}
		if err := op.scanAddBack(scanSum, tensor.Uint32, levels, 0, cnt); err != nil {
			return op.Fail(err)
		}
		if len(levels) == 1 { // no add-back pass wrote the count
			return op.Done(op.Dispatch(countSource, []*tensor.Tensor{s, cnt}, [3]uint32{1, 1, 1}, uint32(n)))
		}
		return op.Done(nil)
	}
}

// countSource copies the last element of the scan to the count.
const countSource = `#version 450
layout(local_size_x = 1) in;
layout(binding = 0) readonly buffer B0 { uint s[]; };
layout(binding = 1) writeonly buffer B1 { uint cnt[]; };
layout(push_constant) uniform P { uint n; };
void main() { cnt[0] = s[n - 1]; }
`

// compactScatterBuilder prepares step 2: the output (Attrs.Shape: [count]
// or [ndim, count]) from x and the scan; coords is the shape x's flat
// index is unravelled by.
func compactScatterBuilder(name string, coords []int) Builder {
	return func(o Owner, in, out []*tensor.Tensor, at Attrs) (*Op, error) {
		x, s := in[0], in[1]
		op, err := NewOp(o, name, x, s)
		if err != nil {
			return nil, err
		}
		y, err := op.OutputNoAlias(OutAt(out, 0), tensor.Int64, at.Shape)
		if err != nil {
			return op.Fail(err)
		}
		if err := op.RequireDtypes(x.Dtype(), tensor.Int64); err != nil {
			return op.Fail(err)
		}
		count := at.Shape[len(at.Shape)-1]
		if count == 0 {
			return op, nil
		}
		n := x.Len()
		push := padPush[uint32]([]any{uint32(n), uint32(count), uint32(len(coords))}, coords)
		groups, err := op.Grid(uint64(n), LocalSize)
		if err != nil {
			return op.Fail(err)
		}
		return op.Done(op.Dispatch(compactScatterSource(x.Dtype()), []*tensor.Tensor{x, s, y}, groups, push...))
	}
}

// compactScatterSource writes each nonzero element's coordinates to
// column s[e] - 1 of y ([ndim, count]).
func compactScatterSource(dt tensor.Dtype) string {
	var b strings.Builder
	b.WriteString(Header(dt, tensor.Int64))
	t := GLSLType(dt)
	fmt.Fprintf(&b, `layout(local_size_x = %d) in;
layout(binding = 0) readonly buffer B0 { %s x[]; };
layout(binding = 1) readonly buffer B1 { uint s[]; };
layout(binding = 2) writeonly buffer B2 { int64_t y[]; };
layout(push_constant) uniform P { uint n; uint count; uint ndim; uint shape[%d]; };
%s
void main() {
	uint e = gid();
	if (e >= n || !(x[e] != %s(0))) return;
	uint p = s[e] - 1;
	uint r = e;
	for (int d = int(ndim) - 1; d >= 0; d--) {
		uint size = shape[d];
		y[uint(d) * count + p] = int64_t(r %% size);
		r /= size;
	}
}
`, LocalSize, t, MaxRank, IndexGLSL, t)
	return b.String()
}
