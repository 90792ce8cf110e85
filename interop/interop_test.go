package interop_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/internal/kernels"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/interop"
	"github.com/vkflow/vkflow/sequence"
	"github.com/vkflow/vkflow/tensor"
	"github.com/vkflow/vkflow/vk"
)

// pair opens two validated Managers, as two programs (or two libraries of
// one program) would, and skips where memory cannot be shared.
func pair(t *testing.T, opts ...vkflow.Option) (*vkflow.Manager, *vkflow.Manager) {
	t.Helper()
	a, _ := testutil.Manager(t, opts...)
	b, _ := testutil.Manager(t, opts...)
	if err := interop.Supported(a); err != nil {
		t.Skipf("no memory sharing on this device: %v", err)
	}
	return a, b
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// openFDs counts this process's open file descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	es, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	return len(es)
}

// fillCase is a dtype with a fill value and its bytes.
type fillCase struct {
	dtype tensor.Dtype
	v     any    // the Fill value
	elem  []byte // its little-endian bytes
}

func le(v any) []byte {
	b, err := binary.Append(nil, binary.LittleEndian, v)
	if err != nil {
		panic(err)
	}
	return b
}

func fc(dtype tensor.Dtype, v any) fillCase { return fillCase{dtype, v, le(v)} }

var (
	fillInt8    = fc(tensor.Int8, int8(-7))
	fillUint16  = fc(tensor.Uint16, uint16(0xbeef))
	fillFloat32 = fc(tensor.Float32, float32(1.5))
	// A float64 fill must repeat one 32-bit word.
	fillFloat64 = fc(tensor.Float64, math.Float64frombits(0x3ff80000_3ff80000))
)

// gpuWrite fills dst on the GPU with f.v, then copies random bytes over
// its first and last elements (up to 4096 of each) from a host-written
// tensor, and returns the bytes dst must hold.
func gpuWrite(t *testing.T, m *vkflow.Manager, dst *tensor.Tensor, f fillCase, r *rand.Rand) []byte {
	t.Helper()
	n := dst.Len()
	es := f.dtype.Size()
	want := bytes.Repeat(f.elem, n)
	k := min(n, 4096)
	src, err := tensor.New(m, f.dtype, []int{k})
	require.NoError(t, err)
	defer src.Close()
	pattern := make([]byte, k*es)
	for i := range pattern {
		pattern[i] = byte(r.Uint32())
	}
	require.NoError(t, src.WriteBytes(pattern))
	regions := []sequence.Region{{Src: 0, Dst: 0, Len: (k + 1) / 2}}
	copy(want, pattern[:(k+1)/2*es])
	if tail := k / 2; tail > 0 && n-tail >= (k+1)/2 {
		regions = append(regions, sequence.Region{Src: (k + 1) / 2, Dst: n - tail, Len: tail})
		copy(want[(n-tail)*es:], pattern[(k+1)/2*es:])
	}
	seq, err := sequence.New(m, 0)
	require.NoError(t, err)
	defer seq.Close()
	seq.Fill(dst, f.v).Copy(src, dst, regions...).SyncLocal(dst)
	require.NoError(t, seq.Err())
	require.NoError(t, seq.Eval(ctxT(t)))
	return want
}

func readBytes(t *testing.T, x *tensor.Tensor) []byte {
	t.Helper()
	got := make([]byte, x.Bytes())
	require.NoError(t, x.ReadBytes(got))
	return got
}

// Export → Import across two Managers of one process; GPU work on either
// side is seen bit-exact through the other side's tensor, for several
// dtypes and sizes from 1 byte to the device's maximum.
func TestRoundTrip(t *testing.T) {
	for _, staged := range []bool{false, true} {
		name := map[bool]string{false: "mapped", true: "staged"}[staged]
		t.Run(name, func(t *testing.T) {
			var opts []vkflow.Option
			if staged {
				opts = append(opts, vkflow.WithStagedDeviceMemory())
			}
			roundTrip(t, staged, opts...)
		})
	}
}

