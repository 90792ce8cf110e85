package tensor_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/tensor"
	"github.com/vkflow/vkflow/vk"
)

func TestDtypeSizes(t *testing.T) {
	want := map[tensor.Dtype]int{
		tensor.Float16: 2, tensor.Float32: 4, tensor.Float64: 8,
		tensor.Int8: 1, tensor.Int16: 2, tensor.Int32: 4, tensor.Int64: 8,
		tensor.Uint8: 1, tensor.Uint16: 2, tensor.Uint32: 4, tensor.Uint64: 8, tensor.Bool: 1,
	}
	require.Len(t, tensor.Dtypes(), len(want))
	for _, d := range tensor.Dtypes() {
		assert.Equal(t, want[d], d.Size(), d.String())
	}
	assert.Zero(t, tensor.Dtype(0).Size())
	assert.Equal(t, "Dtype(99)", tensor.Dtype(99).String())
}

func TestHalfConversion(t *testing.T) {
	tests := []struct {
		f    float32
		bits tensor.Half
	}{
		{0, 0x0000}, {1, 0x3c00}, {-2, 0xc000}, {0.5, 0x3800}, {65504, 0x7bff},
		{float32(math.Inf(-1)), 0xfc00},
		{5.960464477539063e-08, 0x0001}, // smallest subnormal
		{6.103515625e-05, 0x0400},       // smallest normal
		{1.0009765625, 0x3c01}, {3.140625, 0x4248},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.bits, tensor.HalfFrom(tt.f), "HalfFrom(%v)", tt.f)
		assert.Equal(t, tt.f, tt.bits.Float32(), "Float32(%#x)", uint16(tt.bits))
	}
	assert.Equal(t, tensor.Half(0x7c00), tensor.HalfFrom(1e6), "overflow rounds to +Inf")
	assert.Equal(t, tensor.Half(0x3c00), tensor.HalfFrom(1.00048828125), "ties round to even")
	assert.True(t, math.IsNaN(float64(tensor.HalfFrom(float32(math.NaN())).Float32())))
	// Every finite half round-trips.
	for b := 0; b < 0x10000; b++ {
		h := tensor.Half(b)
		if b&0x7c00 == 0x7c00 {
			continue
		}
		require.Equal(t, h, tensor.HalfFrom(h.Float32()), "%#x", b)
	}
}

