package dlpack

import (
	"context"
	"encoding/binary"
	"math"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/internal/kernels"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/sequence"
	"github.com/vkflow/vkflow/tensor"
	"github.com/vkflow/vkflow/timeline"
)

var ctx = context.Background()

func TestLayout(t *testing.T) {
	want := map[string]uintptr{
		"DLTensor": 48, "DLTensor.data": 0, "DLTensor.device": 8, "DLTensor.ndim": 16, "DLTensor.dtype": 20,
		"DLTensor.shape": 24, "DLTensor.strides": 32, "DLTensor.byte_offset": 40,
		"DLManagedTensor": 64, "DLManagedTensor.manager_ctx": 48, "DLManagedTensor.deleter": 56,
		"DLManagedTensorVersioned": 80, "DLManagedTensorVersioned.manager_ctx": 8,
		"DLManagedTensorVersioned.deleter": 16, "DLManagedTensorVersioned.flags": 24,
		"DLManagedTensorVersioned.dl_tensor": 32,
		"DLDevice":                           8, "DLDataType": 4,
		"vkflow_vulkan_buffer": 72, "vkflow_vulkan_buffer.ready_semaphore": 40,
		"vkflow_vulkan_buffer.released_value": 64,
	}
	assert.Equal(t, want, cLayout())
	var vb VulkanBuffer
	assert.Equal(t, uintptr(72), unsafe.Sizeof(vb))
	assert.Equal(t, uintptr(40), unsafe.Offsetof(vb.ReadySemaphore))
	assert.Equal(t, uintptr(64), unsafe.Offsetof(vb.ReleasedValue))
}

func TestDataTypes(t *testing.T) {
	tests := []struct {
		d    tensor.Dtype
		want DataType
	}{
		{tensor.Float16, DataType{2, 16, 1}}, {tensor.Float32, DataType{2, 32, 1}}, {tensor.Float64, DataType{2, 64, 1}},
		{tensor.Int8, DataType{0, 8, 1}}, {tensor.Int16, DataType{0, 16, 1}}, {tensor.Int32, DataType{0, 32, 1}},
		{tensor.Int64, DataType{0, 64, 1}}, {tensor.Uint8, DataType{1, 8, 1}}, {tensor.Uint16, DataType{1, 16, 1}},
		{tensor.Uint32, DataType{1, 32, 1}}, {tensor.Uint64, DataType{1, 64, 1}}, {tensor.Bool, DataType{6, 8, 1}},
		{tensor.Complex64, DataType{5, 64, 1}}, {tensor.Complex128, DataType{5, 128, 1}},
	}
	require.Len(t, tests, len(tensor.Dtypes())+len(tensor.ComplexDtypes()))
	for _, tt := range tests {
		got, ok := DataTypeOf(tt.d)
		require.True(t, ok)
		assert.Equal(t, tt.want, got, tt.d.String())
		back, ok := DtypeOf(got)
		assert.True(t, ok)
		assert.Equal(t, tt.d, back)
	}
	_, ok := DtypeOf(DataType{2, 32, 4})
	assert.False(t, ok, "vector lanes")
	_, ok = DtypeOf(DataType{4, 16, 1})
	assert.False(t, ok, "bfloat16")
	_, ok = DtypeOf(DataType{5, 32, 1})
	assert.False(t, ok, "complex32")
}

func bytesOf[T any](s []T) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(s[0])))
}

