package interop_test

import (
	"bytes"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/interop"
)

// wireSeedLen is as long as a handle's wire form.
var wireSeedLen, _ = interop.MemoryHandle{}.MarshalBinary()

// wireSeeds are the seed corpus of the wire-form fuzz tests: a handle,
// every length around it, a broken magic, unknown flags.
func wireSeeds(f *testing.F, add func(b []byte)) {
	good, err := sampleHandle().MarshalBinary()
	require.NoError(f, err)
	add(good)
	zero, _ := interop.MemoryHandle{}.MarshalBinary()
	add(zero)
	add(nil)
	add(good[:8])
	add(good[:len(good)-1])
	add(append(append([]byte(nil), good...), 0))
	bad := append([]byte(nil), good...)
	bad[0] = 'X'
	add(bad)
	flags := append([]byte(nil), good...)
	flags[36] = 0xfe
	add(flags)
	add(bytes.Repeat([]byte{0xff}, len(good)))
}

// UnmarshalBinary never panics; what it accepts marshals back to the same
// bytes with FD -1, and what it refuses is ErrInvalid and leaves the
// handle unchanged.
func FuzzUnmarshalHandle(f *testing.F) {
	wireSeeds(f, func(b []byte) { f.Add(b) })
	f.Fuzz(func(t *testing.T, b []byte) {
		h := interop.MemoryHandle{FD: 42, Size: 7}
		err := h.UnmarshalBinary(b)
		if err != nil {
			require.ErrorIs(t, err, vkflow.ErrInvalid)
			require.Equal(t, interop.MemoryHandle{FD: 42, Size: 7}, h, "unchanged on error")
			return
		}
		require.Equal(t, -1, h.FD)
		again, err := h.MarshalBinary()
		require.NoError(t, err)
		require.Equal(t, b, again)
	})
}

// RecvHandle, given any bytes with 0 to 3 fds on a seqpacket or stream
// socket, returns a handle (exactly the valid wire form with one fd, whose
// fd is new and open) or an error, and in either case the process ends
// with as many fds as it had: every fd that came with a refused message is
// closed.
func FuzzRecvHandle(f *testing.F) {
	wireSeeds(f, func(b []byte) {
		for _, nfds := range []uint8{0, 1, 2, 3} {
			f.Add(b, nfds, false)
		}
		f.Add(b, uint8(1), true)
	})
	f.Fuzz(func(t *testing.T, b []byte, nfds uint8, stream bool) {
		nfds %= 4
		typ := syscall.SOCK_SEQPACKET
		if stream {
			typ = syscall.SOCK_STREAM
		}
		if len(b) > 256 {
			b = b[:256]
		}
		before := openFDs(t)
		left, right := socketPair(t, typ)
		var fds []int
		for range nfds {
			fd, err := syscall.Open("/dev/null", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
			require.NoError(t, err)
			fds = append(fds, fd)
		}
		var oob []byte
		if len(fds) > 0 {
			oob = syscall.UnixRights(fds...)
		}
		_, _, err := left.WriteMsgUnix(b, oob, nil)
		for _, fd := range fds {
			syscall.Close(fd)
		}
		if err != nil {
			t.Skipf("not sendable: %v", err) // an empty message with no fds, say
		}
		require.NoError(t, left.Close()) // a stream reader sees EOF, not a wait
		// A stream has no message bounds: RecvHandle takes the first 72
		// bytes (the rest is the next message's).
		msg := b
		if stream && len(msg) > len(wireSeedLen) {
			msg = msg[:len(wireSeedLen)]
		}
		var want interop.MemoryHandle
		wantOK := nfds == 1 && want.UnmarshalBinary(msg) == nil
		got, err := interop.RecvHandle(right)
		if wantOK {
			require.NoError(t, err)
			require.True(t, fdOpen(got.FD))
			want.FD = got.FD
			assert.Equal(t, want, got)
			require.NoError(t, syscall.Close(got.FD))
		} else {
			require.Error(t, err)
			assert.Equal(t, -1, got.FD)
		}
		require.NoError(t, right.Close())
		assert.Equal(t, before, openFDs(t), "every fd received was closed")
	})
}
