package core

import (
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// privateFD gives a file (lavapipe's are memfds) an open file description of its own: the same
// bytes, an offset that the original's lseek does not move, and no more
// access than the original had.
func TestPrivateFD(t *testing.T) {
	fd, err := syscall.Open(filepath.Join(t.TempDir(), "memory"), syscall.O_RDWR|syscall.O_CREAT|syscall.O_CLOEXEC, 0o600)
	require.NoError(t, err)
	defer syscall.Close(fd)
	_, err = syscall.Write(fd, []byte("header+data"))
	require.NoError(t, err)

	own, err := privateFD(fd)
	require.NoError(t, err)
	defer syscall.Close(own)
	assert.NotEqual(t, fd, own)
	var a, b syscall.Stat_t
	require.NoError(t, syscall.Fstat(fd, &a))
	require.NoError(t, syscall.Fstat(own, &b))
	assert.Equal(t, a.Ino, b.Ino, "the same file")
	// fd's offset is at its end (11); own's is at 0, and reading own does
	// not move fd's.
	buf := make([]byte, 6)
	n, err := syscall.Read(own, buf)
	require.NoError(t, err)
	assert.Equal(t, "header", string(buf[:n]))
	off, err := syscall.Seek(fd, 0, 1)
	require.NoError(t, err)
	assert.EqualValues(t, 11, off)
	flags, _, e := syscall.Syscall(syscall.SYS_FCNTL, uintptr(own), syscall.F_GETFD, 0)
	require.Zero(t, e)
	assert.NotZero(t, flags&syscall.FD_CLOEXEC, "close-on-exec")

	// A read-only fd reopens read-only.
	ro, err := syscall.Open("/proc/self/fd/"+strconv.Itoa(fd), syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	require.NoError(t, err)
	defer syscall.Close(ro)
	own2, err := privateFD(ro)
	require.NoError(t, err)
	defer syscall.Close(own2)
	_, err = syscall.Write(own2, []byte("x"))
	assert.ErrorIs(t, err, syscall.EBADF, "no more access than the original")

	// A closed fd cannot be reopened (ImportFD then serializes).
	_, err = privateFD(-1)
	assert.Error(t, err)
}

// The cost of the reopen an import pays on lavapipe.
func BenchmarkPrivateFD(b *testing.B) {
	fd, err := syscall.Open(filepath.Join(b.TempDir(), "memory"), syscall.O_RDWR|syscall.O_CREAT|syscall.O_CLOEXEC, 0o600)
	require.NoError(b, err)
	defer syscall.Close(fd)
	for b.Loop() {
		own, err := privateFD(fd)
		if err != nil {
			b.Fatal(err)
		}
		syscall.Close(own)
	}
}
