package interop_test

import (
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/interop"
	"github.com/vkflow/vkflow/tensor"
)

func sampleHandle() interop.MemoryHandle {
	h := interop.MemoryHandle{FD: 7, Size: 0x1000, Offset: 0, Bytes: 0xffc, MemoryType: 2, Dedicated: true}
	for i := range h.DeviceUUID {
		h.DeviceUUID[i] = byte(i)
		h.DriverUUID[i] = byte(0xf0 + i)
	}
	return h
}

func TestHandleString(t *testing.T) {
	s := sampleHandle().String()
	for _, want := range []string{"fd 7", "size 0x1000", "offset 0x0", "bytes 0xffc", "memory type 2", "dedicated",
		"device 000102030405060708090a0b0c0d0e0f", "driver f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff"} {
		assert.Contains(t, s, want)
	}
	assert.NotContains(t, interop.MemoryHandle{}.String(), "dedicated")
}

func TestHandleMarshal(t *testing.T) {
	h := sampleHandle()
	b, err := h.MarshalBinary()
	require.NoError(t, err)
	var g interop.MemoryHandle
	require.NoError(t, g.UnmarshalBinary(b))
	want := h
	want.FD = -1 // fds do not travel as bytes
	assert.Equal(t, want, g)

	bad := func(f func([]byte) []byte) []byte { return f(append([]byte(nil), b...)) }
	tests := []struct {
		name string
		b    []byte
	}{
		{"empty", nil},
		{"short", b[:len(b)-1]},
		{"long", append(append([]byte(nil), b...), 0)},
		{"magic", bad(func(b []byte) []byte { b[0] = 'X'; return b })},
		{"flags", bad(func(b []byte) []byte { b[36] |= 2; return b })},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := interop.MemoryHandle{FD: 3}
			assert.ErrorIs(t, g.UnmarshalBinary(tt.b), vkflow.ErrInvalid)
			assert.Equal(t, interop.MemoryHandle{FD: 3}, g, "unchanged on error")
		})
	}
}

// socketPair returns two connected Unix sockets of a type.
func socketPair(t *testing.T, typ int) (*net.UnixConn, *net.UnixConn) {
	t.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, typ|syscall.SOCK_CLOEXEC, 0)
	require.NoError(t, err)
	conn := func(fd int) *net.UnixConn {
		f := os.NewFile(uintptr(fd), "socket")
		defer f.Close()
		c, err := net.FileConn(f)
		require.NoError(t, err)
		t.Cleanup(func() { c.Close() })
		return c.(*net.UnixConn)
	}
	return conn(fds[0]), conn(fds[1])
}

// A handle sent over a Unix socket imports on the other end; the sender's
// fd stays the sender's.
func TestSendRecvHandle(t *testing.T) {
	for _, typ := range []struct {
		name string
		typ  int
	}{{"stream", syscall.SOCK_STREAM}, {"seqpacket", syscall.SOCK_SEQPACKET}} {
		t.Run(typ.name, func(t *testing.T) {
			a, b := pair(t)
			x, err := tensor.New(a, tensor.Float64, []int{3}, tensor.Exportable())
			require.NoError(t, err)
			require.NoError(t, tensor.Write(x, []float64{1, 2, 3}))
			left, right := socketPair(t, typ.typ)
			base := openFDs(t)
			h, err := interop.Export(x)
			require.NoError(t, err)
			require.NoError(t, interop.SendHandle(left, h))
			require.NoError(t, interop.SendHandle(left, h), "a second message right after the first")
			var st syscall.Stat_t
			assert.NoError(t, syscall.Fstat(h.FD, &st), "SendHandle leaves the sender's fd open")
			require.NoError(t, syscall.Close(h.FD))

			for range 2 {
				got, err := interop.RecvHandle(right)
				require.NoError(t, err)
				assert.GreaterOrEqual(t, got.FD, 0)
				want := h
				want.FD = got.FD
				assert.Equal(t, want, got)
				y, err := interop.Import(b, got, tensor.Float64, []int{3})
				require.NoError(t, err)
				v, err := y.Float64s()
				require.NoError(t, err)
				assert.Equal(t, []float64{1, 2, 3}, v)
				require.NoError(t, y.Close())
			}
			assert.Equal(t, base, openFDs(t), "every fd sent was consumed")
		})
	}
}

// Malformed messages are ErrInvalid, and every fd that came with them is
// closed.
func TestRecvHandleErrors(t *testing.T) {
	good, _ := sampleHandle().MarshalBinary()
	devNull := func(t *testing.T) int {
		fd, err := syscall.Open("/dev/null", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		require.NoError(t, err)
		t.Cleanup(func() { syscall.Close(fd) })
		return fd
	}
	tests := []struct {
		name string
		data []byte
		fds  int
		want error
	}{
		{"no fd", good, 0, vkflow.ErrInvalid},
		{"two fds", good, 2, vkflow.ErrInvalid},
		{"not a handle", []byte("hello, this is not a vkflow memory handle at all, but it is long enough!"), 1, vkflow.ErrInvalid},
		{"short", good[:40], 1, vkflow.ErrInvalid},
		{"long", append(append([]byte(nil), good...), 1, 2, 3), 1, vkflow.ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			left, right := socketPair(t, syscall.SOCK_SEQPACKET)
			var fds []int
			for range tt.fds {
				fds = append(fds, devNull(t))
			}
			var oob []byte
			if len(fds) > 0 {
				oob = syscall.UnixRights(fds...)
			}
			base := openFDs(t)
			_, _, err := left.WriteMsgUnix(tt.data, oob, nil)
			require.NoError(t, err)
			h, err := interop.RecvHandle(right)
			assert.ErrorIs(t, err, tt.want)
			assert.Equal(t, -1, h.FD)
			assert.Equal(t, base, openFDs(t), "received fds are closed")
		})
	}
	t.Run("closed peer", func(t *testing.T) {
		left, right := socketPair(t, syscall.SOCK_STREAM)
		require.NoError(t, left.Close())
		_, err := interop.RecvHandle(right)
		assert.Error(t, err)
	})
	t.Run("arguments", func(t *testing.T) {
		_, err := interop.RecvHandle(nil)
		assert.ErrorIs(t, err, vkflow.ErrInvalid)
		assert.ErrorIs(t, interop.SendHandle(nil, sampleHandle()), vkflow.ErrInvalid)
		left, _ := socketPair(t, syscall.SOCK_STREAM)
		assert.ErrorIs(t, interop.SendHandle(left, interop.MemoryHandle{FD: -1}), vkflow.ErrInvalid)
	})
}
