package opcore

import (
	"fmt"
	"slices"
	"strings"

	"github.com/vkflow/vkflow/algorithm"
	"github.com/vkflow/vkflow/tensor"
)

// An element-wise kernel computes out[i] = expr(a0, a1, ...) where ak is
// input k at the position i broadcasts to, loaded in its compute type
// (computeType). One GLSL template is generated per expression, dtypes
// and layout:
//
//   - flat: every input has the output's element count (broadcasting then
//     only adds or drops dimensions of size 1, so the layouts agree) or is
//     a single element; one invocation per element;
//   - vec4: flat, every tensor 32-bit and the count a multiple of 4; one
//     invocation per 4 elements through vec4/ivec4/uvec4 buffers;
//   - strided: anything else. The shape is merged (merge) to at most
//     maxRank dimensions; its sizes and each input's strides are
//     specialization constants, so one compiled module serves every shape
//     of that rank. With 32-bit dtypes, an innermost dimension a multiple
//     of 4 long, and every input contiguous or constant along it (a row or
//     a column broadcast), each invocation handles 4 elements of it.
//
// The element count is a push constant. An output with no elements
// records no dispatch.

// ewKernel describes an element-wise kernel.
type ewKernel struct {
	ins   []*tensor.Tensor
	outDt tensor.Dtype
	// as, when set, gives the dtype each input computes in: input k is
	// loaded and converted to as[k]'s compute type (type promotion,
	// promote.go). nil: each input's own dtype.
	as    []tensor.Dtype
	shape []int // the output's shape
	// expr is a GLSL expression over a0..ak of the output's compute
	// type.
	expr string
	// body are GLSL statements before expr, after a0..ak are loaded (a
	// fused expression's steps).
	body string
	// helpers are GLSL functions expr calls, placed before main.
	helpers string
	// extra are dtypes body computes in besides the inputs' and output's
	// (for the header's extensions).
	extra []tensor.Dtype
	// pushDecl declares push constant members that come before the
	// element count n (keep them 8-byte aligned: push is packed); push
	// holds their values.
	pushDecl string
	push     []any
}

// Spec constant IDs of the strided layout: dimension sizes at 1..7 (the
// outermost size is never needed), input k's strides at
// specStride+k*maxRank+d.
const specStride = 8

// elementwise adds k's output (given or allocated) and its dispatch to op
// and finishes building.
func (op *Op) elementwise(k ewKernel, out *tensor.Tensor) (*Op, error) {
	dts := append([]tensor.Dtype{k.outDt}, k.as...)
	for _, t := range k.ins {
		dts = append(dts, t.Dtype())
	}
	if err := op.RequireDtypes(dts...); err != nil {
		return op.Fail(err)
	}
	n := Numel(k.shape)
	flat := true
	for _, t := range k.ins {
		if t.Len() != n && t.Len() != 1 {
			flat = false
		}
	}
	var shape []int
	var st [][]int
	if !flat {
		strides := make([][]int, len(k.ins))
		for j, t := range k.ins {
			strides[j] = StridesFor(t.Shape(), k.shape)
		}
		shape, st = Merge(k.shape, strides...)
		if len(shape) > MaxRank {
			return op.Fail(op.Errorf("shapes %v need %d dimensions after merging, more than the %d supported", inShapes(k.ins), len(shape), MaxRank))
		}
	}
	y, err := op.Output(out, k.outDt, k.shape)
	if err != nil {
		return op.Fail(err)
	}
	if n == 0 {
		return op, nil
	}
	ts := append(slices.Clone(k.ins), y)
	push := append(slices.Clone(k.push), uint32(n))
	if flat {
		vec4 := n%4 == 0 && is32(k.outDt) && !k.converts()
		for _, t := range k.ins {
			vec4 = vec4 && is32(t.Dtype())
		}
		items := 1
		if vec4 {
			items = 4
			push[len(push)-1] = uint32(n / 4)
		}
		groups, err := op.Grid(uint64(n/items), LocalSize)
		if err != nil {
			return op.Fail(err)
		}
		return op.Done(op.dispatchSpec(k.flatSource(n, vec4), ts, groups, nil, push...))
	}
	// vec4 along the innermost dimension: 32-bit dtypes, a multiple of 4
	// long, each input contiguous (stride 1) or constant (stride 0) along
	// it.
	last := len(shape) - 1
	vec4 := is32(k.outDt) && shape[last]%4 == 0 && !k.converts()
	vec := make([]bool, len(k.ins)+1)
	vec[len(k.ins)] = true
	for j, t := range k.ins {
		vec4 = vec4 && is32(t.Dtype()) && st[j][last] <= 1
		vec[j] = st[j][last] == 1
	}
	items := 1
	if vec4 {
		items = 4
		push[len(push)-1] = uint32(n / 4)
		shape[last] /= 4
		for j := range st {
			if vec[j] {
				for d := range last {
					st[j][d] /= 4 // a multiple of the innermost size
				}
			}
		}
	}
	var spec []algorithm.Option
	for d := 1; d < len(shape); d++ {
		spec = append(spec, algorithm.Spec(uint32(d), uint32(shape[d])))
	}
	for j := range st {
		for d := range shape {
			spec = append(spec, algorithm.Spec(uint32(specStride+j*MaxRank+d), uint32(st[j][d])))
		}
	}
	groups, err := op.Grid(uint64(n/items), LocalSize)
	if err != nil {
		return op.Fail(err)
	}
	return op.Done(op.dispatchSpec(k.stridedSource(len(shape), vec4, vec), ts, groups, spec, push...))
}