func TestFromSliceAllDtypes(t *testing.T) {
	m, _ := testutil.Manager(t)
	check := func(t *testing.T, tt *tensor.Tensor, err error, dtype tensor.Dtype) {
		require.NoError(t, err)
		assert.Equal(t, dtype, tt.Dtype())
		assert.Equal(t, []int{2, 3}, tt.Shape())
		assert.Equal(t, 6, tt.Len())
		assert.Equal(t, uint64(6*dtype.Size()), tt.Bytes())
		assert.Equal(t, tensor.Device, tt.Memory())
	}
	t.Run("float16", func(t *testing.T) {
		in := []tensor.Half{tensor.HalfFrom(1), tensor.HalfFrom(2), 3, 4, 5, 6}
		tt, err := tensor.FromSlice(m, in, 2, 3)
		check(t, tt, err, tensor.Float16)
		got, err := tt.Float16s()
		require.NoError(t, err)
		assert.Equal(t, in, got)
	})
	t.Run("float32", func(t *testing.T) {
		in := []float32{1, 2, 3, 4, 5, 6.5}
		tt, err := tensor.FromSlice(m, in, 2, 3)
		check(t, tt, err, tensor.Float32)
		got, err := tt.Float32s()
		require.NoError(t, err)
		assert.Equal(t, in, got)
	})
	t.Run("float64", func(t *testing.T) {
		in := []float64{1, 2, 3, 4, 5, math.Pi}
		tt, err := tensor.FromSlice(m, in, 2, 3)
		check(t, tt, err, tensor.Float64)
		got, err := tt.Float64s()
		require.NoError(t, err)
		assert.Equal(t, in, got)
	})
	t.Run("int8", func(t *testing.T) {
		in := []int8{-1, 2, -3, 4, -128, 127}
		tt, err := tensor.FromSlice(m, in, 2, 3)
		check(t, tt, err, tensor.Int8)
		got, err := tt.Int8s()
		require.NoError(t, err)
		assert.Equal(t, in, got)
	})
	t.Run("int16", func(t *testing.T) {
		in := []int16{-1, 2, -3, 4, -32768, 32767}
		tt, err := tensor.FromSlice(m, in, 2, 3)
		check(t, tt, err, tensor.Int16)
		got, err := tt.Int16s()
		require.NoError(t, err)
		assert.Equal(t, in, got)
	})
	t.Run("int32", func(t *testing.T) {
		in := []int32{-1, 2, -3, 4, math.MinInt32, math.MaxInt32}
		tt, err := tensor.FromSlice(m, in, 2, 3)
		check(t, tt, err, tensor.Int32)
		got, err := tt.Int32s()
		require.NoError(t, err)
		assert.Equal(t, in, got)
	})
	t.Run("int64", func(t *testing.T) {
		in := []int64{-1, 2, -3, 4, math.MinInt64, math.MaxInt64}
		tt, err := tensor.FromSlice(m, in, 2, 3)
		check(t, tt, err, tensor.Int64)
		got, err := tt.Int64s()
		require.NoError(t, err)
		assert.Equal(t, in, got)
	})
	t.Run("uint8", func(t *testing.T) {
		in := []uint8{0, 1, 2, 3, 254, 255}
		tt, err := tensor.FromSlice(m, in, 2, 3)
		check(t, tt, err, tensor.Uint8)
		got, err := tt.Uint8s()
		require.NoError(t, err)
		assert.Equal(t, in, got)
	})
	t.Run("uint16", func(t *testing.T) {
		in := []uint16{0, 1, 2, 3, 65534, 65535}
		tt, err := tensor.FromSlice(m, in, 2, 3)
		check(t, tt, err, tensor.Uint16)
		got, err := tt.Uint16s()
		require.NoError(t, err)
		assert.Equal(t, in, got)
	})
	t.Run("uint32", func(t *testing.T) {
		in := []uint32{0, 1, 2, 3, 4, math.MaxUint32}
		tt, err := tensor.FromSlice(m, in, 2, 3)
		check(t, tt, err, tensor.Uint32)
		got, err := tt.Uint32s()
		require.NoError(t, err)
		assert.Equal(t, in, got)
	})
	t.Run("uint64", func(t *testing.T) {
		in := []uint64{0, 1, 2, 3, 4, math.MaxUint64}
		tt, err := tensor.FromSlice(m, in, 2, 3)
		check(t, tt, err, tensor.Uint64)
		got, err := tt.Uint64s()
		require.NoError(t, err)
		assert.Equal(t, in, got)
	})
	t.Run("complex64", func(t *testing.T) {
		in := []complex64{0, 1i, -2 + 0.5i, 3, complex(math.MaxFloat32, -1), -1i}
		tt, err := tensor.FromSlice(m, in, 2, 3)
		check(t, tt, err, tensor.Complex64)
		got, err := tt.Complex64s()
		require.NoError(t, err)
		assert.Equal(t, in, got)
		_, err = tt.Complex128s()
		require.Error(t, err, "the dtype must match")
	})
	t.Run("complex128", func(t *testing.T) {
		in := []complex128{0, 1i, -2 + 0.5i, 3, complex(math.MaxFloat64, -1), -1i}
		tt, err := tensor.FromSlice(m, in, 2, 3)
		check(t, tt, err, tensor.Complex128)
		got, err := tt.Complex128s()
		require.NoError(t, err)
		assert.Equal(t, in, got)
	})
	t.Run("bool", func(t *testing.T) {
		in := []bool{true, false, true, true, false, false}
		tt, err := tensor.FromSlice(m, in, 2, 3)
		check(t, tt, err, tensor.Bool)
		got, err := tt.Bools()
		require.NoError(t, err)
		assert.Equal(t, in, got)
	})
}

func TestZeroCopyOnHostVisibleDevice(t *testing.T) {
	m, _ := testutil.Manager(t)
	a, err := tensor.FromSlice(m, []float32{1, 2, 3, 4})
	require.NoError(t, err)
	require.True(t, a.Mapped(), "lavapipe's device-local memory is host-visible")
	v1, err := a.Float32s()
	require.NoError(t, err)
	v1[2] = 42 // writes through to the tensor
	v2, err := a.Float32s()
	require.NoError(t, err)
	assert.Equal(t, float32(42), v2[2])
	assert.Equal(t, &v1[0], &v2[0], "both views alias the same mapped memory")
	up, down := m.Runtime().StagingBytes()
	assert.Zero(t, up+down, "no staging on host-visible device memory")
}

