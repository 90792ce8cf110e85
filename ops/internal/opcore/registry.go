package opcore

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"

	"sort"
	"sync"

	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/tensor"
)

// Attrs are an op's parameters besides its tensors. Each op reads the
// fields it documents and ignores the others. The JSON form (ParseAttrs)
// is what the C API and Python pass.
type Attrs struct {
	// Axes: the axes a reduction reduces (nil: all), or softmax's one axis
	// (nil: the last). Negative axes count from the end.
	Axes []int `json:"axes,omitempty"`
	// KeepDims keeps reduced axes as dimensions of size 1.
	KeepDims bool `json:"keepdims,omitempty"`
	// Perm is permute's order of input dimensions (nil: reversed).
	Perm []int `json:"perm,omitempty"`
	// Shift is roll's shifts (one, or one per axis of Axes).
	Shift []int `json:"shift,omitempty"`
	// Reps is tile's repetitions per axis.
	Reps []int `json:"reps,omitempty"`
	// Repeats is repeat's count per element.
	Repeats int `json:"repeats,omitempty"`
	// Dtype is cast's target dtype.
	Dtype tensor.Dtype `json:"-"`
	// Min and Max are clip's bounds; nil is unbounded.
	Min *float64 `json:"min,omitempty"`
	Max *float64 `json:"max,omitempty"`
	// Push is a registered kernel's push constant block, raw bytes (base64
	// in JSON).
	Push []byte `json:"push,omitempty"`
	// Groups are a registered kernel's workgroups; zero: enough groups of
	// the kernel's local size x for one invocation per element of the
	// first output.
	Groups [3]uint32 `json:"groups,omitempty"`
	// Shape, SrcOffset, SrcStrides, DstOffset and DstStrides describe
	// strided_copy's views, in elements: the copied shape, and where
	// element (i0, i1, ...) is in the source and in the destination
	// (offset + sum of ik*stride[k]; nil strides: row-major contiguous).
	Shape      []int `json:"shape,omitempty"`
	SrcOffset  int   `json:"src_offset,omitempty"`
	SrcStrides []int `json:"src_strides,omitempty"`
	DstOffset  int   `json:"dst_offset,omitempty"`
	DstStrides []int `json:"dst_strides,omitempty"`
	// Descending is sort's and argsort's order (Axes: their one axis, nil
	// the last). Stable is the array API's stable flag, accepted and
	// ignored: the sort is always stable.
	Descending bool  `json:"descending,omitempty"`
	Stable     *bool `json:"stable,omitempty"`
	// Side is searchsorted's side: "left" (the default when empty) or
	// "right".
	Side string `json:"side,omitempty"`
	// Linalg (linalg_*.go): Upper is cholesky's upper factor; Mode is qr's
	// "reduced" (default) or "complete"; N is matrix_power's exponent
	// (and a 1-d FFT's length, below);
	// Offset is diagonal's and trace's diagonal (0 main, > 0 above, < 0
	// below); Axes2 are tensordot's contracted axes of its second input
	// (Axes those of its first), and vecdot and cross take one axis in
	// Axes.
	Upper  bool   `json:"upper,omitempty"`
	Mode   string `json:"mode,omitempty"`
	N      int    `json:"n,omitempty"`
	Offset int    `json:"offset,omitempty"`
	Axes2  []int  `json:"axes2,omitempty"`
	// IncludeInitial is cumulative_sum's and cumulative_prod's: the result
	// starts with the identity (one longer along the axis).
	IncludeInitial bool `json:"include_initial,omitempty"`
	// K is tril's and triu's diagonal offset (0: the main diagonal, > 0
	// above it, < 0 below).
	K int `json:"k,omitempty"`
	// FullMatrices: svd's full U and Vh (nil: true, as the array API).
	FullMatrices *bool `json:"full_matrices,omitempty"`
	// Rtol: pinv's and matrix_rank's relative cutoff of singular values
	// (nil: max(M, N) * eps of the dtype).
	Rtol *float64 `json:"rtol,omitempty"`
	// Ord: matrix_norm's order ("fro", "nuc", "1", "-1", "2", "-2", "inf",
	// "-inf"; "" is "fro") and vector_norm's (a number, "inf" or "-inf";
	// "" is 2).
	Ord string `json:"ord,omitempty"`
	// N (above) is also a 1-d FFT's length along its axis (0: the
	// default); S is an n-dimensional FFT's lengths along its axes (nil:
	// the default; -1: the axis's length), Norm the FFTs' normalization
	// ("backward" or "", "ortho", "forward").
	S    []int  `json:"s,omitempty"`
	Norm string `json:"norm,omitempty"`
	// Sigma, Start and Count are the soft rasterizer's (package
	// ops/render): the coverage's softness in pixels (nil: 1), and the
	// triangles a layer takes, Start up to Start+Count (Count 0: to the
	// last).
	Sigma *float64 `json:"sigma,omitempty"`
	Start int      `json:"start,omitempty"`
	Count int      `json:"count,omitempty"`
}