func TestExportCPU(t *testing.T) {
	m, _ := testutil.Manager(t)
	tests := []struct {
		name      string
		make      func() (*tensor.Tensor, error)
		shape     []int64
		strides   []int64
		dt        DataType
		versioned bool
	}{
		{"float32 2x3 legacy", func() (*tensor.Tensor, error) {
			return tensor.FromSlice(m, []float32{1, 2, 3, 4, 5, 6}, 2, 3)
		}, []int64{2, 3}, []int64{3, 1}, DataType{2, 32, 1}, false},
		{"int32 2x2x2 versioned", func() (*tensor.Tensor, error) {
			return tensor.FromSlice(m, []int32{1, -2, 3, -4, 5, -6, 7, -8}, 2, 2, 2)
		}, []int64{2, 2, 2}, []int64{4, 2, 1}, DataType{0, 32, 1}, true},
		{"float16 legacy", func() (*tensor.Tensor, error) {
			return tensor.FromSlice(m, []tensor.Half{tensor.HalfFrom(1.5), tensor.HalfFrom(-2)})
		}, []int64{2}, []int64{1}, DataType{2, 16, 1}, false},
		{"uint8 versioned", func() (*tensor.Tensor, error) {
			return tensor.FromSlice(m, []uint8{9, 8, 7})
		}, []int64{3}, []int64{1}, DataType{1, 8, 1}, true},
		{"bool versioned", func() (*tensor.Tensor, error) {
			return tensor.FromSlice(m, []bool{true, false, true})
		}, []int64{3}, []int64{1}, DataType{6, 8, 1}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			live := Live() // exports held elsewhere in the process (another test's) are not this test's
			ten, err := tt.make()
			require.NoError(t, err)
			defer ten.Close()
			require.True(t, ten.Mapped(), "lavapipe maps Device memory")
			opts := Options{}
			if tt.versioned {
				opts.MaxVersion = &Version{1, 0}
			}
			mt, err := Export(ctx, ten, opts)
			require.NoError(t, err)
			in := mt.Describe()
			if tt.versioned {
				assert.Equal(t, Version{1, 0}, in.Version)
				assert.Zero(t, in.Flags)
			}
			assert.Equal(t, Device{CPU, 0}, in.Device)
			assert.Equal(t, tt.dt, in.DataType)
			assert.Equal(t, tt.shape, in.Shape)
			assert.Equal(t, tt.strides, in.Strides)
			assert.Zero(t, in.ByteOffset)
			assert.Equal(t, ten.Allocation().Mapped, in.Data, "zero-copy")
			want := make([]byte, ten.Bytes())
			require.NoError(t, ten.ReadBytes(want))
			assert.Equal(t, want, unsafe.Slice((*byte)(in.Data), len(want)))
			assert.Equal(t, live+1, Live())
			mt.Delete()
			mt.Delete() // a second deleter call is ignored
			assert.Equal(t, live, Live())
		})
	}
}

// gpuWrite records out = a*b on a fresh sequence and submits it without
// waiting; a is large enough that the dispatch is still running when the
// caller looks.
func gpuWrite(t *testing.T, m *vkflow.Manager, n int, mem tensor.Memory) (out *tensor.Tensor, want float32, p sequence.Pending) {
	a, err := tensor.New(m, tensor.Float32, []int{n})
	require.NoError(t, err)
	b, err := tensor.New(m, tensor.Float32, []int{n})
	require.NoError(t, err)
	out, err = tensor.New(m, tensor.Float32, []int{n}, tensor.In(mem))
	require.NoError(t, err)
	s, err := sequence.New(m, 0)
	require.NoError(t, err)
	al, err := kernels.Multiply(m, a, b, out)
	require.NoError(t, err)
	p = s.Fill(a, float32(3)).Fill(b, float32(7)).Dispatch(al).EvalAsync()
	require.NoError(t, p.Err())
	for _, c := range []interface{ Close() error }{s, al, a, b} {
		require.NoError(t, c.Close())
	}
	return out, 21, p
}

func TestExportCPUWaitsForPendingWrites(t *testing.T) {
	m, _ := testutil.Manager(t)
	out, want, p := gpuWrite(t, m, 1<<22, tensor.Device)
	defer out.Close()
	mt, err := Export(ctx, out, Options{})
	require.NoError(t, err)
	defer mt.Delete()
	assert.True(t, p.Done(), "Export returned before the write completed")
	got := unsafe.Slice((*float32)(mt.Describe().Data), out.Len())
	assert.Equal(t, want, got[0])
	assert.Equal(t, want, got[len(got)-1])

	// A timed-out wait returns an error, takes no reference and frees
	// nothing the GPU uses. The write may finish before Export looks (then
	// the export succeeds and is deleted); a few tries must see a timeout.
	live := Live()
	timedOut := false
	for try := 0; try < 10 && !timedOut; try++ {
		out2, _, p2 := gpuWrite(t, m, 1<<22, tensor.Device)
		short, cancel := context.WithTimeout(ctx, time.Nanosecond)
		mt2, err := Export(short, out2, Options{})
		cancel()
		if err == nil {
			mt2.Delete()
		} else {
			assert.ErrorIs(t, err, context.DeadlineExceeded)
			timedOut = true
		}
		assert.Equal(t, live, Live(), "a timed-out export holds nothing")
		require.NoError(t, p2.Wait(ctx))
		require.NoError(t, out2.Close())
	}
	assert.True(t, timedOut, "no Export timed out while the GPU was writing")
}

