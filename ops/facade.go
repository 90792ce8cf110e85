// The ops API over its core, ops/internal/opcore: types are aliases, functions forward.

package ops

import (
	"context"

	"github.com/vkflow/vkflow/graph"
	"github.com/vkflow/vkflow/ops/internal/opcore"
	"github.com/vkflow/vkflow/tensor"
)

// AttrSpec describes one attribute of an op.
type AttrSpec = opcore.AttrSpec

// Attrs are an op's parameters besides its tensors. Each op reads the
// fields it documents and ignores the others. The JSON form (ParseAttrs)
// is what the C API and Python pass.
type Attrs = opcore.Attrs

// Backward is a tape's backward graph.
type Backward = opcore.Backward

// Builder prepares a built-in op: in are its inputs, out its outputs (nil
// entries, or a short slice: allocated), at its attributes.
type Builder = opcore.Builder

// Call prepares the op called name, runs it on queue 0, waits, and
// returns its outputs (given or allocated: the caller owns the allocated
// ones). The Op itself is closed before Call returns. For repeated work,
// Prepare once and Run, Record or AddTo many times.
func Call(ctx context.Context, o Owner, name string, in []*tensor.Tensor, out []*tensor.Tensor, at Attrs) ([]*tensor.Tensor, error) {
	return opcore.Call(ctx, o, name, in, out, at)
}

// DefaultPoolSize bounds a stream's output pool unless WithPoolSize says
// otherwise: 64 MiB of kept buffers (pool.go).
const DefaultPoolSize = opcore.DefaultPoolSize

// DefaultStream returns the Manager's own stream on queue 0, made at the
// first call; the C API's and Python's eager ops use it. Closing it is an
// error: it lives as long as the Manager.
func DefaultStream(o Owner) (*Stream, error) {
	return opcore.DefaultStream(o)
}

// Differentiable returns the names of the ops that have a VJP, sorted.
func Differentiable() []string {
	return opcore.Differentiable()
}

// DtypeByName returns the dtype whose String is name ("float32", "bool",
// ...).
func DtypeByName(name string) (tensor.Dtype, bool) {
	return opcore.DtypeByName(name)
}

// ErrNoGradient: the op has no VJP (it is not differentiable, or its rule
// is not written yet). It wraps vkflow.ErrInvalid too.
var ErrNoGradient = opcore.ErrNoGradient

// GradBuilder is what a VJP rule computes with: the op's inputs, outputs,
// cotangents and attributes, and the ops it calls, which run where the
// gradient is asked for (queued on a Stream, or recorded into a backward
// graph). Every tensor its calls make belongs to it: those a rule returns
// become the gradients, the others are closed when the rule is done.
// The first error sticks: later calls return nil and do nothing.
type GradBuilder = opcore.GradBuilder

// GradInfo is an op's gradient entry.
type GradInfo = opcore.GradInfo

// GradKind says what an op's gradient entry is.
type GradKind = opcore.GradKind

// GradNone: the op has no derivative (comparisons, bitwise and logical
// ops, indices).
const GradNone = opcore.GradNone

// GradPending: the op is differentiable, but its VJP is not written
// yet.
const GradPending = opcore.GradPending

// GradVJP: the op has a VJP.
const GradVJP = opcore.GradVJP

// GradientOf returns the gradient entry of the op name.
func GradientOf(name string) (GradInfo, error) {
	return opcore.GradientOf(name)
}

// Kernel is a compute shader registered by name (Register). Give GLSL
// source or a SPIR-V module, not both. Its storage buffers are at set 0,
// bindings 0..n-1: the first Inputs are its inputs, the rest its outputs,
// which the caller always gives (a registered kernel cannot infer their
// shapes). Attrs.Push holds its push constants and Attrs.Groups its
// workgroups (zero: one invocation per element of the first output, or of
// the first input when it has no outputs, in groups of its local size x).
type Kernel = opcore.Kernel

// KernelVJP is the VJP rule "call the registered kernel vjpOp": its
// inputs are the op's inputs, then its outputs, then the cotangents
// (zeros for an output without one); its outputs, which the rule
// allocates as zeros, are the inputs' gradients, in order, each of its
// input's shape and dtype. It runs with the forward call's attributes
// (its push constants and workgroups).
func KernelVJP(vjpOp string) VJPFunc {
	return opcore.KernelVJP(vjpOp)
}

