package main

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/interop"
)

// structBytes lays out a vkflow_memory_handle by hand, as capi/vkflow.h
// documents it (the test checks the documented layout, not cgo's).
func structBytes(size, offset, nbytes uint64, fd int32, mtype uint32, dedicated int32, reserved uint32, dev, drv byte) []byte {
	b := make([]byte, 0, handleSize)
	b = binary.LittleEndian.AppendUint64(b, size)
	b = binary.LittleEndian.AppendUint64(b, offset)
	b = binary.LittleEndian.AppendUint64(b, nbytes)
	b = binary.LittleEndian.AppendUint32(b, uint32(fd))
	b = binary.LittleEndian.AppendUint32(b, mtype)
	b = binary.LittleEndian.AppendUint32(b, uint32(dedicated))
	b = binary.LittleEndian.AppendUint32(b, reserved)
	for i := range 16 {
		b = append(b, dev+byte(i))
	}
	for i := range 16 {
		b = append(b, drv+byte(i))
	}
	return b
}

// FuzzMemoryHandleStruct: any 72 bytes taken as a vkflow_memory_handle are
// either refused (ErrInvalid: dedicated not 0 or 1) or read field by field
// as the header says, the fd included (an int32 always fits); what is read
// encodes to the wire form of Go's MarshalBinary, which decodes back to the
// same struct with fd -1 and reserved 0. Any bytes taken as a wire form
// decode only if they are one, and then encode back to themselves.
func FuzzMemoryHandleStruct(f *testing.F) {
	f.Add(structBytes(4096, 0, 4000, 7, 2, 1, 0, 0x10, 0xf0))
	f.Add(structBytes(1<<40, 64, 1<<39, -1, 0, 0, 0, 0, 0))
	f.Add(structBytes(0, 0, 0, -2147483648, ^uint32(0), 2, 5, 0xff, 0xff))
	f.Add(structBytes(^uint64(0), ^uint64(0), ^uint64(0), 2147483647, 31, -1, ^uint32(0), 1, 2))
	f.Add([]byte("vkflowH1"))
	wire, _ := interop.MemoryHandle{Size: 8, Bytes: 8, Dedicated: true}.MarshalBinary()
	f.Add(wire)
	f.Fuzz(func(t *testing.T, b []byte) {
		var img [handleSize]byte
		copy(img[:], b)
		h := structOf(&img)
		mh, err := handleFromC(h, "fuzz")
		ded := int32(binary.LittleEndian.Uint32(img[32:]))
		if ded != 0 && ded != 1 {
			require.ErrorIs(t, err, vkflow.ErrInvalid)
			_, err := encodeWire(h, make([]byte, 72))
			require.ErrorIs(t, err, vkflow.ErrInvalid)
		} else {
			require.NoError(t, err)
			assert.Equal(t, int(int32(binary.LittleEndian.Uint32(img[24:]))), mh.FD)
			assert.Equal(t, binary.LittleEndian.Uint64(img[0:]), mh.Size)
			assert.Equal(t, binary.LittleEndian.Uint64(img[8:]), mh.Offset)
			assert.Equal(t, binary.LittleEndian.Uint64(img[16:]), mh.Bytes)
			assert.Equal(t, binary.LittleEndian.Uint32(img[28:]), mh.MemoryType)
			assert.Equal(t, ded == 1, mh.Dedicated)
			assert.Equal(t, img[40:56], mh.DeviceUUID[:])
			assert.Equal(t, img[56:72], mh.DriverUUID[:])

			buf := make([]byte, 80)
			n, err := encodeWire(h, buf[:71])
			require.ErrorIs(t, err, vkflow.ErrInvalid, "71 bytes are too few")
			require.Zero(t, n)
			n, err = encodeWire(h, buf)
			require.NoError(t, err)
			require.Equal(t, 72, n)
			want, _ := mh.MarshalBinary()
			require.Equal(t, want, buf[:n], "the wire form of Go's MarshalBinary")

			var back [handleSize]byte
			require.NoError(t, decodeWire(buf[:n], structOf(&back)))
			expect := img
			binary.LittleEndian.PutUint32(expect[24:], ^uint32(0)) // fd -1
			binary.LittleEndian.PutUint32(expect[36:], 0)          // reserved
			require.Equal(t, expect, back)
		}

		// b as a wire form.
		var out [handleSize]byte
		for i := range out {
			out[i] = 0x55
		}
		var g interop.MemoryHandle
		if g.UnmarshalBinary(b) != nil {
			require.ErrorIs(t, decodeWire(b, structOf(&out)), vkflow.ErrInvalid)
			for _, c := range out {
				require.Equal(t, byte(0x55), c, "unchanged on error")
			}
			return
		}
		require.NoError(t, decodeWire(b, structOf(&out)))
		buf := make([]byte, 72)
		n, err := encodeWire(structOf(&out), buf)
		require.NoError(t, err)
		require.Equal(t, b, buf[:n])
	})
}