func TestExportCopies(t *testing.T) {
	m, _ := testutil.Manager(t)
	out, want, _ := gpuWrite(t, m, 1024, tensor.Storage)
	defer out.Close()
	assert.Equal(t, Device{Vulkan, int32(m.Device().Index)}, naturalDevice(t, out))

	cpu := &Device{CPU, 0}
	_, err := Export(ctx, out, Options{Device: cpu, Copy: CopyNever})
	assert.ErrorIs(t, err, vkflow.ErrUnsupported)
	for _, mode := range []CopyMode{CopyIfNeeded, CopyAlways} {
		mt, err := Export(ctx, out, Options{Device: cpu, Copy: mode, MaxVersion: &Version{1, 3}})
		require.NoError(t, err)
		in := mt.Describe()
		assert.Equal(t, FlagIsCopied, in.Flags)
		assert.Equal(t, Version{1, 3}, in.Version)
		assert.Zero(t, uintptr(in.Data)%256, "copies are 256-byte aligned")
		got := unsafe.Slice((*float32)(in.Data), out.Len())
		assert.Equal(t, want, got[0])
		assert.Equal(t, want, got[1023])
		mt.Delete()
	}
	// CopyAlways to Vulkan copies on the GPU into a buffer of the export's own.
	idx := int32(m.Device().Index)
	mt, err := Export(ctx, out, Options{Device: &Device{Vulkan, idx}, Copy: CopyAlways, MaxVersion: &Version{1, 0}})
	require.NoError(t, err)
	require.NotNil(t, mt.Vulkan())
	assert.NotEqual(t, out.Allocation().Buffer, mt.Vulkan().Buffer)
	assert.Equal(t, FlagIsCopied, mt.Describe().Flags)
	back, copied, err := Import(ctx, m, mt)
	require.NoError(t, err)
	assert.False(t, copied)
	mt2, err := Export(ctx, back, Options{Device: cpu})
	require.NoError(t, err)
	assert.Equal(t, want, unsafe.Slice((*float32)(mt2.Describe().Data), 1024)[1023])
	mt2.Delete()
	require.NoError(t, back.Close())

	// CopyAlways on mapped memory copies too.
	h, err := tensor.FromSlice(m, []float32{1, 2})
	require.NoError(t, err)
	defer h.Close()
	mt, err = Export(ctx, h, Options{Copy: CopyAlways, MaxVersion: &Version{1, 1}})
	require.NoError(t, err)
	in := mt.Describe()
	assert.NotEqual(t, h.Allocation().Mapped, in.Data)
	assert.Equal(t, FlagIsCopied, in.Flags)
	assert.Equal(t, Version{1, 1}, in.Version)
	assert.Equal(t, []float32{1, 2}, unsafe.Slice((*float32)(in.Data), 2))
	mt.Delete()
}

func naturalDevice(t *testing.T, ten *tensor.Tensor) Device {
	mt, err := Export(ctx, ten, Options{})
	require.NoError(t, err)
	defer mt.Delete()
	return mt.Describe().Device
}