// Matmul prepares out = a @ b with NumPy's matmul semantics: a is
// [..., m, k] and b [..., k, n], the batch dimensions (all but the last
// two) broadcast against each other, and out is [batch..., m, n]. A 1-D a
// is a row vector [1, k] and a 1-D b a column vector [k, 1], and the
// dimension added is removed from the result; 0-d operands are an error.
// out nil allocates it.
//
// Dtypes: float16 (products summed in float32, rounded once to float16),
// float32, float64 (where the device has shaderFloat64), complex64 and
// complex128 (complex products, summed per part), and the integer
// types, which wrap as NumPy's do. a and b must have the same dtype; bool
// is refused. out must not share memory with a or b. A k of 0 gives
// zeros.
//
// The kernel tiles the output in blocks of up to 128×128 per workgroup
// of 128 invocations, each invocation summing a block of up to 16×8 in
// registers over slices of k staged in shared memory; the batch is the
// grid's z. A grid past the device's maxComputeWorkGroupCount, or a k
// whose loop would pass lavapipe's iteration cap, is cut into several
// dispatches (those of later slices of k add to the output).
func Matmul(o Owner, a *tensor.Tensor, b *tensor.Tensor, out *tensor.Tensor) (*Op, error) {
	return opcore.Matmul(o, a, b, out)
}

// Names returns the names of every op, built-in and registered, sorted.
func Names() []string {
	return opcore.Names()
}

// NewStream makes a stream on the Manager o.
func NewStream(o Owner, opts ...StreamOption) (*Stream, error) {
	return opcore.NewStream(o, opts...)
}

// NewTape returns a tape that records into g.
func NewTape(o Owner, g *graph.Graph) (*Tape, error) {
	return opcore.NewTape(o, g)
}

// OnQueue runs the stream on logical queue i (default 0).
func OnQueue(i int) StreamOption {
	return opcore.OnQueue(i)
}

// Op is a prepared operator: its compute pipelines, bound to its inputs,
// outputs and scratch buffers, and the dispatches that compute it. An Op
// can be recorded into any number of sequences and graphs, and run, as
// often as wanted; it records the same dispatches each time.
//
// Ownership: the Op owns its pipelines, its scratch tensors and the
// sequence Run uses; Close releases them. Inputs and outputs belong to the
// caller, including outputs the Op allocated (Outputs returns them): they
// stay open after Close. Sequences and graphs that recorded the Op keep
// what they recorded alive until they are done with it, as for any
// algorithm.
type Op = opcore.Op

// Owner is what constructors take: a *vkflow.Manager.
type Owner = opcore.Owner

// ParseAttrs parses Attrs from JSON text: {"axes": [0, -1], "keepdims":
// true, "perm": [1, 0], "dtype": "float16", "min": 0, "max": 6, "push":
// "<base64>", "groups": [4, 1, 1], "descending": true, "side": "right",
// "include_initial": true, "k": -1, "n": 8, "s": [4, -1], "norm": "ortho"}.
// Empty text is the zero Attrs. Unknown keys are an error.
func ParseAttrs(text []byte) (Attrs, error) {
	return opcore.ParseAttrs(text)
}

// PoolStats are the counters of a Stream's output pool.
type PoolStats = opcore.PoolStats

// Prepare builds the op called name over inputs in. out gives outputs:
// a nil entry (or a slice shorter than the op's outputs) has the op
// allocate that output, which the caller then owns (Op.Outputs). Prepare
// checks shapes, dtypes and attributes at once; nothing runs until the
// Op is recorded or run.
func Prepare(o Owner, name string, in []*tensor.Tensor, out []*tensor.Tensor, at Attrs) (*Op, error) {
	return opcore.Prepare(o, name, in, out, at)
}

// Register adds a kernel by name, for Prepare and Call (and the C API and
// Python, which call them). GLSL source is compiled now (package glsl:
// libshaderc, cached by source hash), so a compile error comes back here,
// with the compiler's message and line. A name already taken, built-in or
// registered, is an error; Unregister frees a registered one.
func Register(name string, k Kernel) error {
	return opcore.Register(name, k)
}

// RegisterVJP gives the registered kernel name its VJP: a composition of
// ops (a VJPFunc), or a kernel of its own (KernelVJP). Built-in ops keep
// theirs. Registering again replaces the rule; Unregister of the kernel
// removes it.
func RegisterVJP(name string, fn VJPFunc) error {
	return opcore.RegisterVJP(name, fn)
}

// RegistryMarkdown describes every built-in op of the registry, from the
// schemas: docs/OPS_REGISTRY.md (tools/opsdoc writes it; a test keeps it
// current).
func RegistryMarkdown() string {
	return opcore.RegistryMarkdown()
}

// Schema describes an op.
type Schema = opcore.Schema

