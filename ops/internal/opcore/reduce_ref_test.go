package opcore_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow/ops"
	"github.com/vkflow/vkflow/tensor"
)

// The CPU reference for reductions: float64 accumulation for floats,
// two's-complement int64 arithmetic (which wraps as the GPU's does, and
// gives uint64's bits too) for integers and bool.

// host is a tensor's contents on the host: floats as float64 (exactly the
// dtype's values), integers and bool as their bits in an int64.
type host struct {
	dt    tensor.Dtype
	shape []int
	f     []float64
	i     []int64
}

// isUintDt reports an unsigned integer dtype (not bool, which reductions
// treat as signed: its sum is int64).
func isUintDt(dt tensor.Dtype) bool {
	return dt == tensor.Uint8 || dt == tensor.Uint16 || dt == tensor.Uint32 || dt == tensor.Uint64
}

// roundTo rounds v to dt's precision.
// randomHost fills shape with seeded values of dt: floats in [-1, 1)
// (float16: multiples of 1/64, exact in float32 sums), integers over the
// dtype's whole range.
func randomHost(dt tensor.Dtype, shape []int, seed uint64) host {
	r := rand.New(rand.NewPCG(seed, 7))
	n := numelOf(shape)
	h := host{dt: dt, shape: slices.Clone(shape)}
	if isFloatDt(dt) {
		h.f = make([]float64, n)
		for k := range h.f {
			if dt == tensor.Float16 {
				h.f[k] = float64(r.IntN(128)-64) / 64
			} else {
				h.f[k] = roundTo(dt, 2*r.Float64()-1)
			}
		}
		return h
	}
	h.i = make([]int64, n)
	for k := range h.i {
		v := int64(r.Uint64())
		switch dt {
		case tensor.Int8:
			v = int64(int8(v))
		case tensor.Int16:
			v = int64(int16(v))
		case tensor.Int32:
			v = int64(int32(v))
		case tensor.Uint8:
			v = int64(uint8(v))
		case tensor.Uint16:
			v = int64(uint16(v))
		case tensor.Uint32:
			v = int64(uint32(v))
		case tensor.Bool:
			v &= 1
		}
		h.i[k] = v
	}
	return h
}

// upload makes a tensor holding h.
func upload(t *testing.T, m ops.Owner, h host) *tensor.Tensor {
	t.Helper()
	x, err := tensor.New(m, h.dt, h.shape)
	require.NoError(t, err)
	t.Cleanup(func() { _ = x.Close() })
	n := numelOf(h.shape)
	var werr error
	switch h.dt {
	case tensor.Float16:
		v := make([]tensor.Half, n)
		for k := range v {
			v[k] = tensor.HalfFrom(float32(h.f[k]))
		}
		werr = tensor.Write(x, v)
	case tensor.Float32:
		werr = tensor.Write(x, convNum[float32](h.f))
	case tensor.Float64:
		werr = tensor.Write(x, h.f)
	case tensor.Int8:
		werr = tensor.Write(x, convNum[int8](h.i))
	case tensor.Int16:
		werr = tensor.Write(x, convNum[int16](h.i))
	case tensor.Int32:
		werr = tensor.Write(x, convNum[int32](h.i))
	case tensor.Int64:
		werr = tensor.Write(x, h.i)
	case tensor.Bool:
		v := make([]bool, n)
		for k := range v {
			v[k] = h.i[k] != 0
		}
		werr = tensor.Write(x, v)
	case tensor.Uint8:
		werr = tensor.Write(x, convNum[uint8](h.i))
	case tensor.Uint16:
		werr = tensor.Write(x, convNum[uint16](h.i))
	case tensor.Uint32:
		werr = tensor.Write(x, convNum[uint32](h.i))
	case tensor.Uint64:
		werr = tensor.Write(x, convNum[uint64](h.i))
	}
	require.NoError(t, werr)
	return x
}

func convNum[T, S int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64 | float32 | float64](s []S) []T {
	out := make([]T, len(s))
	for k, v := range s {
		out[k] = T(v)
	}
	return out
}

