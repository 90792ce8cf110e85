package opcore

import (
	"fmt"
	"strings"

	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/tensor"
)

func init() {
	Builtin("searchsorted", func(o Owner, in, out []*tensor.Tensor, at Attrs) (*Op, error) {
		if len(in) != 2 && len(in) != 3 {
			return nil, core.Invalid("ops.searchsorted: %d inputs, want x1, x2 and optionally sorter", len(in))
		}
		if err := TooMany("searchsorted", out, 1); err != nil {
			return nil, err
		}
		var right bool
		switch at.Side {
		case "", "left":
		case "right":
			right = true
		default:
			return nil, core.Invalid("ops.searchsorted: side %q: use \"left\" or \"right\"", at.Side)
		}
		var sorter *tensor.Tensor
		if len(in) == 3 {
			sorter = in[2]
		}
		return SearchSorted(o, in[0], in[1], right, sorter, OutAt(out, 0))
	})
}

// SearchSorted finds, for each element v of x2, where it goes in the
// sorted 1-d x1 ("searchsorted"; inputs x1, x2 and optionally sorter;
// Attrs.Side "left", the default, or "right"): out (int64, x2's shape,
// allocated when nil) is the first i with v <= x1[i] (left) or v < x1[i]
// (right), len(x1) when there is none. x1 and x2 have the same dtype, any
// real one.
//
// sorter, when not nil, holds the indices (any integer dtype, x1's shape)
// that sort x1 ascending, as Argsort gives them; x1 is then read through
// them. Indices out of [0, len(x1)) are clamped into it (the result is
// then meaningless, but no memory outside x1 is read).
//
// The order is Sort's: -0 equals +0 and NaN is after +Inf, so a NaN goes
// before x1's first NaN (left) or at its end (right), and inserting each
// v at its index keeps x1 as Sort sorts it. Each element is one binary
// search of at most 33 steps.
func SearchSorted(o Owner, x1, x2 *tensor.Tensor, right bool, sorter, out *tensor.Tensor) (*Op, error) {
	ins := []*tensor.Tensor{x1, x2}
	if sorter != nil {
		ins = append(ins, sorter)
	}
	op, err := NewOp(o, "searchsorted", ins...)
	if err != nil {
		return nil, err
	}
	dt := x1.Dtype()
	if !IsFloat(dt) && !isSigned(dt) && !isUnsigned(dt) && dt != tensor.Bool {
		return op.Fail(op.Unsupported(dt, sortDtypes))
	}
	if x2.Dtype() != dt {
		return op.Fail(op.Errorf("x1 is %v and x2 is %v: cast them to one dtype first", dt, x2.Dtype()))
	}
	if len(x1.Shape()) != 1 {
		return op.Fail(op.Errorf("x1 has shape %v: it must be 1-d", x1.Shape()))
	}
	if sorter != nil {
		if sd := sorter.Dtype(); !isSigned(sd) && !isUnsigned(sd) {
			return op.Fail(op.Errorf("sorter is %v: it must have an integer dtype", sd))
		}
		if len(sorter.Shape()) != 1 || sorter.Len() != x1.Len() {
			return op.Fail(op.Errorf("sorter has shape %v: it must have x1's, %v", sorter.Shape(), x1.Shape()))
		}
	}
	if uint64(x1.Len()) >= 1<<32 || uint64(x2.Len()) >= 1<<32 {
		return op.Fail(op.Errorf("x1 and x2 take fewer than 2^32 elements"))
	}
	need := []tensor.Dtype{dt, tensor.Int64}
	if sorter != nil {
		need = append(need, sorter.Dtype())
	}
	if err := op.RequireDtypes(need...); err != nil {
		return op.Fail(err)
	}
	y, err := op.OutputNoAlias(out, tensor.Int64, x2.Shape())
	if err != nil {
		return op.Fail(err)
	}
	total := x2.Len()
	if total == 0 {
		return op, nil
	}
	var sdt tensor.Dtype
	ts := []*tensor.Tensor{x1, x2, y}
	if x1.Len() == 0 {
		ts = []*tensor.Tensor{y} // every index is 0
	} else if sorter != nil {
		sdt = sorter.Dtype()
		ts = []*tensor.Tensor{x1, x2, sorter, y}
	}
	groups, err := op.Grid(uint64(total), LocalSize)
	if err != nil {
		return op.Fail(err)
	}
	return op.Done(op.Dispatch(searchSortedSource(dt, sdt, x1.Len() == 0, right), ts, groups,
		uint32(total), uint32(x1.Len())))
}

// searchSortedSource is one binary search per element of x2 over x1's
// sort keys (ascending: sortKeyGLSL), read through sorter when sdt is not
// 0. empty: x1 is empty, every result is 0.
func searchSortedSource(dt, sdt tensor.Dtype, empty, right bool) string {
	var b strings.Builder
	dts := []tensor.Dtype{dt, tensor.Int64}
	if dt == tensor.Float16 {
		dts = append(dts, tensor.Uint16)
	}
	if sdt != 0 {
		dts = append(dts, sdt)
	}
	b.WriteString(Header(dts...))
	fmt.Fprintf(&b, "layout(local_size_x = %d) in;\n", LocalSize)
	if empty {
		b.WriteString(`layout(binding = 0) writeonly buffer B0 { int64_t y[]; };
layout(push_constant) uniform P { uint total; uint m; };
`)
		b.WriteString(IndexGLSL)
		b.WriteString("void main() {\n\tuint e = gid();\n\tif (e < total) y[e] = 0l;\n}\n")
		return b.String()
	}
	t := GLSLType(dt)
	fmt.Fprintf(&b, `layout(binding = 0) readonly buffer B0 { %[1]s x1[]; };
layout(binding = 1) readonly buffer B1 { %[1]s x2[]; };
`, t)
	at := "mid"
	if sdt != 0 {
		fmt.Fprintf(&b, "layout(binding = 2) readonly buffer B2 { %s sorter[]; };\n", GLSLType(sdt))
		b.WriteString("layout(binding = 3) writeonly buffer B3 { int64_t y[]; };\n")
		at = "uint(clamp(int64_t(sorter[mid]), 0l, int64_t(m) - 1l))"
		if isUnsigned(sdt) {
			at = "uint(min(uint64_t(sorter[mid]), uint64_t(m) - 1ul))"
		}
	} else {
		b.WriteString("layout(binding = 2) writeonly buffer B2 { int64_t y[]; };\n")
	}
	b.WriteString("layout(push_constant) uniform P { uint total; uint m; };\n")
	b.WriteString(IndexGLSL)
	b.WriteString(sortKeyGLSL(dt, false))
	cmp := "<"
	if right {
		cmp = "<="
	}
	fmt.Fprintf(&b, `void main() {
	uint e = gid();
	if (e >= total) return;
	%[1]s v = key(x2[e]);
	uint lo = 0u, hi = m;
	for (uint it = 0u; it < 33u && lo < hi; it++) {
		uint mid = lo + (hi - lo) / 2u;
		if (key(x1[%[2]s]) %[3]s v) lo = mid + 1u; else hi = mid;
	}
	y[e] = int64_t(lo);
}
`, sortKeyType(dt), at, cmp)
	return b.String()
}
