package tensor

import (
	"context"
	"fmt"
	"math"
	"unsafe"

	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/vk"
)

// Memory is where a tensor's buffer lives.
type Memory = core.MemKind

// Memory kinds.
const (
	Device  = core.MemDevice  // device-local; zero-copy when host-visible, else staged
	Host    = core.MemHost    // host-visible, coherent
	Storage = core.MemStorage // GPU only, no host access
)

// Owner is what constructors take: a *vkflow.Manager.
type Owner = core.Owner

// Tensor is a typed N-d array in a Vulkan buffer. Its methods are safe for
// concurrent use; the host slices it returns are not synchronized with GPU
// work.
type Tensor struct {
	obj   core.Object
	dev   *core.Device
	alloc *core.Allocation
	dtype Dtype
	shape []int
	n     int
	// readOnly tensors (imported from a producer that forbids writes)
	// refuse Write and every GPU write a sequence would record.
	readOnly bool
	kind     Memory // alloc.Kind, kept here: alloc is freed on Close
	mapped   bool   // host reads go through the mapping (core.ReadsMapped)
}

// acquire enters the device's gate and takes a reference for a host
// access, so that neither Close nor Manager.Close can free the buffer while
// it runs; release with t.release. It fails with ErrClosed once the tensor
// or its Manager is closed.
func (t *Tensor) acquire() error {
	if t == nil {
		return core.Invalid("nil tensor")
	}
	if err := t.dev.Enter(); err != nil {
		return err
	}
	if !t.obj.TryAcquire() {
		t.dev.Exit()
		return core.Closed("tensor")
	}
	return nil
}

// release drops what acquire took.
func (t *Tensor) release() {
	t.obj.Release()
	t.dev.Exit()
}

// Option configures New.
type Option func(*options)

type options struct {
	mem        Memory
	exportable bool
}

// In places the tensor in memory kind m (default Device).
func In(m Memory) Option { return func(o *options) { o.mem = m } }

// Exportable gives the tensor a VkDeviceMemory of its own that package
// interop can export as an opaque file descriptor (interop.Export), for
// another Manager, another process or another API (CUDA) to import. The
// memory is never sub-allocated from a shared block, so an export exposes
// this tensor only, and it is a dedicated allocation. Exportable tensors are
// Device memory (zero-copy for the host where it is host-visible, staged
// otherwise); combined with In(Host) or In(Storage), New returns
// ErrInvalid. Without VK_KHR_external_memory_fd New returns ErrUnsupported
// naming it.
func Exportable() Option { return func(o *options) { o.exportable = true } }

// checkShape returns the element count of shape. An empty shape is a 0-d
// tensor (a scalar) of one element; a dimension of 0 makes an empty tensor
// of no elements, as in NumPy.
func checkShape(shape []int) (int, error) {
	n := 1
	for _, s := range shape {
		if s < 0 {
			return 0, core.Invalid("tensor shape %v has a negative dimension", shape)
		}
		if s > 0 && n > math.MaxInt/s {
			return 0, core.Invalid("tensor shape %v overflows", shape)
		}
		n *= s
	}
	return n, nil
}

// checkSize returns the element count and byte size of a dtype and shape,
// or ErrInvalid when either overflows an int.
func checkSize(dtype Dtype, shape []int) (int, uint64, error) {
	n, err := checkShape(shape)
	if err != nil {
		return 0, 0, err
	}
	// Tensors are padded to 4 bytes, so the padded size must fit too.
	if es := dtype.Size(); n > (math.MaxInt-3)/es {
		return 0, 0, core.Invalid("%v tensor of shape %v: byte size overflows", dtype, shape)
	}
	return n, uint64(n) * uint64(dtype.Size()), nil
}

// MaxBytes returns the largest tensor d can hold in one buffer: the lower
// of maxStorageBufferRange (which bounds a descriptor's range, the
// tensor's bytes) and maxMemoryAllocationSize rounded down to 4 (which
// bounds the buffer, padded to 4 bytes).
func MaxBytes(d *core.Device) uint64 {
	limit := uint64(d.Info.Limits.MaxStorageBufferRange)
	if a := d.Info.Limits.MaxMemoryAllocationSize &^ 3; a != 0 && a < limit {
		limit = a
	}
	return limit
}