func TestExportVulkan(t *testing.T) {
	m, _ := testutil.Manager(t)
	out, want, p := gpuWrite(t, m, 1<<20, tensor.Storage)
	defer out.Close()
	mt, err := Export(ctx, out, Options{MaxVersion: &Version{1, 3}})
	require.NoError(t, err)
	vb := mt.Vulkan()
	require.NotNil(t, vb)
	in := mt.Describe()
	assert.Equal(t, Device{Vulkan, int32(m.Device().Index)}, in.Device)
	assert.Equal(t, unsafe.Pointer(vb), in.Data)
	d := m.Runtime()
	assert.Equal(t, d.VK.Handle(), vb.Device)
	assert.Equal(t, out.Allocation().Buffer, vb.Buffer)
	assert.Equal(t, out.Allocation().Memory(), vb.Memory)
	assert.Equal(t, out.Bytes(), vb.Size)
	assert.NotZero(t, vb.ReadySemaphore)
	// The ready point is the pending write's completion.
	assert.Equal(t, p.Value(), vb.ReadyValue)
	require.NoError(t, d.WaitSemaphore(ctx, vb.ReadySemaphore, vb.ReadyValue))
	assert.True(t, p.Done())
	got, err := tensor.New(m, tensor.Float32, []int{out.Len()}, tensor.In(tensor.Host))
	require.NoError(t, err)
	defer got.Close()
	s, err := sequence.New(m, 0)
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.Copy(out, got).Eval(ctx))
	vals, err := got.Float32s()
	require.NoError(t, err)
	assert.Equal(t, want, vals[len(vals)-1])
	mt.Delete()

	// The consumer's own point (S0 style) signals once the tensor is ready.
	out2, _, p2 := gpuWrite(t, m, 1<<20, tensor.Storage)
	defer out2.Close()
	tl, err := timeline.New(m, 0)
	require.NoError(t, err)
	defer tl.Close()
	mt, err = Export(ctx, out2, Options{Consumer: timeline.Point{Timeline: tl, Value: 5}})
	require.NoError(t, err)
	assert.Equal(t, tl.Semaphore(), mt.Vulkan().ReadySemaphore)
	assert.Equal(t, uint64(5), mt.Vulkan().ReadyValue)
	require.NoError(t, tl.Wait(ctx, 5))
	assert.True(t, p2.Done(), "the consumer point signalled before the write completed")
	mt.Delete()
}

func TestReleasedPoint(t *testing.T) {
	m, _ := testutil.Manager(t)
	ten, err := tensor.New(m, tensor.Float32, []int{64}, tensor.In(tensor.Storage))
	require.NoError(t, err)
	before := m.MemStats().Allocations
	tl, err := timeline.New(m, 0)
	require.NoError(t, err)
	defer tl.Close()
	mt, err := Export(ctx, ten, Options{})
	require.NoError(t, err)
	require.NoError(t, ten.Close())
	mt.SetReleased(tl.Semaphore(), 3)
	mt.Delete()
	time.Sleep(20 * time.Millisecond)
	assert.Equal(t, before, m.MemStats().Allocations, "freed before the consumer's released point")
	// The consumer's GPU work signals the point (a host signal would wake
	// the waiter through a path the validation layer mistracks).
	s, err := sequence.New(m, 0)
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.Submit(ctx, sequence.Signal(tl, 3)).Wait(ctx))
	assert.Eventually(t, func() bool { return m.MemStats().Allocations == before-1 }, 5*time.Second, time.Millisecond)
}

func TestExportOutlivesManager(t *testing.T) {
	live := Live()
	m, _ := testutil.Manager(t)
	ten, err := tensor.FromSlice(m, []float32{4, 5, 6})
	require.NoError(t, err)
	mt, err := Export(ctx, ten, Options{})
	require.NoError(t, err)
	vk, err := Export(ctx, ten, Options{Device: &Device{Vulkan, int32(m.Device().Index)}})
	require.NoError(t, err)
	require.NoError(t, ten.Close())
	require.NoError(t, m.Close())
	// The memory is still valid: the device waits for the deleters.
	assert.Equal(t, []float32{4, 5, 6}, unsafe.Slice((*float32)(mt.Describe().Data), 3))
	mt.Delete()
	assert.Equal(t, []float32{4, 5, 6}, unsafe.Slice((*float32)(ten.Allocation().Mapped), 3))
	vk.Delete() // the last one destroys the device; the layer reports leaks
	assert.Equal(t, live, Live())
}