// SchemaOf returns the op's schema.
func SchemaOf(name string) (Schema, error) {
	return opcore.SchemaOf(name)
}

// Schemas returns every op's schema, by name.
func Schemas() []Schema {
	return opcore.Schemas()
}

// Stream runs ops one call at a time, as NumPy, CuPy or PyTorch users call
// them, with CUDA-stream semantics: Call returns once the op is submitted,
// and the host waits only where data must reach it (Tensor.Wait before a
// host read, Synchronize, or the C API's and Python's reads).
//
// Order: every call's command buffer goes to the stream's queue in call
// order, and the queue's hazard tracking puts the barriers between a call
// and the earlier work on the same queue that wrote what it reads, or read
// or wrote what it writes. Uses of its tensors submitted on other queues
// are waited for on the GPU (sequence.AfterUses). So a call sees exactly
// what the calls before it wrote, from any goroutine, and none of this
// blocks the host.
//
// Cache: ops are prepared once per key (op, attributes, dtypes, shapes,
// aliasing, given outputs) and kept in a bounded LRU (WithCacheSize);
// later calls only bind the op's pipelines to their tensors and record a
// command buffer. Manager.OpCacheStats reports hits, misses and evictions.
//
// Lifetimes: a call holds references on its tensors until its submit
// completes, so closing an input or output right after Call is safe; the
// memory is freed once the GPU is done. Writing an input from the host
// while a queued call may still read it is not: call Wait on the tensor
// first (the C API's and Python's writes do).
//
// Memory: outputs a call allocates on a cache hit come from the stream's
// output pool (pool.go): buffers of the stream's earlier outputs whose
// tensors were destroyed, reused once the GPU is done with them, cleared
// to zero. WithPoolSize bounds it; Synchronize and TrimPool empty it.
//
// Ownership: the stream owns its prepared ops, its pool of sequences and
// its output pool; Close releases them. Outputs a call allocates belong to
// the caller. A Stream is safe for concurrent use.
type Stream = opcore.Stream

// StreamOption configures NewStream.
type StreamOption = opcore.StreamOption

// Tape records ops into a graph, as Op.AddTo does, and remembers each
// call (its op, inputs, outputs, attributes and queue), so that Grad can
// build the graph's backward graph from the registry's VJPs.
//
//	g, _ := graph.New(mgr)
//	tp, _ := ops.NewTape(mgr, g)
//	h, _ := tp.Call1("matmul", ops.Attrs{}, x, w)
//	y, _ := tp.Call1("sum", ops.Attrs{}, h)
//	bw, _ := tp.Grad([]*tensor.Tensor{y}, []*tensor.Tensor{dy}, []*tensor.Tensor{x, w})
//	fwd, _ := g.Compile(graph.Queues(0, 1))
//	bwd, _ := bw.Graph.Compile(graph.Queues(0, 1))
//	fwd.Run(ctx); bwd.Run(ctx) // bw.Grads hold dL/dx and dL/dw
//
// Ownership: the Tape owns the ops it prepared (forward and backward), the
// outputs they allocated, and the backward graph's tensors (its
// intermediates, constants and gradients); Close releases them, after
// closing the Execs compiled from its graphs. The inputs and the
// cotangents belong to the caller. A Tape is safe for concurrent use.
type Tape = opcore.Tape

// Unregister removes a kernel added by Register, and its VJP. Ops already prepared
// keep working. Built-in ops cannot be removed.
func Unregister(name string) error {
	return opcore.Unregister(name)
}

// VJPFunc is a VJP rule: from b's inputs, outputs, cotangents and
// attributes it computes the gradient of each input with b's ops (Call,
// and the helpers), and returns one entry per input: nil for an input
// that gets no gradient (b.Wants(i) false, or an index or a condition).
// Errors stick to b (b.Err), as they do to a sequence.
type VJPFunc = opcore.VJPFunc

// WithCacheSize bounds the prepared-op cache to n ops (default 256; at
// least 1).
func WithCacheSize(n int) StreamOption {
	return opcore.WithCacheSize(n)
}

// WithMaxInFlight bounds the calls submitted and not yet completed
// (default 1024). A call past the bound waits on the host for the oldest;
// Manager.OpCacheStats counts those waits.
func WithMaxInFlight(n int) StreamOption {
	return opcore.WithMaxInFlight(n)
}

// WithPoolSize bounds the stream's output pool to n bytes of kept buffers
// (default DefaultPoolSize); 0 disables it: every output is a new buffer,
// freed when its tensor is destroyed.
func WithPoolSize(n int64) StreamOption {
	return opcore.WithPoolSize(n)
}