// converts reports whether an input computes in a dtype other than its
// own (the vec4 layouts then do not apply).
func (k *ewKernel) converts() bool {
	for j, t := range k.ins {
		if k.inDtype(j) != t.Dtype() {
			return true
		}
	}
	return false
}

// inDtype returns the dtype input j computes in.
func (k *ewKernel) inDtype(j int) tensor.Dtype {
	if j < len(k.as) && k.as[j] != 0 {
		return k.as[j]
	}
	return k.ins[j].Dtype()
}

// inShapes lists the shapes of ts, for messages.
func inShapes(ts []*tensor.Tensor) [][]int {
	s := make([][]int, len(ts))
	for i, t := range ts {
		s[i] = t.Shape()
	}
	return s
}

// is32 reports whether dt is a 32-bit dtype with a GLSL vec4 type.
func is32(dt tensor.Dtype) bool {
	return dt == tensor.Float32 || dt == tensor.Int32 || dt == tensor.Uint32
}

// vec4Type returns the 4-vector GLSL type of a 32-bit dtype.
func vec4Type(dt tensor.Dtype) string {
	switch dt {
	case tensor.Int32:
		return "ivec4"
	case tensor.Uint32:
		return "uvec4"
	}
	return "vec4"
}

// prologue writes what every layout shares: header, local size, buffers
// (input k is x<k>, the output y; vec4 buffers where vec[k] is set, the
// output's at vec[len(ins)]), push constants, helpers and gid().
func (k *ewKernel) prologue(b *strings.Builder, vec []bool) {
	dts := append(append([]tensor.Dtype{k.outDt}, k.extra...), k.as...)
	for _, t := range k.ins {
		dts = append(dts, t.Dtype())
	}
	b.WriteString(Header(dts...))
	fmt.Fprintf(b, "layout(local_size_x = %d) in;\n", LocalSize)
	typ := func(i int, dt tensor.Dtype) string {
		if vec != nil && vec[i] {
			return vec4Type(dt)
		}
		return GLSLType(dt)
	}
	for j, t := range k.ins {
		fmt.Fprintf(b, "layout(binding = %d) readonly buffer X%d { %s x%d[]; };\n", j, j, typ(j, t.Dtype()), j)
	}
	fmt.Fprintf(b, "layout(binding = %d) writeonly buffer Y { %s y[]; };\n", len(k.ins), typ(len(k.ins), k.outDt))
	fmt.Fprintf(b, "layout(push_constant) uniform P {%s uint n; };\n", k.pushDecl)
	b.WriteString(k.helpers)
	b.WriteString(IndexGLSL)
}