// ParseAttrs parses Attrs from JSON text: {"axes": [0, -1], "keepdims":
// true, "perm": [1, 0], "dtype": "float16", "min": 0, "max": 6, "push":
// "<base64>", "groups": [4, 1, 1], "descending": true, "side": "right",
// "include_initial": true, "k": -1, "n": 8, "s": [4, -1], "norm": "ortho"}.
// Empty text is the zero Attrs. Unknown keys are an error.
func ParseAttrs(text []byte) (Attrs, error) {
	var a Attrs
	if len(text) == 0 {
		return a, nil
	}
	var aux struct {
		Attrs
		Dtype *string `json:"dtype"`
	}
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&aux); err != nil {
		return a, core.Invalid("ops: attributes %q: %v", text, err)
	}
	a = aux.Attrs
	if aux.Dtype != nil {
		dt, ok := DtypeByName(*aux.Dtype)
		if !ok {
			return a, core.Invalid("ops: attributes: unknown dtype %q", *aux.Dtype)
		}
		a.Dtype = dt
	}
	return a, nil
}

// DtypeByName returns the dtype whose String is name ("float32", "bool",
// ...).
func DtypeByName(name string) (tensor.Dtype, bool) {
	return tensor.DtypeByName(name)
}

// Builder prepares a built-in op: in are its inputs, out its outputs (nil
// entries, or a short slice: allocated), at its attributes.
type Builder func(o Owner, in, out []*tensor.Tensor, at Attrs) (*Op, error)

type entry struct {
	build  Builder
	kernel *userKernel // nil for built-ins
}

var registry = struct {
	sync.RWMutex
	m map[string]entry
	// gen changes at every Register and Unregister, so that eager streams
	// never reuse an op prepared from a kernel that was replaced.
	gen uint64
}{m: map[string]entry{}}

// registryGen returns the registry's generation.
func registryGen() uint64 {
	registry.RLock()
	defer registry.RUnlock()
	return registry.gen
}

// Builtin registers a built-in op; init functions call it.
func Builtin(name string, b Builder) {
	registry.Lock()
	defer registry.Unlock()
	registry.m[name] = entry{build: b}
}

