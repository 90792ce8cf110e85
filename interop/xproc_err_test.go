package interop_test

import (
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/interop"
	"github.com/vkflow/vkflow/tensor"
)

// Cross-process error cases and lifetimes (the harness is in xproc_test.go).

// xpExported makes an exportable tensor on mgr filled with seed on the GPU and
// exports it; the handle's fd is closed at the end of the test.
func xpExported(t *testing.T, mgr *vkflow.Manager, dt tensor.Dtype, n int, seed uint32) (*tensor.Tensor, interop.MemoryHandle) {
	t.Helper()
	x, err := tensor.New(mgr, dt, []int{n}, tensor.Exportable())
	require.NoError(t, err)
	require.NoError(t, xpFill(xctx(t), mgr, x, seed))
	h, err := interop.Export(x)
	require.NoError(t, err)
	t.Cleanup(func() { syscall.Close(h.FD) })
	return x, h
}

// TestXprocImportErrors: handles spoiled on the way fail in the importing
// process with the documented error and never leave the fd open; a sender
// that closed its fd fails in SendHandle. After each, the socket and both
// Managers still work: the last subtest passes a good handle.
func TestXprocImportErrors(t *testing.T) {
	mgr, _ := testutil.Manager(t)
	p := xpStart(t)
	x, h := xpExported(t, mgr, tensor.Int8, 4096, 7)

	for _, tc := range []struct {
		name    string
		edit    string
		shape   []int
		invalid int    // errors.Is(err, ErrInvalid): 1 yes, 0 no, -1 either
		says    string // a word the error names (any of |-separated)
	}{
		{name: "wrong device UUID", edit: "device-uuid", shape: []int{4096}, invalid: 1, says: "uuid"},
		{name: "wrong driver UUID", edit: "driver-uuid", shape: []int{4096}, invalid: 1, says: "uuid"},
		{name: "shape larger than the allocation", shape: []int{int(h.Size) + 1}, invalid: 1},
		{name: "float64 larger than the allocation", shape: []int{int(h.Size)/8 + 1}, invalid: 1},
		{name: "offset past the tensor", edit: "offset", shape: []int{4096}, invalid: 1},
		{name: "fd closed by the receiver", edit: "closed-fd", shape: []int{4096}, invalid: -1, says: "fd|file descriptor|vkAllocateMemory"},
		{name: "no fd", edit: "no-fd", shape: []int{4096}, invalid: -1, says: "fd|file descriptor|vkAllocateMemory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dt := tensor.Int8
			if strings.HasPrefix(tc.name, "float64") {
				dt = tensor.Float64
			}
			r := xpImportErr(t, p, h, dt, tc.shape, tc.edit)
			t.Logf("Import: %s", r.ImportErr)
			if tc.invalid >= 0 {
				require.Equal(t, tc.invalid == 1, r.Invalid, "errors.Is(err, ErrInvalid): %s", r.ImportErr)
			}
			if tc.says != "" {
				low := strings.ToLower(r.ImportErr)
				found := false
				for _, w := range strings.Split(strings.ToLower(tc.says), "|") {
					found = found || strings.Contains(low, w)
				}
				require.True(t, found, "the error names %s: %s", tc.says, r.ImportErr)
			}
		})
	}

	t.Run("fd closed by the sender", func(t *testing.T) {
		h2, err := interop.Export(x)
		require.NoError(t, err)
		require.NoError(t, syscall.Close(h2.FD))
		err = interop.SendHandle(p.conn, h2)
		require.Error(t, err, "SendHandle with a closed fd")
		t.Logf("SendHandle: %v", err)
	})

	t.Run("a good handle after all that", func(t *testing.T) {
		p.do(t, xcmd{Op: "import", Slot: 1, Dtype: tensor.Int8, Shape: []int{4096}}, &h)
		p.do(t, xcmd{Op: "check", Slot: 1, Seed: 7}, nil)
		p.do(t, xcmd{Op: "fill", Slot: 1, Seed: 8}, nil)
		require.NoError(t, xpCheck(x, 8))
	})
	p.exit(t)
}