// featureFor returns the device feature a dtype's storage needs, if any.
func featureFor(d Dtype, f vk.Features) (string, bool) {
	switch d {
	case Int8, Uint8, Bool:
		return "storageBuffer8BitAccess", f.StorageBuffer8BitAccess
	case Int16, Uint16:
		return "storageBuffer16BitAccess", f.StorageBuffer16BitAccess
	case Float16:
		return "storageBuffer16BitAccess", f.StorageBuffer16BitAccess
	case Float64, Complex128:
		return "shaderFloat64", f.ShaderFloat64
	case Int64, Uint64:
		return "shaderInt64", f.ShaderInt64
	}
	return "", true
}

// New creates a zero-filled tensor of dtype and shape (row-major).
//
// An empty shape ([]int{} or nil) makes a 0-d tensor: a scalar of one
// element whose Shape stays empty, as in NumPy and DLPack.
//
// It fails with ErrInvalid, before allocating anything, for a bad dtype, a
// negative dimension, an element count or byte size that
// overflows, or a size over MaxBytes (the device's maxStorageBufferRange and
// maxMemoryAllocationSize), and with
// ErrUnsupported when the device was opened without the feature the dtype
// needs in storage buffers (8-bit and 16-bit storage, shaderFloat64,
// shaderInt64).
func New(o Owner, dtype Dtype, shape []int, opts ...Option) (*Tensor, error) {
	d, err := core.Enter(o)
	if err != nil {
		return nil, err
	}
	defer d.Exit()
	if !dtype.Valid() {
		return nil, core.Invalid("unknown dtype %v", dtype)
	}
	n, size, err := checkSize(dtype, shape)
	if err != nil {
		return nil, err
	}
	var op options
	for _, f := range opts {
		if f != nil {
			f(&op)
		}
	}
	if op.mem < Device || op.mem > Storage {
		return nil, core.Invalid("unknown memory kind %v", op.mem)
	}
	if op.exportable && op.mem != Device {
		return nil, core.Invalid("Exportable tensors are Device memory, not %v", op.mem)
	}
	if name, ok := featureFor(dtype, d.Features); !ok {
		return nil, core.Unsupported("%v tensors need the %s feature, which is not enabled on %s", dtype, name, d.Info.Name)
	}
	if limit := MaxBytes(d); size > limit {
		return nil, core.Invalid("tensor of %d bytes exceeds the device's buffer limit (%d bytes: maxStorageBufferRange %d, maxMemoryAllocationSize %d)",
			size, limit, d.Info.Limits.MaxStorageBufferRange, d.Info.Limits.MaxMemoryAllocationSize)
	}
	alloc := d.Alloc
	if op.exportable {
		alloc = d.AllocExportable
	}
	a, err := alloc(op.mem, core.TensorBufferSize(size), core.TensorUsage)
	if err != nil {
		return nil, err
	}
	t := &Tensor{dev: d, alloc: a, dtype: dtype, shape: append([]int(nil), shape...), n: n, kind: a.Kind, mapped: d.ReadsMapped(a)}
	if err := t.obj.Init(d, core.KindTensor, func() { d.Free(a) }, nil); err != nil {
		d.Free(a)
		return nil, err
	}
	t.obj.TrackUses(a)
	// The allocator hands out zeroed memory, whatever the kind: cleared on
	// the host when mapped, else by a GPU fill batched per block.
	return t, nil
}

// Adopt makes a tensor over an allocation vkflow did not carve from its own
// blocks (DLPack imports): the tensor owns a, and release runs after a is
// freed, once the tensor is closed and the GPU has finished every use. It
// is for vkflow's own packages. On error neither a nor release is touched.
func Adopt(d *core.Device, a *core.Allocation, dtype Dtype, shape []int, readOnly bool, release func()) (*Tensor, error) {
	if !dtype.Valid() {
		return nil, core.Invalid("unknown dtype %v", dtype)
	}
	n, size, err := checkSize(dtype, shape)
	if err != nil {
		return nil, err
	}
	if size > a.Size {
		return nil, core.Invalid("Adopt: %v%v does not fit %d bytes", dtype, shape, a.Size)
	}
	t := &Tensor{dev: d, alloc: a, dtype: dtype, shape: append([]int(nil), shape...), n: n, readOnly: readOnly, kind: a.Kind, mapped: d.ReadsMapped(a)}
	a.MarkWritten() // adopted memory holds the producer's data
	destroy := func() {
		d.Free(a)
		if release != nil {
			release()
		}
	}
	if err := t.obj.Init(d, core.KindTensor, destroy, nil); err != nil {
		return nil, err
	}
	t.obj.TrackUses(a) // a view shares the uses of its buffer's other tensors
	return t, nil
}

