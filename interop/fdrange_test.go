package interop_test

import (
	"fmt"
	"math"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/interop"
	"github.com/vkflow/vkflow/tensor"
)

// fdOpen reports whether fd is open in this process.
func fdOpen(fd int) bool {
	_, _, e := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_GETFD, 0)
	return e == 0
}

// eventFD opens an eventfd that has nothing to do with vkflow: the fd an
// import must never close on a caller's behalf.
func eventFD(t *testing.T) int {
	t.Helper()
	r, _, e := syscall.Syscall(syscall.SYS_EVENTFD2, 0, syscall.O_CLOEXEC, 0)
	require.Zero(t, e)
	fd := int(r)
	t.Cleanup(func() { syscall.Close(fd) })
	return fd
}

// outOfRange are fd values no process can hold: an fd is a C int. Each is
// made from victim so that its low 32 bits, where a truncation would land,
// name victim (or, for the negative ones, -1 or victim).
func outOfRange(victim int) []int {
	return []int{
		1<<32 + victim,
		-(1 << 32) + victim,
		1<<40 | victim,
		math.MaxInt64,
		math.MinInt64 + victim,
		math.MaxInt32 + 1,
		-1,
		-2,
	}
}

// An fd value that does not fit an int32 (or is negative) is ErrInvalid
// before any system call: Import, ImportTimeline and SendHandle neither
// close nor import the fd that its low 32 bits name, also where an
// earlier check fails (a closed Manager).
func TestFDOutOfRange(t *testing.T) {
	a, b := pair(t)
	closed, _ := testutil.Manager(t)
	require.NoError(t, closed.Close())
	x, err := tensor.New(a, tensor.Float32, []int{64}, tensor.Exportable())
	require.NoError(t, err)
	valid, err := interop.Export(x)
	require.NoError(t, err)
	require.NoError(t, syscall.Close(valid.FD))

	// Two kinds of victim, fresh for each case: an unrelated eventfd, and
	// a real exported memfd, which a truncating Import would even import.
	victims := []struct {
		name string
		open func(t *testing.T) int
	}{
		{"eventfd", eventFD},
		{"exported memfd", func(t *testing.T) int {
			h, err := interop.Export(x)
			require.NoError(t, err)
			t.Cleanup(func() { syscall.Close(h.FD) })
			return h.FD
		}},
	}
	conn, _ := socketPair(t, syscall.SOCK_SEQPACKET)
	for _, v := range victims {
		for i := range outOfRange(0) {
			t.Run(fmt.Sprintf("%s/%d", v.name, i), func(t *testing.T) {
				victim := v.open(t)
				fd := outOfRange(victim)[i]
				t.Logf("victim %d, handed %d", victim, fd)
				before := openFDs(t)
				for _, owner := range []*vkflow.Manager{b, closed} {
					h := valid
					h.FD = fd
					y, err := interop.Import(owner, h, tensor.Float32, []int{64})
					assert.Nil(t, y)
					assert.ErrorIs(t, err, vkflow.ErrInvalid, "Import")
					assert.ErrorContains(t, err, fmt.Sprint(fd))
					assert.True(t, fdOpen(victim), "Import closed fd %d, handed %d", victim, fd)

					tl, err := interop.ImportTimeline(owner, fd)
					assert.Nil(t, tl)
					assert.ErrorIs(t, err, vkflow.ErrInvalid, "ImportTimeline")
					assert.True(t, fdOpen(victim), "ImportTimeline closed fd %d, handed %d", victim, fd)
				}
				err := interop.SendHandle(conn, interop.MemoryHandle{FD: fd})
				assert.ErrorIs(t, err, vkflow.ErrInvalid, "SendHandle")
				assert.Equal(t, before, openFDs(t))
				assert.Zero(t, b.MemStats().Allocations, "nothing was imported")
			})
		}
	}
	// The exporter is untouched: a fresh export imports.
	h, err := interop.Export(x)
	require.NoError(t, err)
	y, err := interop.Import(b, h, tensor.Float32, []int{64})
	require.NoError(t, err)
	require.NoError(t, y.Close())
}
