package interop_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/interop"
	"github.com/vkflow/vkflow/tensor"
)

// The cross-process tests: the test binary starts itself again as a child
// (TestXprocChild, in xproc_child_test.go), connected by a SOCK_SEQPACKET
// socket pair whose end is the child's fd 3, and drives it with commands.
// Handles travel with interop.SendHandle/RecvHandle. Both processes run
// under the validation layer with synchronization validation: the parent's
// Managers through internal/testutil as in every test, the child's the same
// way in its own test function, whose failure (any warning or error of the
// layer, a leak at Close) makes its exit status non-zero, which the parent
// checks. Error cases, lifetimes and a killed consumer are in
// xproc_err_test.go.

// xpPeer is a child process and the parent's end of its socket.
type xpPeer struct {
	t      *testing.T
	cmd    *exec.Cmd
	conn   *net.UnixConn
	mu     sync.Mutex
	out    strings.Builder
	exited bool
}

// xpStart starts the child; it is stopped (killed if it still runs) at
// the end of the test, and its output is logged if the test failed.
func xpStart(t *testing.T) *xpPeer {
	t.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_SEQPACKET|syscall.SOCK_CLOEXEC, 0)
	require.NoError(t, err)
	mine, theirs := os.NewFile(uintptr(fds[0]), "xproc-parent"), os.NewFile(uintptr(fds[1]), "xproc-child")
	c, err := net.FileConn(mine)
	mine.Close()
	if err != nil {
		theirs.Close()
		require.NoError(t, err)
	}
	p := &xpPeer{t: t, conn: c.(*net.UnixConn)}
	p.cmd = exec.Command(os.Args[0], "-test.run=^TestXprocChild$", "-test.count=1", "-test.v", "-test.timeout=5m")
	p.cmd.Env = append(os.Environ(), xprocEnv+"=1")
	p.cmd.ExtraFiles = []*os.File{theirs}
	p.cmd.Stdout, p.cmd.Stderr = (*xpPeerOut)(p), (*xpPeerOut)(p)
	err = p.cmd.Start()
	theirs.Close()
	if err != nil {
		p.conn.Close()
		require.NoError(t, err)
	}
	t.Cleanup(p.stop)
	return p
}

type xpPeerOut xpPeer

func (o *xpPeerOut) Write(b []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.out.Write(b)
}

func (p *xpPeer) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// stop ends the child if it still runs and logs its output when the test
// failed.
func (p *xpPeer) stop() {
	if !p.exited {
		p.conn.Close()
		p.cmd.Process.Kill()
		p.cmd.Wait()
		p.exited = true
	}
	if p.t.Failed() {
		p.t.Logf("child output:\n%s", p.output())
	}
}

// do sends a command (and, for import, the handle after it) and returns the
// child's reply; a command that failed in the child fails the test.
func (p *xpPeer) do(t *testing.T, c xcmd, h *interop.MemoryHandle) xreply {
	t.Helper()
	p.conn.SetDeadline(time.Now().Add(3 * time.Minute))
	require.NoError(t, xpSend(p.conn, c), "sending %s", c.Op)
	if h != nil {
		require.NoError(t, interop.SendHandle(p.conn, *h), "SendHandle")
	}
	var r xreply
	require.NoError(t, xpRecv(p.conn, &r), "the child's reply to %s (child output:\n%s)", c.Op, p.output())
	require.Empty(t, r.Err, "the child failed %s", c.Op)
	return r
}

// recvHandle receives the handle the child sends after an export's reply.
func (p *xpPeer) recvHandle(t *testing.T) interop.MemoryHandle {
	t.Helper()
	h, err := interop.RecvHandle(p.conn)
	require.NoError(t, err, "RecvHandle")
	return h
}

// exit asks the child to end and requires a clean exit: its test passed,
// validation and leak checks included.
func (p *xpPeer) exit(t *testing.T) {
	t.Helper()
	p.do(t, xcmd{Op: "exit"}, nil)
	p.conn.Close()
	err := p.cmd.Wait()
	p.exited = true
	require.NoError(t, err, "the child's exit status (child output:\n%s)", p.output())
}

// xcase is one tensor of a data test.
type xcase struct {
	dt    tensor.Dtype
	n     int
	large bool // skipped with -short
}

func (c xcase) String() string { return fmt.Sprintf("%v[%d]=%dB", c.dt, c.n, c.n*c.dt.Size()) }