func roundTrip(t *testing.T, staged bool, opts ...vkflow.Option) {
	a, b := pair(t, opts...)
	maxElems := int(tensor.MaxBytes(a.Runtime()) / 4)
	tests := []struct {
		name  string
		shape []int
		fill  fillCase
		big   bool
	}{
		{"int8 one byte", []int{1}, fillInt8, false},
		{"int8 three bytes", []int{3}, fillInt8, false},
		{"uint16 odd", []int{7}, fillUint16, false},
		{"uint16 2-d", []int{33, 65}, fillUint16, false},
		{"float64", []int{1000}, fillFloat64, false},
		{"float32 scalar", []int{}, fillFloat32, false},
		{"float32 4 MiB", []int{1 << 20}, fillFloat32, false},
		{"float32 device maximum", []int{maxElems}, fillFloat32, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.big && (testing.Short() || staged) {
				t.Skip("the largest tensor runs without -short, mapped only")
			}
			r := rand.New(rand.NewPCG(uint64(len(tt.shape)), uint64(tt.fill.dtype)))
			x, err := tensor.New(a, tt.fill.dtype, tt.shape, tensor.Exportable())
			require.NoError(t, err)
			defer x.Close()
			assert.Equal(t, make([]byte, x.Bytes()), readBytes(t, x), "a new exportable tensor reads as zero")
			h, err := interop.Export(x)
			require.NoError(t, err)
			// The memory type is the one exportable buffers allow:
			// lavapipe's only type is host-visible, the NVIDIA H200's
			// exportable type was not. Mapped where it is host-visible
			// (unless Device memory is staged), on both sides alike.
			flags := a.Runtime().Info.MemoryTypes[h.MemoryType].Flags
			visible := flags&vk.MemoryHostVisible != 0
			t.Logf("memory type %d, flags %#x", h.MemoryType, flags)
			assert.Equal(t, visible && !staged, x.Allocation().Mapped != nil, "zero-copy where the memory is host-visible")
			assert.True(t, x.Allocation().Mapped != nil || !x.Mapped(), "host reads go through a mapping only where there is one")
			assert.Equal(t, x.Bytes(), h.Bytes)
			assert.Equal(t, x.Allocation().Size, max((h.Bytes+3)&^3, 4), "interop computes the exporter's buffer size")
			assert.True(t, h.Dedicated)
			assert.Zero(t, h.Offset)
			assert.GreaterOrEqual(t, h.Size, h.Bytes)
			y, err := interop.Import(b, h, tt.fill.dtype, tt.shape)
			require.NoError(t, err)
			defer y.Close()
			assert.Equal(t, tt.shape, y.Shape())
			assert.Equal(t, x.Allocation().Mapped != nil, y.Allocation().Mapped != nil, "the importer maps what the exporter maps: the same memory type")
			assert.Equal(t, x.Mapped(), y.Mapped())

			want := gpuWrite(t, a, x, tt.fill, r)
			assert.True(t, bytes.Equal(want, readBytes(t, y)), "exporter's GPU writes, read by the importer")

			back := tt.fill
			back.elem = bytes.Clone(back.elem)
			back.elem[0] ^= 0x5a // another value, of the same kind
			switch v := back.v.(type) {
			case int8:
				back.v = v ^ 0x5a
			case uint16:
				back.v = v ^ 0x5a
			case float32:
				back.v = math.Float32frombits(math.Float32bits(v) ^ 0x5a)
			case float64:
				back.v = math.Float64frombits(math.Float64bits(v) ^ 0x0000005a_0000005a)
				back.elem[4] ^= 0x5a
			}
			want = gpuWrite(t, b, y, back, r)
			assert.True(t, bytes.Equal(want, readBytes(t, x)), "importer's GPU writes, read by the exporter")
		})
	}
}

// A dispatch on the importing side writes what the exporter reads; both
// tensors are views of one memory.
func TestDispatch(t *testing.T) {
	a, b := pair(t)
	const n = 4099
	x, err := tensor.New(a, tensor.Float32, []int{n}, tensor.Exportable())
	require.NoError(t, err)
	ys := make([]float32, n)
	for i := range ys {
		ys[i] = float32(i)
	}
	require.NoError(t, tensor.Write(x, ys))
	h, err := interop.Export(x)
	require.NoError(t, err)
	y, err := interop.Import(b, h, tensor.Float32, []int{n})
	require.NoError(t, err)
	got, err := y.Float32s()
	require.NoError(t, err)
	assert.Equal(t, ys, got, "host writes through the exporter")

	ones, err := tensor.FromSlice(b, slicesRepeat(float32(1), n))
	require.NoError(t, err)
	saxpy, err := kernels.Saxpy(b, ones, y) // y = 2*1 + y
	require.NoError(t, err)
	seq, err := sequence.New(b, 0)
	require.NoError(t, err)
	seq.Dispatch(saxpy, float32(2)).SyncLocal(y)
	require.NoError(t, seq.Eval(ctxT(t)))
	got, err = x.Float32s()
	require.NoError(t, err)
	for i := range ys {
		ys[i] += 2
	}
	assert.Equal(t, ys, got, "the importer's dispatch, read by the exporter")
}

func slicesRepeat[T any](v T, n int) []T {
	s := make([]T, n)
	for i := range s {
		s[i] = v
	}
	return s
}