var validName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.]*$`)

// Register adds a kernel by name, for Prepare and Call (and the C API and
// Python, which call them). GLSL source is compiled now (package glsl:
// libshaderc, cached by source hash), so a compile error comes back here,
// with the compiler's message and line. A name already taken, built-in or
// registered, is an error; Unregister frees a registered one.
func Register(name string, k Kernel) error {
	if !validName.MatchString(name) {
		return core.Invalid("ops.Register: name %q: use letters, digits, _ and .", name)
	}
	uk, err := k.compile(name)
	if err != nil {
		return err
	}
	registry.Lock()
	defer registry.Unlock()
	if _, ok := registry.m[name]; ok {
		return core.Invalid("ops.Register: %q is already registered", name)
	}
	registry.m[name] = entry{build: uk.build, kernel: uk}
	registry.gen++
	return nil
}

// Unregister removes a kernel added by Register, and its VJP. Ops already prepared
// keep working. Built-in ops cannot be removed.
func Unregister(name string) error {
	registry.Lock()
	defer registry.Unlock()
	e, ok := registry.m[name]
	switch {
	case !ok:
		return core.Invalid("ops.Unregister: %q is not registered", name)
	case e.kernel == nil:
		return core.Invalid("ops.Unregister: %q is a built-in op", name)
	}
	delete(registry.m, name)
	delete(grads, name)
	registry.gen++
	return nil
}

// Names returns the names of every op, built-in and registered, sorted.
func Names() []string {
	registry.RLock()
	defer registry.RUnlock()
	names := make([]string, 0, len(registry.m))
	for n := range registry.m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Prepare builds the op called name over inputs in. out gives outputs:
// a nil entry (or a slice shorter than the op's outputs) has the op
// allocate that output, which the caller then owns (Op.Outputs). Prepare
// checks shapes, dtypes and attributes at once; nothing runs until the
// Op is recorded or run.
func Prepare(o Owner, name string, in, out []*tensor.Tensor, at Attrs) (*Op, error) {
	registry.RLock()
	e, ok := registry.m[name]
	registry.RUnlock()
	if !ok {
		return nil, core.Invalid("ops: no op named %q (ops.Names lists them)", name)
	}
	if err := checkAttrs(name, e, at); err != nil {
		return nil, err
	}
	return e.build(o, in, out, at)
}

// checkDynamicAttrs is checkAttrs for a dynamic op (one Prepare never
// sees).
func checkDynamicAttrs(name string, at Attrs) error {
	registry.RLock()
	e := registry.m[name]
	registry.RUnlock()
	return checkAttrs(name, e, at)
}

// Call prepares the op called name, runs it on queue 0, waits, and
// returns its outputs (given or allocated: the caller owns the allocated
// ones). The Op itself is closed before Call returns. For repeated work,
// Prepare once and Run, Record or AddTo many times.
func Call(ctx context.Context, o Owner, name string, in, out []*tensor.Tensor, at Attrs) ([]*tensor.Tensor, error) {
	if f := dynamicOp(name); f != nil {
		// An output shape that depends on the data (dynamic.go).
		if err := checkDynamicAttrs(name, at); err != nil {
			return nil, err
		}
		return callDynamic(ctx, o, name, f, in, out, at)
	}
	op, err := Prepare(o, name, in, out, at)
	if err != nil {
		return nil, err
	}
	err = op.Run(ctx)
	outs := op.Outputs()
	cerr := op.Close()
	if err == nil {
		err = cerr
	}
	if err != nil {
		// Outputs the op allocated go with it; closing a tensor the GPU
		// may still use (a timed-out wait) defers the free until it is
		// done.
		for _, t := range op.made {
			_ = t.Close()
		}
		return nil, fmt.Errorf("ops.%s: %w", name, err)
	}
	return outs, nil
}

// Inputs checks the count of in for op name.
func Inputs(name string, in []*tensor.Tensor, n int) error {
	if len(in) != n {
		return core.Invalid("ops.%s: %d inputs, want %d", name, len(in), n)
	}
	return nil
}

// OutAt returns out[i], or nil when out is shorter.
func OutAt(out []*tensor.Tensor, i int) *tensor.Tensor {
	if i < len(out) {
		return out[i]
	}
	return nil
}

// BuiltinOne registers the built-in op name with n inputs (n < 0: any
// number, which f checks) and one output: out is the given output or nil.
func BuiltinOne(name string, n int, f func(o Owner, in []*tensor.Tensor, at Attrs, out *tensor.Tensor) (*Op, error)) {
	Builtin(name, func(o Owner, in, out []*tensor.Tensor, at Attrs) (*Op, error) {
		if n >= 0 {
			if err := Inputs(name, in, n); err != nil {
				return nil, err
			}
		}
		if err := TooMany(name, out, 1); err != nil {
			return nil, err
		}
		return f(o, in, at, OutAt(out, 0))
	})
}

// TooMany fails when out has more entries than the op's n outputs.
func TooMany(name string, out []*tensor.Tensor, n int) error {
	if len(out) > n {
		return core.Invalid("ops.%s: %d outputs given, the op has %d", name, len(out), n)
	}
	return nil
}