func TestExportBadInput(t *testing.T) {
	live := Live()
	m, _ := testutil.Manager(t)
	f, err := tensor.FromSlice(m, []float32{1})
	require.NoError(t, err)
	defer f.Close()
	b, err := tensor.FromSlice(m, []bool{true})
	require.NoError(t, err)
	defer b.Close()
	st, err := tensor.New(m, tensor.Float32, []int{4}, tensor.In(tensor.Storage))
	require.NoError(t, err)
	defer st.Close()
	closed, err := tensor.FromSlice(m, []float32{1})
	require.NoError(t, err)
	require.NoError(t, closed.Close())
	tl, err := timeline.New(m, 0)
	require.NoError(t, err)
	defer tl.Close()
	closedTL, err := timeline.New(m, 0)
	require.NoError(t, err)
	require.NoError(t, closedTL.Close())
	m2, _ := testutil.Manager(t)
	otherTL, err := timeline.New(m2, 0)
	require.NoError(t, err)
	defer otherTL.Close()
	idx := int32(m.Device().Index)
	tests := []struct {
		name string
		t    *tensor.Tensor
		opts Options
		want error
	}{
		{"nil tensor", nil, Options{}, vkflow.ErrInvalid},
		{"closed tensor", closed, Options{}, vkflow.ErrClosed},
		{"bool to a legacy consumer", b, Options{}, vkflow.ErrUnsupported},
		{"copy never when a copy is needed", st, Options{Device: &Device{CPU, 0}, Copy: CopyNever}, vkflow.ErrUnsupported},
		{"dl_device CUDA", f, Options{Device: &Device{2, 0}}, vkflow.ErrUnsupported},
		{"dl_device CPU 1", f, Options{Device: &Device{CPU, 1}}, vkflow.ErrUnsupported},
		{"dl_device another Vulkan device", f, Options{Device: &Device{Vulkan, idx + 1}}, vkflow.ErrUnsupported},
		{"unknown copy mode", f, Options{Copy: 7}, vkflow.ErrInvalid},
		{"consumer point on a CPU export", f, Options{Consumer: timeline.Point{Timeline: tl, Value: 1}}, vkflow.ErrInvalid},
		{"closed consumer timeline", st, Options{Consumer: timeline.Point{Timeline: closedTL, Value: 1}}, vkflow.ErrClosed},
		{"consumer timeline of another Manager", st, Options{Consumer: timeline.Point{Timeline: otherTL, Value: 1}}, vkflow.ErrInvalid},
		{"consumer value not increasing", st, Options{Consumer: timeline.Point{Timeline: tl, Value: 0}}, vkflow.ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Export(ctx, tt.t, tt.opts)
			assert.ErrorIs(t, err, tt.want)
			assert.Equal(t, live, Live(), "a refused export holds nothing")
		})
	}
	// bool goes out as kDLBool to a versioned consumer.
	mt, err := Export(ctx, b, Options{MaxVersion: &Version{1, 0}})
	require.NoError(t, err)
	assert.Equal(t, DataType{6, 8, 1}, mt.Describe().DataType)
	mt.Delete()
}

func f32bytes(v ...float32) []byte {
	out := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(x))
	}
	return out
}

