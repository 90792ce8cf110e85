package dlpack

import (
	"encoding/binary"
	"math/big"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow/internal/testutil"
)

// fuzzReader hands out fields of a fuzz input, zero once it runs out.
type fuzzReader []byte

func (r *fuzzReader) u64() uint64 {
	var b [8]byte
	n := copy(b[:], *r)
	*r = (*r)[n:]
	return binary.LittleEndian.Uint64(b[:])
}

// extent returns the bytes past data that a tensor's elements reach, and
// whether any element offset is negative, computed exactly.
func extent(shape, strides []int64, size int, byteOffset uint64) (*big.Int, bool) {
	lo, hi := big.NewInt(0), big.NewInt(0)
	want := int64(1)
	for i := len(shape) - 1; i >= 0; i-- {
		st := want
		if strides != nil {
			st = strides[i]
		}
		if shape[i] <= 0 {
			return big.NewInt(0), false
		}
		step := new(big.Int).Mul(big.NewInt(shape[i]-1), big.NewInt(st))
		if step.Sign() < 0 {
			lo.Add(lo, step)
		} else {
			hi.Add(hi, step)
		}
		want *= shape[i]
	}
	sz := big.NewInt(int64(size))
	off := new(big.Int).SetUint64(byteOffset)
	lo.Mul(lo, sz).Add(lo, off)
	hi.Add(hi, big.NewInt(1)).Mul(hi, sz).Add(hi, off)
	return hi, lo.Sign() < 0
}

// FuzzImport feeds Import arbitrary struct contents: version, flags,
// device, dtype, ndim, shape, strides and byte_offset. The harness gives
// the data pointer only when the claimed elements lie inside its own
// buffer (Import must trust data, as every consumer does); otherwise data
// is NULL, which Import must reject. Import must never crash, must call the
// deleter exactly once, and must free everything it made.
func FuzzImport(f *testing.F) {
	seed := func(fields ...uint64) []byte {
		var b []byte
		for _, v := range fields {
			b = binary.LittleEndian.AppendUint64(b, v)
		}
		return b
	}
	// versioned/major, flags, device, dtype, ndim, byte_offset, shape..., strides...
	f.Add(seed(0, 0, 1, 2|32<<8|1<<16, 1, 0, 16, 1))
	f.Add(seed(1|1<<8, 1, 1, 0|32<<8|1<<16, 2, 0, 4, 4, 4, 1))
	f.Add(seed(1|2<<8, 0, 1, 2|32<<8|1<<16, 1, 0, 3))
	f.Add(seed(0, 0, 7, 2|32<<8|1<<16, 1, 0, 3))
	f.Add(seed(0, 0, 1, 6|8<<8|1<<16, 3, 8, 2, 3, 4, 12, 4, 1))
	f.Add(seed(0, 0, 1, 2|16<<8|1<<16, 2, 0, 1<<62, 4, 1, 1))
	m, _ := testutil.Manager(f)
	f.Fuzz(func(t *testing.T, in []byte) {
		r := fuzzReader(in)
		head := r.u64()
		fr := foreign{versioned: head&1 != 0, major: uint32(head >> 8 & 0xff), minor: uint32(head >> 16 & 0xff)}
		fr.flags = r.u64()
		dev := r.u64()
		fr.dev = Device{DeviceType(int32(dev)), int32(dev >> 32)}
		dt := r.u64()
		fr.dt = DataType{uint8(dt), uint8(dt >> 8), uint16(dt >> 16)}
		fr.ndim = int32(r.u64())
		fr.byteOffset = r.u64() % (1 << 16)
		nd := min(max(int(fr.ndim), 0), foreignDims)
		fr.shape = make([]int64, nd)
		for i := range fr.shape {
			fr.shape[i] = int64(r.u64())
		}
		if len(r) > 0 {
			fr.strides = make([]int64, nd)
			for i := range fr.strides {
				fr.strides[i] = int64(r.u64())
			}
		}
		const room = 1 << 16
		fr.data = make([]byte, room)
		size := max(int(fr.dt.Bits)/8, 1) * max(int(fr.dt.Lanes), 1)
		if fr.dev.Type != Vulkan {
			hi, neg := extent(fr.shape, fr.strides, size, fr.byteOffset)
			fr.nullData = neg || hi.Cmp(big.NewInt(room)) > 0 || fr.ndim > foreignDims
		}
		mt, _ := fr.build()
		before := foreignDeletes()
		allocs := m.MemStats().Allocations
		ten, _, err := Import(ctx, m, mt)
		if err != nil {
			require.Nil(t, ten)
			require.Equal(t, before+1, foreignDeletes(), "deleter not called once on error: %v", err)
			require.Equal(t, allocs, m.MemStats().Allocations, "leaked on error")
			return
		}
		require.NoError(t, ten.Close())
		require.Equal(t, before+1, foreignDeletes())
		require.Equal(t, allocs, m.MemStats().Allocations)
	})
}