// download reads y back as a host.
func downloadHost(t *testing.T, y *tensor.Tensor) host {
	t.Helper()
	h := host{dt: y.Dtype(), shape: y.Shape()}
	var err error
	switch y.Dtype() {
	case tensor.Float16:
		var v []tensor.Half
		v, err = y.Float16s()
		for _, e := range v {
			h.f = append(h.f, float64(e.Float32()))
		}
	case tensor.Float32:
		var v []float32
		v, err = y.Float32s()
		h.f = convNum[float64](v)
	case tensor.Float64:
		var v []float64
		v, err = y.Float64s()
		h.f = slices.Clone(v)
	case tensor.Int8:
		var v []int8
		v, err = y.Int8s()
		h.i = convNum[int64](v)
	case tensor.Int16:
		var v []int16
		v, err = y.Int16s()
		h.i = convNum[int64](v)
	case tensor.Int32:
		var v []int32
		v, err = y.Int32s()
		h.i = convNum[int64](v)
	case tensor.Int64:
		var v []int64
		v, err = y.Int64s()
		h.i = slices.Clone(v)
	case tensor.Bool:
		var v []bool
		v, err = y.Bools()
		for _, e := range v {
			if e {
				h.i = append(h.i, 1)
			} else {
				h.i = append(h.i, 0)
			}
		}
	case tensor.Uint8:
		var v []uint8
		v, err = y.Uint8s()
		h.i = convNum[int64](v)
	case tensor.Uint16:
		var v []uint16
		v, err = y.Uint16s()
		h.i = convNum[int64](v)
	case tensor.Uint32:
		var v []uint32
		v, err = y.Uint32s()
		h.i = convNum[int64](v)
	case tensor.Uint64:
		var v []uint64
		v, err = y.Uint64s()
		h.i = convNum[int64](v)
	}
	require.NoError(t, err)
	return h
}

// resultDtype is the documented result dtype of a reduction.
func resultDtype(kind string, dt tensor.Dtype) tensor.Dtype {
	switch kind {
	case "argmax":
		return tensor.Int64
	case "sum", "prod":
		switch {
		case isFloatDt(dt):
			return dt
		case isUintDt(dt):
			return tensor.Uint64
		}
		return tensor.Int64
	}
	return dt
}

// normalize returns axes as the op reads them: nil is every axis.
func normalize(axes []int, rank int) []int {
	if axes == nil {
		out := make([]int, rank)
		for k := range out {
			out[k] = k
		}
		return out
	}
	out := []int{}
	for _, a := range axes {
		if a < 0 {
			a += rank
		}
		out = append(out, a)
	}
	slices.Sort(out)
	return out
}

// expected is the reference result of one reduction.
type expected struct {
	host
	n      int       // elements per output
	absSum []float64 // per output: the sum of |x| (float sums' error bound)
}

// reference reduces h over axes (normalized) with kind.
func reference(kind string, h host, axes []int, keepDims bool) expected {
	var kept, red []int
	for k, d := range h.shape {
		if slices.Contains(axes, k) {
			red = append(red, d)
			if keepDims {
				kept = append(kept, 1)
			}
		} else {
			kept = append(kept, d)
		}
	}
	outShape := []int{}
	for k, d := range h.shape {
		switch {
		case !slices.Contains(axes, k):
			outShape = append(outShape, d)
		case keepDims:
			outShape = append(outShape, 1)
		}
	}
	m, n := numelOf(outShape), numelOf(red)
	e := expected{host: host{dt: resultDtype(kind, h.dt), shape: outShape}, n: n, absSum: make([]float64, m)}
	fl := isFloatDt(h.dt)
	uns := isUintDt(h.dt)
	seen := make([]bool, m)
	best := make([]int, m) // argmax: the winning element of each output
	if fl {
		e.f = make([]float64, m)
	}
	if !fl || kind == "argmax" {
		e.i = make([]int64, m)
	}
	for o := range m {
		switch {
		case kind == "prod" && fl:
			e.f[o] = 1
		case kind == "prod":
			e.i[o] = 1
		}
	}
	// Walk the elements row-major; o and r are the kept and reduced
	// row-major positions.
	idx := make([]int, len(h.shape))
	for k := range numelOf(h.shape) {
		o, r := 0, 0
		for d, v := range idx {
			if slices.Contains(axes, d) {
				r = r*h.shape[d] + v
			} else {
				o = o*h.shape[d] + v
			}
		}
		first := !seen[o]
		seen[o] = true
		if fl {
			v := h.f[k]
			e.absSum[o] += math.Abs(v)
			switch kind {
			case "sum", "mean":
				e.f[o] += v
			case "prod":
				e.f[o] *= v
			case "max", "min":
				w := e.f[o]
				if first || math.IsNaN(v) || (!math.IsNaN(w) && ((kind == "max" && v > w) || (kind == "min" && v < w))) {
					e.f[o] = v
				}
			case "argmax":
				w := h.f[best[o]]
				if first || (math.IsNaN(v) && !math.IsNaN(w)) || (!math.IsNaN(w) && v > w) {
					best[o], e.i[o] = k, int64(r)
				}
			}
		} else {
			v := h.i[k]
			less := func(a, b int64) bool {
				if uns {
					return uint64(a) < uint64(b)
				}
				return a < b
			}
			switch kind {
			case "sum":
				e.i[o] += v
			case "prod":
				e.i[o] *= v
			case "max":
				if first || less(e.i[o], v) {
					e.i[o] = v
				}
			case "min":
				if first || less(v, e.i[o]) {
					e.i[o] = v
				}
			case "argmax":
				if first || less(h.i[best[o]], v) {
					best[o], e.i[o] = k, int64(r)
				}
			}
		}
		for d := len(idx) - 1; d >= 0; d-- {
			idx[d]++
			if idx[d] < h.shape[d] {
				break
			}
			idx[d] = 0
		}
	}
	if kind == "mean" {
		for o := range e.f {
			e.f[o] /= float64(n)
		}
	}
	if fl && kind != "argmax" {
		for o := range e.f {
			e.f[o] = roundTo(e.dt, e.f[o])
		}
	}
	return e
}