func TestImportCPU(t *testing.T) {
	m, _ := testutil.Manager(t)
	d := m.Runtime()
	require.True(t, d.HostImport, "lavapipe has VK_EXT_external_memory_host")

	// Page-aligned, compact: zero-copy, and GPU writes land in the
	// producer's memory.
	vals := make([]float32, 1024)
	for i := range vals {
		vals[i] = float32(i)
	}
	mt, data := foreign{dev: Device{CPU, 0}, dt: DataType{2, 32, 1}, ndim: 1, shape: []int64{1024}, strides: []int64{1}, data: f32bytes(vals...)}.build()
	deletes := foreignDeletes()
	ten, copied, err := Import(ctx, m, mt)
	require.NoError(t, err)
	assert.False(t, copied)
	assert.Equal(t, data, ten.Allocation().Mapped)
	two, err := tensor.FromSlice(m, []float32{2})
	require.NoError(t, err)
	defer two.Close()
	s, err := sequence.New(m, 0)
	require.NoError(t, err)
	defer s.Close()
	al, err := kernels.Saxpy(m, ten, ten) // y = 2*y + y = 3y
	require.NoError(t, err)
	defer al.Close()
	require.NoError(t, s.Dispatch(al, float32(2)).Eval(ctx))
	got := unsafe.Slice((*float32)(data), 1024)
	assert.Equal(t, float32(3*1023), got[1023])
	assert.Equal(t, deletes, foreignDeletes(), "deleter ran while the tensor is alive")
	require.NoError(t, s.Clear())
	require.NoError(t, al.Close())
	require.NoError(t, ten.Close())
	assert.Equal(t, deletes+1, foreignDeletes(), "deleter runs exactly once on Close")
	require.NoError(t, ten.Close())
	assert.Equal(t, deletes+1, foreignDeletes())

	tests := []struct {
		name   string
		f      foreign
		copied bool
		want   []float32
	}{
		{"unaligned offset copies", foreign{dev: Device{CPU, 0}, dt: DataType{2, 32, 1}, ndim: 1, shape: []int64{3}, strides: []int64{1}, data: f32bytes(1, 2, 3), dataOffset: 4}, true, []float32{1, 2, 3}},
		{"64-byte offset, odd size: imports whole pages", foreign{dev: Device{CPU, 0}, dt: DataType{2, 32, 1}, ndim: 1, shape: []int64{3}, data: f32bytes(1, 2, 3), dataOffset: 64}, false, []float32{1, 2, 3}},
		{"byte_offset", foreign{dev: Device{CPU, 0}, dt: DataType{2, 32, 1}, ndim: 1, shape: []int64{2}, strides: []int64{1}, data: f32bytes(9, 1, 2), byteOffset: 4}, true, []float32{1, 2}},
		{"non-compact strides copy", foreign{dev: Device{CPU, 0}, dt: DataType{2, 32, 1}, ndim: 2, shape: []int64{2, 2}, strides: []int64{1, 2}, data: f32bytes(1, 2, 3, 4)}, true, []float32{1, 3, 2, 4}},
		{"every other element", foreign{dev: Device{CPU, 0}, dt: DataType{2, 32, 1}, ndim: 1, shape: []int64{3}, strides: []int64{2}, data: f32bytes(1, 0, 2, 0, 3)}, true, []float32{1, 2, 3}},
		{"unit dimension with any stride is compact", foreign{dev: Device{CPU, 0}, dt: DataType{2, 32, 1}, ndim: 2, shape: []int64{1, 2}, strides: []int64{99, 1}, data: f32bytes(5, 6)}, false, []float32{5, 6}},
		{"scalar", foreign{versioned: true, major: 1, dev: Device{CPU, 0}, dt: DataType{2, 32, 1}, ndim: 0, data: f32bytes(7)}, false, []float32{7}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mt, _ := tt.f.build()
			before := foreignDeletes()
			ten, copied, err := Import(ctx, m, mt)
			require.NoError(t, err)
			defer ten.Close()
			assert.Equal(t, tt.copied, copied)
			if copied {
				assert.Equal(t, before+1, foreignDeletes(), "a copy releases the producer at once")
			}
			got, err := ten.Float32s()
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestImportReadOnly(t *testing.T) {
	m, _ := testutil.Manager(t)
	mt, _ := foreign{versioned: true, major: 1, minor: 3, flags: FlagReadOnly, dev: Device{CPU, 0}, dt: DataType{2, 32, 1}, ndim: 1, shape: []int64{1024}, data: f32bytes(make([]float32, 1024)...)}.build()
	ten, copied, err := Import(ctx, m, mt)
	require.NoError(t, err)
	defer ten.Close()
	require.False(t, copied)
	assert.True(t, ten.ReadOnly())
	assert.ErrorIs(t, tensor.Write(ten, make([]float32, 1024)), vkflow.ErrInvalid)
	s, err := sequence.New(m, 0)
	require.NoError(t, err)
	defer s.Close()
	assert.ErrorIs(t, s.Fill(ten, float32(0)).Err(), vkflow.ErrInvalid)
	al, err := kernels.Saxpy(m, ten, ten)
	require.NoError(t, err)
	defer al.Close()
	s2, err := sequence.New(m, 0)
	require.NoError(t, err)
	defer s2.Close()
	assert.ErrorIs(t, s2.Dispatch(al, float32(1)).Err(), vkflow.ErrInvalid)
	// Re-exported: versioned says READ_ONLY, legacy gets a copy.
	out, err := Export(ctx, ten, Options{MaxVersion: &Version{1, 3}})
	require.NoError(t, err)
	assert.Equal(t, FlagReadOnly, out.Describe().Flags)
	out.Delete()
	out, err = Export(ctx, ten, Options{})
	require.NoError(t, err)
	assert.NotEqual(t, ten.Allocation().Mapped, out.Describe().Data)
	out.Delete()
	_, err = Export(ctx, ten, Options{Copy: CopyNever})
	assert.ErrorIs(t, err, vkflow.ErrUnsupported)
}

func TestRoundTrip(t *testing.T) {
	live := Live()
	m, _ := testutil.Manager(t)
	idx := int32(m.Device().Index)
	src, err := tensor.FromSlice(m, []float32{1, 2, 3, 4, 5, 6}, 3, 2)
	require.NoError(t, err)
	defer src.Close()
	for _, dev := range []Device{{CPU, 0}, {Vulkan, idx}} {
		for _, v := range []*Version{nil, {1, 3}} {
			mt, err := Export(ctx, src, Options{Device: &dev, MaxVersion: v})
			require.NoError(t, err)
			back, copied, err := Import(ctx, m, mt)
			require.NoError(t, err, "%v", dev)
			if dev.Type == Vulkan {
				assert.False(t, copied)
				assert.Equal(t, src.Allocation().Buffer, back.Allocation().Buffer, "a view")
				assert.Equal(t, src.Allocation().Memory(), back.Allocation().Memory())
				assert.Equal(t, src.Allocation().MemoryOffset(), back.Allocation().MemoryOffset())
			}
			assert.Equal(t, []int{3, 2}, back.Shape())
			got, err := back.Float32s()
			require.NoError(t, err)
			assert.Equal(t, []float32{1, 2, 3, 4, 5, 6}, got)
			require.NoError(t, back.Close())
		}
	}
	assert.Equal(t, live, Live(), "closing the imports ran the exports' deleters")
}

func TestImportBadInput(t *testing.T) {
	m, _ := testutil.Manager(t)
	f32 := DataType{2, 32, 1}
	cpu := Device{CPU, 0}
	other := make([]byte, 72) // a VulkanBuffer of some other device
	tests := []struct {
		name string
		f    foreign
		want error
	}{
		{"major version 2", foreign{versioned: true, major: 2, dev: cpu, dt: f32, ndim: 1, shape: []int64{1}, data: f32bytes(1)}, vkflow.ErrUnsupported},
		{"major version 0 in a versioned struct", foreign{versioned: true, major: 0, dev: cpu, dt: f32, ndim: 1, shape: []int64{1}, data: f32bytes(1)}, vkflow.ErrUnsupported},
		{"CUDA device", foreign{dev: Device{2, 0}, dt: f32, ndim: 1, shape: []int64{1}, data: f32bytes(1)}, vkflow.ErrUnsupported},
		{"ExtDev device", foreign{dev: Device{12, 0}, dt: f32, ndim: 1, shape: []int64{1}, data: f32bytes(1)}, vkflow.ErrUnsupported},
		{"Vulkan of another device", foreign{dev: Device{Vulkan, 0}, dt: f32, ndim: 1, shape: []int64{1}, data: other}, vkflow.ErrUnsupported},
		{"negative shape", foreign{dev: cpu, dt: f32, ndim: 2, shape: []int64{2, -1}, data: f32bytes(1)}, vkflow.ErrInvalid},
		{"overflowing shape", foreign{dev: cpu, dt: f32, ndim: 3, shape: []int64{1 << 40, 1 << 40, 1 << 40}, data: f32bytes(1)}, vkflow.ErrInvalid},
		{"bytes overflow (1<<62+1 float32)", foreign{dev: cpu, dt: f32, ndim: 1, shape: []int64{1<<62 + 1}, data: f32bytes(1)}, vkflow.ErrInvalid},
		{"bytes wrap to zero (1<<62 float32)", foreign{dev: cpu, dt: f32, ndim: 2, shape: []int64{1 << 31, 1 << 31}, data: f32bytes(1)}, vkflow.ErrInvalid},
		{"too large for a buffer", foreign{dev: cpu, dt: f32, ndim: 1, shape: []int64{1 << 40}, data: f32bytes(1)}, vkflow.ErrInvalid},
		{"negative ndim", foreign{dev: cpu, dt: f32, ndim: -1}, vkflow.ErrInvalid},
		{"ndim 40", foreign{dev: cpu, dt: f32, ndim: 40}, vkflow.ErrInvalid},
		{"vector lanes", foreign{dev: cpu, dt: DataType{2, 32, 4}, ndim: 1, shape: []int64{1}, data: f32bytes(1, 2, 3, 4)}, vkflow.ErrUnsupported},
		{"bfloat16", foreign{dev: cpu, dt: DataType{4, 16, 1}, ndim: 1, shape: []int64{1}, data: f32bytes(1)}, vkflow.ErrUnsupported},
		{"NULL data", foreign{dev: cpu, dt: f32, ndim: 1, shape: []int64{4}, nullData: true}, vkflow.ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mt, _ := tt.f.build()
			before := foreignDeletes()
			ten, _, err := Import(ctx, m, mt)
			assert.ErrorIs(t, err, tt.want)
			assert.Nil(t, ten)
			assert.Equal(t, before+1, foreignDeletes(), "Import calls the deleter on failure")
		})
	}
	_, _, err := Import(ctx, m, Managed{})
	assert.ErrorIs(t, err, vkflow.ErrInvalid, "nil pointer")

	// kDLVulkan of this device, but laid out so that no view can serve it.
	st, err := tensor.New(m, tensor.Float32, []int{8}, tensor.In(tensor.Storage))
	require.NoError(t, err)
	defer st.Close()
	ex, err := Export(ctx, st, Options{})
	require.NoError(t, err)
	vb := unsafe.Slice((*byte)(unsafe.Pointer(ex.Vulkan())), unsafe.Sizeof(VulkanBuffer{}))
	vkDev := Device{Vulkan, int32(m.Device().Index)}
	views := []struct {
		name string
		f    foreign
		want error
	}{
		{"Vulkan with a byte_offset", foreign{dev: vkDev, dt: f32, ndim: 1, shape: []int64{4}, byteOffset: 16, data: vb}, vkflow.ErrUnsupported},
		{"Vulkan strided", foreign{dev: vkDev, dt: f32, ndim: 1, shape: []int64{4}, strides: []int64{2}, data: vb}, vkflow.ErrUnsupported},
		{"Vulkan larger than its buffer", foreign{dev: vkDev, dt: f32, ndim: 1, shape: []int64{9}, data: vb}, vkflow.ErrInvalid},
		{"Vulkan of another device index", foreign{dev: Device{Vulkan, vkDev.ID + 1}, dt: f32, ndim: 1, shape: []int64{8}, data: vb}, vkflow.ErrUnsupported},
	}
	for _, tt := range views {
		t.Run(tt.name, func(t *testing.T) {
			mt, _ := tt.f.build()
			before := foreignDeletes()
			_, _, err := Import(ctx, m, mt)
			assert.ErrorIs(t, err, tt.want)
			assert.Equal(t, before+1, foreignDeletes())
		})
	}
	// The same bytes, compact and in bounds, are a view.
	mt, _ := foreign{dev: vkDev, dt: f32, ndim: 1, shape: []int64{8}, data: vb}.build()
	view, copied, err := Import(ctx, m, mt)
	require.NoError(t, err)
	assert.False(t, copied)
	assert.Equal(t, st.Allocation().Buffer, view.Allocation().Buffer)
	require.NoError(t, view.Close())
	ex.Delete()

	// A closed Manager still takes ownership.
	m2, _ := testutil.Manager(t)
	require.NoError(t, m2.Close())
	mt, _ = foreign{dev: cpu, dt: f32, ndim: 1, shape: []int64{1}, data: f32bytes(1)}.build()
	before := foreignDeletes()
	_, _, err = Import(ctx, m2, mt)
	assert.ErrorIs(t, err, vkflow.ErrClosed)
	assert.Equal(t, before+1, foreignDeletes())
}
