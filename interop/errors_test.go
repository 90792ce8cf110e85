package interop_test

import (
	"fmt"
	"os"
	"syscall"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/interop"
	"github.com/vkflow/vkflow/tensor"
)

// Every failing Import is an error, never a crash or a hang, and consumes
// the fd it was given: the process has as many fds open afterwards as
// before the fd was made.
func TestImportErrors(t *testing.T) {
	a, b := pair(t)
	closedB, _ := testutil.Manager(t)
	require.NoError(t, closedB.Close())
	// Imports the driver itself rejects go to a Manager of their own:
	// lavapipe reports its errors through the debug messenger too.
	driverB, vd := testutil.Manager(t)
	vd.Expect("lvp_device.c")
	x, err := tensor.New(a, tensor.Float32, []int{1024}, tensor.Exportable())
	require.NoError(t, err)
	info := b.Device()

	export := func(t *testing.T) interop.MemoryHandle {
		h, err := interop.Export(x)
		require.NoError(t, err)
		return h
	}
	withFD := func(fd int) func(*testing.T) interop.MemoryHandle {
		return func(t *testing.T) interop.MemoryHandle {
			h := export(t)
			require.NoError(t, syscall.Close(h.FD))
			h.FD = fd
			return h
		}
	}
	tests := []struct {
		name   string
		handle func(*testing.T) interop.MemoryHandle
		owner  interop.Owner
		dtype  tensor.Dtype
		shape  []int
		want   error
		says   []string // substrings of the message
		driver bool     // the driver sees the fd (and rejects it)
	}{
		{name: "wrong device UUID", handle: func(t *testing.T) interop.MemoryHandle {
			h := export(t)
			h.DeviceUUID[0] ^= 0xff
			return h
		}, want: vkflow.ErrInvalid, says: []string{"device UUID", fmt.Sprintf("%x", info.DeviceUUID)}},
		{name: "wrong driver UUID", handle: func(t *testing.T) interop.MemoryHandle {
			h := export(t)
			h.DriverUUID[15] ^= 1
			return h
		}, want: vkflow.ErrInvalid, says: []string{"driver UUID", fmt.Sprintf("%x", info.DriverUUID)}},
		{name: "shape larger than the tensor", handle: export, shape: []int{1025}, want: vkflow.ErrInvalid, says: []string{"does not fit"}},
		{name: "dtype larger than the tensor", handle: export, dtype: tensor.Float64, want: vkflow.ErrInvalid, says: []string{"8192 bytes"}},
		{name: "bytes beyond the allocation", handle: func(t *testing.T) interop.MemoryHandle {
			h := export(t)
			h.Bytes = h.Size + 4
			return h
		}, want: vkflow.ErrInvalid, says: []string{"does not fit"}},
		{name: "unknown memory type", handle: func(t *testing.T) interop.MemoryHandle {
			h := export(t)
			h.MemoryType = 31
			return h
		}, want: vkflow.ErrInvalid, says: []string{"memory type 31"}},
		{name: "dedicated at an offset", handle: func(t *testing.T) interop.MemoryHandle {
			h := export(t)
			h.Offset, h.Size = 64, h.Size+64
			return h
		}, want: vkflow.ErrInvalid, says: []string{"offset 0, not 64"}},
		{name: "more memory than the dedicated buffer", handle: func(t *testing.T) interop.MemoryHandle {
			h := export(t)
			h.Size += 1 << 20
			return h
		}, want: vkflow.ErrInvalid, says: []string{"does not match the buffer"}},
		{name: "more memory than the fd holds", handle: func(t *testing.T) interop.MemoryHandle {
			h := export(t)
			h.Size += 1 << 20
			h.Dedicated = false
			return h
		}, says: []string{"vkAllocateMemory"}, driver: true},
		{name: "unknown dtype", handle: export, dtype: tensor.Dtype(99), want: vkflow.ErrInvalid},
		{name: "negative fd", handle: withFD(-1), want: vkflow.ErrInvalid, says: []string{"-1"}},
		{name: "closed fd", handle: func(t *testing.T) interop.MemoryHandle {
			h := export(t)
			require.NoError(t, syscall.Close(h.FD))
			return h
		}, want: syscall.EBADF, says: []string{"fd "}},
		{name: "a pipe", handle: func(t *testing.T) interop.MemoryHandle {
			var p [2]int
			require.NoError(t, syscall.Pipe2(p[:], syscall.O_CLOEXEC))
			require.NoError(t, syscall.Close(p[1]))
			return withFD(p[0])(t)
		}, want: vkflow.ErrInvalid, says: []string{"a pipe"}},
		{name: "a socket", handle: func(t *testing.T) interop.MemoryHandle {
			p, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
			require.NoError(t, err)
			require.NoError(t, syscall.Close(p[1]))
			return withFD(p[0])(t)
		}, want: vkflow.ErrInvalid, says: []string{"a socket"}},
		{name: "a regular file", handle: func(t *testing.T) interop.MemoryHandle {
			f, err := os.CreateTemp(t.TempDir(), "notmemory")
			require.NoError(t, err)
			require.NoError(t, f.Truncate(1<<16))
			fd, err := syscall.Dup(int(f.Fd()))
			require.NoError(t, err)
			require.NoError(t, f.Close())
			return withFD(fd)(t)
		}, want: vkflow.ErrInvalid, says: []string{"a regular file"}},
		{name: "a memfd that is not exported memory", handle: func(t *testing.T) interop.MemoryHandle {
			// A memfd is let through to the driver (lavapipe's exports are
			// memfds), which rejects this one.
			name := []byte("notmemory\x00")
			r, _, e := syscall.Syscall(sysMemfdCreate, uintptr(unsafe.Pointer(&name[0])), 1, 0) // MFD_CLOEXEC
			require.Zero(t, e)
			fd := int(r)
			require.NoError(t, syscall.Ftruncate(fd, 1<<16))
			return withFD(fd)(t)
		}, want: vkflow.ErrInvalid, says: []string{"vkAllocateMemory"}, driver: true},
		{name: "a device file", handle: func(t *testing.T) interop.MemoryHandle {
			fd, err := syscall.Open("/dev/null", syscall.O_RDWR|syscall.O_CLOEXEC, 0)
			require.NoError(t, err)
			return withFD(fd)(t)
		}, want: vkflow.ErrInvalid},
		{name: "closed Manager", handle: export, owner: closedB, want: vkflow.ErrClosed},
		{name: "nil Manager", handle: export, owner: (*vkflow.Manager)(nil), want: vkflow.ErrClosed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			owner := tt.owner
			switch {
			case tt.driver:
				owner = driverB
			case owner == nil:
				owner = b
			}
			dtype, shape := tt.dtype, tt.shape
			if dtype == 0 {
				dtype = tensor.Float32
			}
			if shape == nil {
				shape = []int{1024}
			}
			before := openFDs(t)
			h := tt.handle(t)
			y, err := interop.Import(owner, h, dtype, shape)
			require.Error(t, err)
			assert.Nil(t, y)
			if tt.want != nil {
				assert.ErrorIs(t, err, tt.want)
			}
			for _, s := range tt.says {
				assert.ErrorContains(t, err, s)
			}
			assert.Equal(t, before, openFDs(t), "Import consumed the fd: %v", err)
			t.Log(err)
		})
	}
	// Nothing leaked on the importing side, and the exporter still works.
	assert.Zero(t, b.MemStats().Allocations)
	assert.Zero(t, driverB.MemStats().Allocations)
	require.NoError(t, tensor.Write(x, make([]float32, 1024)))
}