// xcases are the data tests' tensors, from 1 byte to tensor.MaxBytes. The
// issue asks for up to 256 MiB; a tensor cannot exceed MaxBytes
// (maxStorageBufferRange: 128 MiB on lavapipe), so the largest cases are
// MaxBytes, given to each direction in another dtype.
func xcases(mgr *vkflow.Manager, largest tensor.Dtype) []xcase {
	max := int(tensor.MaxBytes(mgr.Runtime()))
	return []xcase{
		{dt: tensor.Int8, n: 1},
		{dt: tensor.Int8, n: 3},
		{dt: tensor.Int8, n: 4097},
		{dt: tensor.Int8, n: 1<<20 + 1},
		{dt: tensor.Uint16, n: 1},
		{dt: tensor.Uint16, n: 4099},
		{dt: tensor.Uint16, n: 1 << 19},
		{dt: tensor.Float32, n: 1},
		{dt: tensor.Float32, n: 1000003},
		{dt: tensor.Float64, n: 1},
		{dt: tensor.Float64, n: 65537},
		{dt: tensor.Float64, n: 2 << 20},
		{dt: largest, n: max / largest.Size(), large: true},
	}
}

func xctx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// TestXprocParentExports: the parent exports, fills on its GPU, the child
// imports and checks every byte, fills its own pattern on its GPU, and the
// parent checks every byte through its own tensor.
func TestXprocParentExports(t *testing.T) {
	mgr, _ := testutil.Manager(t)
	ctx := xctx(t)
	p := xpStart(t)
	for i, c := range xcases(mgr, tensor.Int8) {
		t.Run(c.String(), func(t *testing.T) {
			if c.large && testing.Short() {
				t.Skip("MaxBytes tensors: not with -short")
			}
			seed, back := uint32(0x1000+i), uint32(0x2000+i)
			x, err := tensor.New(mgr, c.dt, []int{c.n}, tensor.Exportable())
			require.NoError(t, err)
			defer x.Close()
			require.NoError(t, xpFill(ctx, mgr, x, seed))
			h, err := interop.Export(x)
			require.NoError(t, err)
			require.Equal(t, uint64(c.n*c.dt.Size()), h.Bytes)
			defer syscall.Close(h.FD) // SendHandle sends a copy
			p.do(t, xcmd{Op: "import", Slot: 1, Dtype: c.dt, Shape: []int{c.n}}, &h)
			p.do(t, xcmd{Op: "check", Slot: 1, Seed: seed}, nil)
			p.do(t, xcmd{Op: "fill", Slot: 1, Seed: back}, nil)
			require.NoError(t, xpCheck(x, back), "the child's writes, read through the parent's tensor")
			p.do(t, xcmd{Op: "close", Slot: 1}, nil)
		})
	}
	p.exit(t)
}

// TestXprocChildExports is the other direction: the child exports, fills
// on its GPU and sends; the parent imports and checks every byte, fills on
// its GPU, and the child checks every byte through its own tensor.
func TestXprocChildExports(t *testing.T) {
	mgr, _ := testutil.Manager(t)
	ctx := xctx(t)
	p := xpStart(t)
	for i, c := range xcases(mgr, tensor.Float32) {
		t.Run(c.String(), func(t *testing.T) {
			if c.large && testing.Short() {
				t.Skip("MaxBytes tensors: not with -short")
			}
			seed, back := uint32(0x3000+i), uint32(0x4000+i)
			p.do(t, xcmd{Op: "export", Slot: 2, Dtype: c.dt, Shape: []int{c.n}, Seed: seed}, nil)
			h := p.recvHandle(t)
			require.Equal(t, uint64(c.n*c.dt.Size()), h.Bytes)
			y, err := interop.Import(mgr, h, c.dt, []int{c.n})
			require.NoError(t, err)
			defer y.Close()
			require.NoError(t, xpCheck(y, seed), "the child's pattern, read through the import")
			require.NoError(t, xpFill(ctx, mgr, y, back))
			p.do(t, xcmd{Op: "check", Slot: 2, Seed: back}, nil)
			p.do(t, xcmd{Op: "close", Slot: 2}, nil)
			require.NoError(t, y.Close())
		})
	}
	p.exit(t)
}

// xpImportErr runs an import in the child that must fail, with the handle
// spoiled as edit says, and returns the child's report.
func xpImportErr(t *testing.T, p *xpPeer, h interop.MemoryHandle, dt tensor.Dtype, shape []int, edit string) xreply {
	t.Helper()
	r := p.do(t, xcmd{Op: "import", Slot: 9, Dtype: dt, Shape: shape, Edit: edit}, &h)
	require.NotEmpty(t, r.ImportErr, "the import must fail")
	require.False(t, r.FDOpen, "Import must close the fd when it fails: %s", r.ImportErr)
	return r
}