// FromSlice creates a Device tensor holding a copy of data. The shape
// defaults to [len(data)]; otherwise its product must equal len(data).
func FromSlice[T Elem](o Owner, data []T, shape ...int) (*Tensor, error) {
	if len(shape) == 0 {
		shape = []int{len(data)}
	}
	t, err := New(o, DtypeOf[T](), shape)
	if err != nil {
		return nil, err
	}
	if err := Write(t, data); err != nil {
		t.Close()
		return nil, err
	}
	return t, nil
}

// Write copies data into the tensor. len(data) must equal t.Len() and T
// must match the tensor's dtype.
func Write[T Elem](t *Tensor, data []T) error {
	if err := t.check(DtypeOf[T]()); err != nil {
		return err
	}
	defer t.release()
	if len(data) != t.n {
		return core.Invalid("Write: %d elements into a tensor of %d", len(data), t.n)
	}
	if t.readOnly {
		return core.Invalid("Write: the tensor is read-only")
	}
	src := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(data))), t.Bytes())
	return t.writeBytes(src)
}

func (t *Tensor) writeBytes(src []byte) error {
	a := t.alloc
	a.MarkWritten()
	switch {
	case t.dev.WritesMapped(a):
		copy(a.Bytes(), src)
		return t.dev.Flush(a)
	case a.Kind == Storage:
		return core.Invalid("Write: Storage tensors have no host access; copy from a Host tensor in a sequence")
	default:
		return t.dev.Upload(a, 0, src)
	}
}

// check validates t for host access as dtype want and, on success, holds a
// reference the caller releases (t.obj.Release).
func (t *Tensor) check(want Dtype) error {
	if err := t.acquire(); err != nil {
		return err
	}
	err := error(nil)
	if want != t.dtype {
		err = core.Invalid("dtype mismatch: tensor is %v, accessed as %v", t.dtype, want)
	} else if t.kind == Storage {
		err = core.Invalid("Storage tensors have no host access")
	}
	if err != nil {
		t.release()
	}
	return err
}

// view returns the tensor's elements as []T: aliasing mapped memory, or a
// copy downloaded through the staging ring.
func view[T Elem](t *Tensor) ([]T, error) {
	if err := t.check(DtypeOf[T]()); err != nil {
		return nil, err
	}
	defer t.release()
	a := t.alloc
	if t.mapped {
		if err := t.dev.Invalidate(a); err != nil {
			return nil, err
		}
		a.MarkWritten() // the slice aliases the memory: the host may write it
		return unsafe.Slice((*T)(a.Mapped), t.n), nil
	}
	out := make([]T, t.n)
	dst := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(out))), t.Bytes())
	if err := t.dev.Download(a, 0, dst); err != nil {
		return nil, err
	}
	return out, nil
}

// Typed accessors. Each returns the elements, aliasing mapped memory when
// Mapped() is true (valid until Close) and a copy otherwise. The dtype must
// match.
func (t *Tensor) Float16s() ([]Half, error)    { return view[Half](t) }
func (t *Tensor) Float32s() ([]float32, error) { return view[float32](t) }
func (t *Tensor) Float64s() ([]float64, error) { return view[float64](t) }
func (t *Tensor) Int8s() ([]int8, error)       { return view[int8](t) }
func (t *Tensor) Int16s() ([]int16, error)     { return view[int16](t) }
func (t *Tensor) Int32s() ([]int32, error)     { return view[int32](t) }
func (t *Tensor) Int64s() ([]int64, error)     { return view[int64](t) }
func (t *Tensor) Uint8s() ([]uint8, error)     { return view[uint8](t) }
func (t *Tensor) Uint16s() ([]uint16, error)   { return view[uint16](t) }
func (t *Tensor) Uint32s() ([]uint32, error)   { return view[uint32](t) }
func (t *Tensor) Uint64s() ([]uint64, error)   { return view[uint64](t) }
func (t *Tensor) Complex64s() ([]complex64, error) {
	return view[complex64](t)
}
func (t *Tensor) Complex128s() ([]complex128, error) {
	return view[complex128](t)
}

// Bools returns the elements as []bool. Values other than 0 and 1 written
// by the GPU are not valid Go bools; write only 0 or 1.
func (t *Tensor) Bools() ([]bool, error) { return view[bool](t) }

// Dtype returns the element type.
func (t *Tensor) Dtype() Dtype { return t.dtype }

// Shape returns a copy of the shape.
// A 0-d tensor returns an empty, non-nil slice.
func (t *Tensor) Shape() []int { return append(make([]int, 0, len(t.shape)), t.shape...) }