// TestXprocExporterClosed: the memory outlives the exporting tensor and its
// Manager, in both orders and both directions.
func TestXprocExporterClosed(t *testing.T) {
	mgr, _ := testutil.Manager(t)
	ctx := xctx(t)
	p := xpStart(t)
	const n = 1<<20 + 5

	t.Run("import after the exporter closed", func(t *testing.T) {
		m2, _ := testutil.Manager(t)
		x, h := xpExported(t, m2, tensor.Float32, n, 11)
		require.NoError(t, x.Close())
		require.NoError(t, m2.Close())
		p.do(t, xcmd{Op: "import", Slot: 1, Dtype: tensor.Float32, Shape: []int{n}}, &h)
		p.do(t, xcmd{Op: "check", Slot: 1, Seed: 11}, nil)
		p.do(t, xcmd{Op: "fill", Slot: 1, Seed: 12}, nil)
		p.do(t, xcmd{Op: "check", Slot: 1, Seed: 12}, nil)
		p.do(t, xcmd{Op: "close", Slot: 1}, nil)
	})

	t.Run("exporter closes while imported", func(t *testing.T) {
		m3, _ := testutil.Manager(t)
		x, h := xpExported(t, m3, tensor.Uint16, n, 13)
		p.do(t, xcmd{Op: "import", Slot: 2, Dtype: tensor.Uint16, Shape: []int{n}}, &h)
		require.NoError(t, x.Close())
		require.NoError(t, m3.Close())
		p.do(t, xcmd{Op: "check", Slot: 2, Seed: 13}, nil)
		p.do(t, xcmd{Op: "fill", Slot: 2, Seed: 14}, nil)
		p.do(t, xcmd{Op: "check", Slot: 2, Seed: 14}, nil)
		p.do(t, xcmd{Op: "close", Slot: 2}, nil)
	})

	t.Run("the child's exporter closed before the import", func(t *testing.T) {
		p.do(t, xcmd{Op: "export", Slot: 3, Dtype: tensor.Float64, Shape: []int{n}, Seed: 15, Close: true}, nil)
		h := p.recvHandle(t)
		y, err := interop.Import(mgr, h, tensor.Float64, []int{n})
		require.NoError(t, err)
		defer y.Close()
		require.NoError(t, xpCheck(y, 15))
		require.NoError(t, xpFill(ctx, mgr, y, 16))
		require.NoError(t, xpCheck(y, 16))
	})
	p.exit(t)
}

// TestXprocConsumerKilled: the child imports the parent's memory, submits
// long GPU work on it and is killed (SIGKILL) meanwhile. The parent does not
// notice beyond the exit status: its tensor still works, and once it is
// closed the allocator's counters and the process's open fds are back where
// they were before the export.
func TestXprocConsumerKilled(t *testing.T) {
	mgr, _ := testutil.Manager(t)
	ctx := xctx(t)
	const n = 4 << 20 // uint32: 16 MiB

	// Compile and run the fill once, so that the baseline holds what the
	// first use leaves behind (pipeline cache, shader cache files read).
	warm, err := tensor.New(mgr, tensor.Uint32, []int{n}, tensor.Exportable())
	require.NoError(t, err)
	require.NoError(t, xpFill(ctx, mgr, warm, 1))
	require.NoError(t, warm.Close())
	stats0, fds0 := xpSettle(t, mgr, xpMemStats(mgr), -1)

	p := xpStart(t)
	x, err := tensor.New(mgr, tensor.Uint32, []int{n}, tensor.Exportable())
	require.NoError(t, err)
	require.NoError(t, xpFill(ctx, mgr, x, 21))
	h, err := interop.Export(x)
	require.NoError(t, err)
	p.do(t, xcmd{Op: "import", Slot: 1, Dtype: tensor.Uint32, Shape: []int{n}}, &h)
	require.NoError(t, syscall.Close(h.FD))
	p.do(t, xcmd{Op: "check", Slot: 1, Seed: 21}, nil)
	p.do(t, xcmd{Op: "busy", Slot: 1}, nil)

	time.Sleep(50 * time.Millisecond)
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGKILL))
	err = p.cmd.Wait()
	p.exited = true
	p.conn.Close()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	ws := ee.Sys().(syscall.WaitStatus)
	require.True(t, ws.Signaled() && ws.Signal() == syscall.SIGKILL, "the child was killed: %v", err)

	// The exporter's tensor is intact and usable.
	require.NoError(t, xpFill(ctx, mgr, x, 22))
	require.NoError(t, xpCheck(x, 22))
	require.NoError(t, x.Close())
	stats, fds := xpSettle(t, mgr, stats0, fds0)
	require.Equal(t, stats0, stats, "MemStats after closing the exported tensor")
	require.Equal(t, fds0, fds, "open fds after closing the exported tensor")
}

// xpLiveStats are the MemStats fields that count what is alive now.
type xpLiveStats struct {
	Blocks, Allocations int
	BlockBytes          uint64
}

func xpMemStats(mgr *vkflow.Manager) xpLiveStats {
	s := mgr.MemStats()
	return xpLiveStats{s.Blocks, s.Allocations, s.BlockBytes}
}

// xpSettle waits up to 5 s for mgr's live MemStats to equal want and the
// open fd count to equal wantFDs (-1: any), as deferred frees land, and
// returns what it saw last.
func xpSettle(t *testing.T, mgr *vkflow.Manager, want xpLiveStats, wantFDs int) (xpLiveStats, int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		s, fds := xpMemStats(mgr), xpOpenFDs(t)
		if (s == want && (wantFDs < 0 || fds == wantFDs)) || time.Now().After(deadline) {
			return s, fds
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// xpOpenFDs counts this process's open file descriptors.
func xpOpenFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	return len(ents) // includes the directory's own fd, every time
}