// unit is the unit roundoff of dt's arithmetic: what one addition or
// multiplication may lose relative to its result.
func unit(dt tensor.Dtype) float64 {
	if dt == tensor.Float64 {
		return 0x1p-53
	}
	return 0x1p-24 // float16 accumulates in float32
}

// tiny is the smallest normal value of dt's results: Vulkan lets
// shaders flush subnormals to zero (lavapipe does), so results below it
// may be off by that much. float16 results come from float32 arithmetic,
// but their conversion may flush float16 subnormals.
func tiny(dt tensor.Dtype) float64 {
	switch dt {
	case tensor.Float16:
		return 0x1p-14
	case tensor.Float32:
		return 0x1p-126
	}
	return 0x1p-1022
}

// depth bounds how many roundings an element's contribution to a sum goes
// through: each pass adds it in one of a lane's four running sums (at most
// 15 additions of the 16 elements each holds), then combines the four (2),
// then a tree of at most 8 levels (256 lanes); a pass divides the segment
// by at least 64 (a strided first pass in column mode; contiguous passes
// by up to 16384) or ends.
func depth(n int) float64 {
	passes := 1
	for n > 64 {
		n = (n + 63) / 64
		passes++
	}
	return float64(25 * passes)
}

// compare returns the mismatches between got and want (at most 10), each
// described; nil when they agree. Integers must match bit for bit; max,
// min and argmax exactly; sums and means within depth * u * sum|x|
// (Wilkinson's bound for any summation order of that depth) plus, for
// float16, half an ulp of the result (the one rounding at the end);
// products within (n-1) * u relative (a product of n factors rounds n-1
// times, in any order).
func compare(kind string, got host, want expected) []string {
	var bad []string
	add := func(o int, format string, args ...any) {
		if len(bad) < 10 {
			bad = append(bad, fmt.Sprintf("output %d: ", o)+fmt.Sprintf(format, args...))
		}
	}
	if got.dt != want.dt || !slices.Equal(got.shape, want.shape) {
		return []string{fmt.Sprintf("got %v %v, want %v %v", got.dt, got.shape, want.dt, want.shape)}
	}
	if want.f == nil || kind == "argmax" {
		for o := range want.i {
			if got.i[o] != want.i[o] {
				add(o, "got %d, want %d", got.i[o], want.i[o])
			}
		}
		return bad
	}
	u := unit(want.dt)
	for o, w := range want.f {
		g := got.f[o]
		var tol float64
		switch kind {
		case "sum":
			tol = depth(want.n) * u * want.absSum[o]
		case "mean":
			tol = (depth(want.n)*want.absSum[o] + math.Abs(w)) * u / float64(max(want.n, 1))
		case "prod":
			tol = float64(want.n) * u * math.Abs(w)
		}
		if want.dt == tensor.Float16 && kind != "max" && kind != "min" {
			tol += math.Abs(w) * 0x1p-11
		}
		if kind != "max" && kind != "min" {
			tol += tiny(want.dt)
		}
		switch {
		case math.IsNaN(w) || math.IsInf(w, 0):
			if !(math.IsNaN(w) && math.IsNaN(g)) && g != w {
				add(o, "got %v, want %v", g, w)
			}
		case !(math.Abs(g-w) <= tol):
			add(o, "got %v, want %v (tolerance %g)", g, w, tol)
		}
	}
	return bad
}