// Len returns the number of elements.
func (t *Tensor) Len() int { return t.n }

// Bytes returns the size of the data in bytes.
func (t *Tensor) Bytes() uint64 { return uint64(t.n) * uint64(t.dtype.Size()) }

// Memory returns where the tensor lives.
func (t *Tensor) Memory() Memory { return t.kind }

// Mapped reports whether host reads are zero-copy: the accessors alias the
// mapped memory (package doc: host access).
func (t *Tensor) Mapped() bool { return t.mapped }

// ReadOnly reports whether the tensor refuses writes (an import of
// read-only memory): Write, WriteBytes, and sequence operations that write
// it fail with ErrInvalid. The slices the accessors return may alias the
// memory; do not write through them.
func (t *Tensor) ReadOnly() bool { return t.readOnly }

// WriteBytes copies raw bytes in (len(src) must be Bytes()), whatever the
// dtype; for the C API and DLPack.
func (t *Tensor) WriteBytes(src []byte) error {
	if t == nil {
		return core.Closed("tensor")
	}
	if err := t.acquire(); err != nil {
		return err
	}
	defer t.release()
	if uint64(len(src)) != t.Bytes() {
		return core.Invalid("WriteBytes: %d bytes into a tensor of %d", len(src), t.Bytes())
	}
	if t.readOnly {
		return core.Invalid("WriteBytes: the tensor is read-only")
	}
	return t.writeBytes(src)
}

// ReadBytes copies the tensor's raw bytes into dst (len(dst) must be
// Bytes()); for the C API and DLPack. Like the accessors, it does not wait
// for GPU work.
func (t *Tensor) ReadBytes(dst []byte) error {
	if t == nil {
		return core.Closed("tensor")
	}
	if err := t.acquire(); err != nil {
		return err
	}
	defer t.release()
	if uint64(len(dst)) != t.Bytes() {
		return core.Invalid("ReadBytes: %d bytes from a tensor of %d", len(dst), t.Bytes())
	}
	a := t.alloc
	switch {
	case t.mapped:
		if err := t.dev.Invalidate(a); err != nil {
			return err
		}
		copy(dst, unsafe.Slice((*byte)(a.Mapped), len(dst)))
		return nil
	case a.Kind == Storage:
		return core.Invalid("ReadBytes: Storage tensors have no host access")
	default:
		return t.dev.Download(a, 0, dst)
	}
}

// Wait blocks until the GPU has finished every use of t submitted so far
// (sequences, graph runs and eager ops that read or write it, through t
// or through any other tensor over its buffer: a dlpack view), or ctx
// ends. Host reads after Wait see every write submitted before it. Submits
// still held back by the scheduler (waiting on a timeline nobody has
// signalled yet) are not submitted, so Wait does not cover them. The
// accessors do not wait by themselves; eager ops (package ops), the C API's
// reads and DLPack's host exports call Wait.
//
// If the last submit that used t failed after it was accepted (its
// vkQueueSubmit failed, or a timeline point it waited on failed: see
// package timeline on failures), Wait returns that error at once, and
// keeps returning it until a later use of t is submitted successfully:
// t's contents are not what that submit would have made them.
func (t *Tensor) Wait(ctx context.Context) error {
	if t == nil {
		return core.Closed("tensor")
	}
	if err := t.acquire(); err != nil {
		return err
	}
	defer t.release()
	if err := t.obj.Failure(); err != nil {
		return fmt.Errorf("tensor: %w", err)
	}
	if err := t.dev.Enter(); err != nil {
		return err
	}
	defer t.dev.Exit()
	return t.dev.WaitUses(ctx, &t.obj)
}

// Closed reports whether the tensor (or its Manager) is closed.
func (t *Tensor) Closed() bool { return t == nil || t.obj.Closed() }

func (t *Tensor) String() string {
	return fmt.Sprintf("Tensor(%v%v, %v)", t.dtype, t.shape, t.kind)
}

// Close releases the tensor. Its memory is freed once no sequence holds it
// and the GPU has finished every submitted use. Close is idempotent.
func (t *Tensor) Close() error {
	if t == nil {
		return nil
	}
	t.obj.Close()
	return nil
}

// Object returns the tensor's lifetime object, for vkflow's own packages.
func (t *Tensor) Object() *core.Object { return &t.obj }

// Allocation returns the tensor's buffer, for vkflow's own packages.
func (t *Tensor) Allocation() *core.Allocation { return t.alloc }