func TestStagedDeviceMemory(t *testing.T) {
	m, _ := testutil.Manager(t, vkflow.WithStagedDeviceMemory())
	in := make([]float32, 300000) // over one staging chunk boundary is not needed; over 1 MiB is
	for i := range in {
		in[i] = float32(i)
	}
	a, err := tensor.FromSlice(m, in)
	require.NoError(t, err)
	assert.False(t, a.Mapped())
	got, err := a.Float32s()
	require.NoError(t, err)
	assert.Equal(t, in, got)
	got[0] = -1 // a copy: the tensor is unchanged
	again, err := a.Float32s()
	require.NoError(t, err)
	assert.Equal(t, float32(0), again[0])
	// Over 1 MiB: copied directly to and from imports of the Go slices
	// where the device can import host memory, else through the ring.
	up, down := m.Runtime().StagingBytes()
	iup, idown := m.Runtime().ImportedBytes()
	assert.Equal(t, a.Bytes(), up+iup, "only the data: new memory is zeroed by a GPU fill, not an upload")
	assert.Equal(t, 2*a.Bytes(), down+idown)
}

func TestMemoryKinds(t *testing.T) {
	m, _ := testutil.Manager(t)
	h, err := tensor.New(m, tensor.Int32, []int{8}, tensor.In(tensor.Host))
	require.NoError(t, err)
	assert.Equal(t, tensor.Host, h.Memory())
	assert.True(t, h.Mapped())
	require.NoError(t, tensor.Write(h, []int32{1, 2, 3, 4, 5, 6, 7, 8}))
	got, err := h.Int32s()
	require.NoError(t, err)
	assert.Equal(t, []int32{1, 2, 3, 4, 5, 6, 7, 8}, got)

	s, err := tensor.New(m, tensor.Float32, []int{8}, tensor.In(tensor.Storage))
	require.NoError(t, err)
	assert.False(t, s.Mapped())
	_, err = s.Float32s()
	assert.ErrorIs(t, err, vkflow.ErrInvalid)
	assert.ErrorIs(t, tensor.Write(s, make([]float32, 8)), vkflow.ErrInvalid)
}

func TestSubAllocation(t *testing.T) {
	m, _ := testutil.Manager(t)
	before := m.MemStats()
	var ts []*tensor.Tensor
	for i := 0; i < 100; i++ {
		tt, err := tensor.New(m, tensor.Float32, []int{1000 + i})
		require.NoError(t, err)
		ts = append(ts, tt)
	}
	after := m.MemStats()
	assert.LessOrEqual(t, after.TotalAllocs-before.TotalAllocs, 1, "100 small tensors share one block")
	align := m.Device().Limits.MinStorageBufferOffsetAlignment
	_ = align
	for _, tt := range ts {
		require.NoError(t, tt.Close())
	}
	assert.Equal(t, before.Allocations, m.MemStats().Allocations)
}