// flatSource is the flat (or vec4) kernel over n elements.
func (k *ewKernel) flatSource(n int, vec4 bool) string {
	var b strings.Builder
	vec := make([]bool, len(k.ins)+1)
	idx := make([]string, len(k.ins))
	for j, t := range k.ins {
		vec[j] = vec4 && t.Len() == n
		idx[j] = "i"
		if t.Len() == 1 {
			idx[j] = "0"
		}
	}
	vec[len(k.ins)] = vec4
	k.prologue(&b, vec)
	b.WriteString("void main() {\n\tuint i = gid();\n\tif (i >= n) return;\n")
	k.tail(&b, idx, vec, vec4)
	return b.String()
}

// tail writes the end of main: load a0..ak from x<j>[idx[j]], run body,
// store expr at y[i]. A vec4 kernel loads a vec4 where vec[j] is set, else
// one element for all 4 components, and computes per component.
func (k *ewKernel) tail(b *strings.Builder, idx []string, vec []bool, vec4 bool) {
	if !vec4 {
		for j, t := range k.ins {
			src, dst := t.Dtype(), k.inDtype(j)
			load := fmt.Sprintf("%s(x%d[%s])", ComputeType(src), j, idx[j])
			fmt.Fprintf(b, "\t%s a%d = %s;\n", ComputeType(dst), j, loadAs(src, dst, load))
		}
		b.WriteString(k.body)
		fmt.Fprintf(b, "\ty[i] = %s(%s);\n}\n", GLSLType(k.outDt), k.expr)
		return
	}
	for j, t := range k.ins {
		if vec[j] {
			fmt.Fprintf(b, "\t%s v%d = x%d[%s];\n", vec4Type(t.Dtype()), j, j, idx[j])
		} else {
			fmt.Fprintf(b, "\t%s v%d = %s(x%d[%s]);\n", vec4Type(t.Dtype()), j, vec4Type(t.Dtype()), j, idx[j])
		}
	}
	fmt.Fprintf(b, "\t%s r;\n\tfor (int c = 0; c < 4; c++) {\n", vec4Type(k.outDt))
	for j, t := range k.ins {
		fmt.Fprintf(b, "\t\t%s a%d = v%d[c];\n", ComputeType(t.Dtype()), j, j)
	}
	b.WriteString(k.body)
	fmt.Fprintf(b, "\t\tr[c] = %s;\n\t}\n\ty[i] = r;\n}\n", k.expr)
}

// stridedSource is the kernel for rank merged dimensions, sizes and
// strides given as specialization constants. A vec4 kernel (vec4 set)
// handles 4 elements of the innermost dimension per invocation: sizes and
// strides then count vec4s for the inputs with vec[j] set (stride 1 along
// it), elements for the others (stride 0 along it).
func (k *ewKernel) stridedSource(rank int, vec4 bool, vec []bool) string {
	var b strings.Builder
	for d := 1; d < rank; d++ {
		fmt.Fprintf(&b, "layout(constant_id = %d) const uint S%d = 1u;\n", d, d)
	}
	for j := range k.ins {
		for d := 0; d < rank; d++ {
			fmt.Fprintf(&b, "layout(constant_id = %d) const uint T%d_%d = 0u;\n", specStride+j*MaxRank+d, j, d)
		}
	}
	consts := b.String()
	b.Reset()
	if !vec4 {
		vec = nil
	}
	k.prologue(&b, vec)
	b.WriteString(consts)
	b.WriteString("void main() {\n\tuint i = gid();\n\tif (i >= n) return;\n\tuint q = i;\n\tuint w;\n")
	idx := make([]string, len(k.ins))
	for j := range k.ins {
		fmt.Fprintf(&b, "\tuint o%d = 0u;\n", j)
		idx[j] = fmt.Sprintf("o%d", j)
	}
	for d := rank - 1; d >= 1; d-- {
		fmt.Fprintf(&b, "\tw = q %% S%d;\n\tq /= S%d;\n", d, d)
		for j := range k.ins {
			fmt.Fprintf(&b, "\to%d += w * T%d_%d;\n", j, j, d)
		}
	}
	for j := range k.ins {
		fmt.Fprintf(&b, "\to%d += q * T%d_0;\n", j, j)
	}
	k.tail(&b, idx, vec, vec4)
	return b.String()
}