func TestExportErrors(t *testing.T) {
	a, b := pair(t)
	plain, err := tensor.New(a, tensor.Float32, []int{4})
	require.NoError(t, err)
	closed, err := tensor.New(a, tensor.Float32, []int{4}, tensor.Exportable())
	require.NoError(t, err)
	require.NoError(t, closed.Close())
	src, err := tensor.New(a, tensor.Float32, []int{4}, tensor.Exportable())
	require.NoError(t, err)
	h, err := interop.Export(src)
	require.NoError(t, err)
	imported, err := interop.Import(b, h, tensor.Float32, []int{4})
	require.NoError(t, err)
	c, _ := testutil.Manager(t)
	orphan, err := tensor.New(c, tensor.Float32, []int{4}, tensor.Exportable())
	require.NoError(t, err)
	require.NoError(t, c.Close())

	tests := []struct {
		name string
		t    *tensor.Tensor
		want error
		says string
	}{
		{"nil tensor", nil, vkflow.ErrInvalid, "nil tensor"},
		{"not exportable", plain, vkflow.ErrInvalid, "tensor.Exportable()"},
		{"an import", imported, vkflow.ErrInvalid, "not exportable"},
		{"closed tensor", closed, vkflow.ErrClosed, "tensor"},
		{"closed Manager", orphan, vkflow.ErrClosed, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := openFDs(t)
			h, err := interop.Export(tt.t)
			assert.ErrorIs(t, err, tt.want)
			assert.ErrorContains(t, err, tt.says)
			assert.Equal(t, -1, h.FD)
			assert.Equal(t, before, openFDs(t))
		})
	}
}

// Exportable is a Device-memory option; the other kinds are refused before
// anything is allocated.
func TestExportableOption(t *testing.T) {
	a, _ := pair(t)
	before := a.MemStats()
	for _, m := range []tensor.Memory{tensor.Host, tensor.Storage} {
		x, err := tensor.New(a, tensor.Float32, []int{4}, tensor.In(m), tensor.Exportable())
		assert.ErrorIs(t, err, vkflow.ErrInvalid, "%v", m)
		assert.ErrorContains(t, err, "Device memory")
		assert.Nil(t, x)
	}
	_, err := tensor.New(a, tensor.Float32, []int{int(tensor.MaxBytes(a.Runtime())/4) + 1}, tensor.Exportable())
	assert.ErrorIs(t, err, vkflow.ErrInvalid, "tensor.New's size check still applies")
	assert.Equal(t, before, a.MemStats())
}