func TestBadInput(t *testing.T) {
	m, _ := testutil.Manager(t)
	limit := int(m.Device().Limits.MaxStorageBufferRange)
	tests := []struct {
		name string
		make func() error
		is   error
	}{
		{"negative dim", func() error { _, err := tensor.New(m, tensor.Float32, []int{4, -1}); return err }, vkflow.ErrInvalid},
		{"overflowing shape", func() error {
			_, err := tensor.New(m, tensor.Float32, []int{math.MaxInt / 2, 4})
			return err
		}, vkflow.ErrInvalid},
		{"over maxStorageBufferRange", func() error {
			_, err := tensor.New(m, tensor.Float32, []int{limit/4 + 1})
			return err
		}, vkflow.ErrInvalid},
		{"unknown dtype", func() error { _, err := tensor.New(m, tensor.Dtype(77), []int{4}); return err }, vkflow.ErrInvalid},
		{"shape does not match data", func() error { _, err := tensor.FromSlice(m, []float32{1, 2, 3}, 2, 2); return err }, vkflow.ErrInvalid},
		{"dtype mismatch on write", func() error {
			tt, err := tensor.New(m, tensor.Float32, []int{2})
			require.NoError(t, err)
			return tensor.Write(tt, []int32{1, 2})
		}, vkflow.ErrInvalid},
		{"dtype mismatch on read", func() error {
			tt, err := tensor.New(m, tensor.Float32, []int{2})
			require.NoError(t, err)
			_, err = tt.Int32s()
			return err
		}, vkflow.ErrInvalid},
		{"size mismatch on write", func() error {
			tt, err := tensor.New(m, tensor.Float32, []int{2})
			require.NoError(t, err)
			return tensor.Write(tt, []float32{1, 2, 3})
		}, vkflow.ErrInvalid},
		{"nil tensor", func() error { _, err := (*tensor.Tensor)(nil).Float32s(); return err }, vkflow.ErrInvalid},
		{"nil manager", func() error { _, err := tensor.New(nil, tensor.Float32, []int{1}); return err }, vkflow.ErrInvalid},
		{"use after close", func() error {
			tt, err := tensor.New(m, tensor.Float32, []int{2})
			require.NoError(t, err)
			require.NoError(t, tt.Close())
			require.NoError(t, tt.Close(), "Close is idempotent")
			_, err = tt.Float32s()
			return err
		}, vkflow.ErrClosed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.make()
			require.Error(t, err)
			assert.ErrorIs(t, err, tt.is)
		})
	}
}

func TestUnsupportedDtypeFeature(t *testing.T) {
	m, _ := testutil.Manager(t, vkflow.WithFeatures(vk.Features{TimelineSemaphore: true}))
	for _, d := range []tensor.Dtype{tensor.Float64, tensor.Int8, tensor.Float16, tensor.Int64, tensor.Bool} {
		_, err := tensor.New(m, d, []int{4})
		assert.ErrorIs(t, err, vkflow.ErrUnsupported, d.String())
	}
	_, err := tensor.New(m, tensor.Float32, []int{4})
	assert.NoError(t, err)
}

func TestManagerCloseClosesTensors(t *testing.T) {
	m, _ := testutil.Manager(t)
	a, err := tensor.FromSlice(m, []float32{1, 2})
	require.NoError(t, err)
	require.NoError(t, m.Close())
	require.NoError(t, m.Close(), "second Close returns nil")
	assert.True(t, a.Closed())
	_, err = a.Float32s()
	assert.ErrorIs(t, err, vkflow.ErrClosed)
	_, err = tensor.New(m, tensor.Float32, []int{1})
	assert.ErrorIs(t, err, vkflow.ErrClosed)
}

func TestRawBytes(t *testing.T) {
	m, _ := testutil.Manager(t)
	for _, mem := range []tensor.Memory{tensor.Device, tensor.Host} {
		ten, err := tensor.New(m, tensor.Int16, []int{3}, tensor.In(mem))
		require.NoError(t, err)
		in := []byte{1, 0, 2, 0, 0xff, 0xff}
		require.NoError(t, ten.WriteBytes(in))
		vals, err := ten.Int16s()
		require.NoError(t, err)
		assert.Equal(t, []int16{1, 2, -1}, vals)
		out := make([]byte, 6)
		require.NoError(t, ten.ReadBytes(out))
		assert.Equal(t, in, out)
		assert.ErrorIs(t, ten.WriteBytes(in[:4]), vkflow.ErrInvalid)
		assert.ErrorIs(t, ten.ReadBytes(out[:5]), vkflow.ErrInvalid)
		assert.False(t, ten.ReadOnly())
		require.NoError(t, ten.Close())
		assert.ErrorIs(t, ten.WriteBytes(in), vkflow.ErrClosed)
		assert.ErrorIs(t, ten.ReadBytes(out), vkflow.ErrClosed)
	}
	st, err := tensor.New(m, tensor.Int16, []int{3}, tensor.In(tensor.Storage))
	require.NoError(t, err)
	defer st.Close()
	assert.ErrorIs(t, st.ReadBytes(make([]byte, 6)), vkflow.ErrInvalid)
	assert.ErrorIs(t, st.WriteBytes(make([]byte, 6)), vkflow.ErrInvalid)
}
