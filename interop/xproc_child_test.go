package interop_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/algorithm"
	"github.com/vkflow/vkflow/glsl"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/interop"
	"github.com/vkflow/vkflow/sequence"
	"github.com/vkflow/vkflow/tensor"
)

// This file holds the child's side of the cross-process tests
// (xproc_test.go): TestXprocChild, which runs only in a child process, and
// the GPU pattern both sides write and check.

// xprocEnv marks the child: the test binary runs itself again with it set,
// -test.run=^TestXprocChild$, and its end of a socket pair as fd 3.
const xprocEnv = "VKFLOW_XPROC_CHILD"

// xcmd is a command from the parent. Every command, reply and handle is one
// datagram of a SOCK_SEQPACKET socket.
type xcmd struct {
	Op    string // import, export, fill, check, busy, close, exit
	Slot  int    // the child's tensor the command is about
	Dtype tensor.Dtype
	Shape []int
	Seed  uint32
	Edit  string // import: how to spoil the handle first (see spoil)
	Close bool   // export: close the tensor and its Manager before sending the handle
}

// xreply is the child's answer. Err is a failure of the command itself;
// an import that fails on purpose reports ImportErr instead.
type xreply struct {
	Err       string
	ImportErr string
	Invalid   bool // errors.Is(import error, vkflow.ErrInvalid)
	FDOpen    bool // the handle's fd was still open after the failed import
}

// TestXprocChild is the child process of the cross-process tests; run
// directly, it skips. It opens a validated Manager (internal/testutil: any
// warning or error of the layer fails it, leaks at Close included, and the
// parent sees the failure in the exit status) and serves the parent's
// commands until "exit" or the socket closes.
func TestXprocChild(t *testing.T) {
	if os.Getenv(xprocEnv) == "" {
		t.Skip("the child process of the cross-process tests; they run it")
	}
	mgr, _ := testutil.Manager(t)
	f := os.NewFile(3, "xproc-socket")
	c, err := net.FileConn(f)
	require.NoError(t, err)
	f.Close()
	conn := c.(*net.UnixConn)
	defer conn.Close()
	ch := &xchild{t: t, mgr: mgr, conn: conn, slots: map[int]*tensor.Tensor{}}
	for {
		var cmd xcmd
		if err := xpRecv(conn, &cmd); err != nil {
			t.Logf("child: socket closed (%v)", err)
			return
		}
		rep, h := ch.do(cmd)
		if rep.Err != "" {
			t.Errorf("child: %s: %s", cmd.Op, rep.Err)
		}
		require.NoError(t, xpSend(conn, rep))
		if h != nil {
			// An export's handle follows its reply.
			require.NoError(t, interop.SendHandle(conn, *h))
			syscall.Close(h.FD)
		}
		if cmd.Op == "exit" {
			return
		}
	}
}

type xchild struct {
	t     *testing.T
	mgr   *vkflow.Manager
	conn  *net.UnixConn
	slots map[int]*tensor.Tensor
	busy  []*sequence.Sequence
}

// do runs a command; an export returns the handle to send after the reply.
func (c *xchild) do(cmd xcmd) (xreply, *interop.MemoryHandle) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	fail := func(err error) (xreply, *interop.MemoryHandle) { return xreply{Err: err.Error()}, nil }
	x := c.slots[cmd.Slot]
	switch cmd.Op {
	case "import":
		h, err := interop.RecvHandle(c.conn)
		if err != nil {
			return fail(err)
		}
		fd := h.FD
		closedByUs := xpSpoil(&h, cmd.Edit)
		y, err := interop.Import(c.mgr, h, cmd.Dtype, cmd.Shape)
		if err != nil {
			rep := xreply{ImportErr: err.Error(), Invalid: errors.Is(err, vkflow.ErrInvalid)}
			if !closedByUs {
				rep.FDOpen = xpFDOpen(fd)
				if rep.FDOpen {
					syscall.Close(fd)
				}
			}
			return rep, nil
		}
		if cmd.Edit != "" {
			y.Close()
			return fail(fmt.Errorf("import with handle edit %q succeeded", cmd.Edit))
		}
		c.slots[cmd.Slot] = y
	case "export":
		h, err := c.export(ctx, cmd)
		if err != nil {
			return fail(err)
		}
		return xreply{}, &h
	case "fill":
		if err := xpFill(ctx, c.mgr, x, cmd.Seed); err != nil {
			return fail(err)
		}
	case "check":
		if err := xpCheck(x, cmd.Seed); err != nil {
			return fail(err)
		}
	case "busy":
		// GPU work in flight on the imported memory, not waited for: the
		// parent kills this process meanwhile.
		seq, err := xpBusy(c.mgr, x)
		if err != nil {
			return fail(err)
		}
		c.busy = append(c.busy, seq)
	case "close":
		if err := x.Close(); err != nil {
			return fail(err)
		}
		delete(c.slots, cmd.Slot)
	case "exit":
	default:
		return fail(fmt.Errorf("unknown command %q", cmd.Op))
	}
	return xreply{}, nil
}

// export makes an exportable tensor, fills it on this GPU and exports it.
// With cmd.Close, the tensor lives on a Manager of its own, and both are
// closed before the handle is returned.
func (c *xchild) export(ctx context.Context, cmd xcmd) (interop.MemoryHandle, error) {
	mgr := c.mgr
	if cmd.Close {
		mgr, _ = testutil.Manager(c.t)
	}
	x, err := tensor.New(mgr, cmd.Dtype, cmd.Shape, tensor.Exportable())
	if err != nil {
		return interop.MemoryHandle{}, err
	}
	if err := xpFill(ctx, mgr, x, cmd.Seed); err != nil {
		return interop.MemoryHandle{}, err
	}
	h, err := interop.Export(x)
	if err != nil {
		return h, err
	}
	if cmd.Close {
		if err := errors.Join(x.Close(), mgr.Close()); err != nil {
			syscall.Close(h.FD)
			return h, err
		}
	} else {
		c.slots[cmd.Slot] = x
	}
	return h, nil
}

// xpSpoil edits a handle before an import that must fail, and reports whether
// it closed the fd itself.
func xpSpoil(h *interop.MemoryHandle, edit string) (closed bool) {
	switch edit {
	case "device-uuid":
		h.DeviceUUID[3] ^= 0x5a
	case "driver-uuid":
		h.DriverUUID[15] ^= 0x01
	case "offset":
		h.Offset = h.Size - 1 // the tensor's bytes no longer fit after it
	case "closed-fd":
		syscall.Close(h.FD)
		return true
	case "no-fd":
		syscall.Close(h.FD)
		h.FD = -1
		return true
	}
	return false
}

// xpFDOpen reports whether fd is an open descriptor.
func xpFDOpen(fd int) bool {
	_, err := xpFcntl(fd, syscall.F_GETFD)
	return err == nil
}

func xpFcntl(fd, cmd int) (int, error) {
	r, _, e := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), uintptr(cmd), 0)
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}

func xpSend(c *net.UnixConn, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = c.Write(b)
	return err
}

func xpRecv(c *net.UnixConn, v any) error {
	buf := make([]byte, 64<<10)
	n, err := c.Read(buf)
	if err != nil {
		return err
	}
	return json.Unmarshal(buf[:n], v)
}

// The pattern: element i of a tensor filled with seed is a value of its
// dtype made from xpMix(i, seed), the same on the GPU (xpFillGLSL) and the CPU
// (xpPattern). Every value is exact in its dtype, so the bytes are too.

const xpFillGLSL = `#version 450
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_16bit_storage : require
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) writeonly buffer B { T x[]; };
layout(push_constant) uniform P { uint n; uint seed; };
uint xpMix(uint i) {
	uint h = (i ^ seed) * 0x9E3779B1u;
	h ^= h >> 15;
	h *= 0x85EBCA77u;
	h ^= h >> 13;
	h *= 0xC2B2AE3Du;
	h ^= h >> 16;
	return h;
}
void main() {
	uint i = gl_GlobalInvocationID.x;
	if (i >= n) return;
	uint h = xpMix(i);
	x[i] = VALUE;
}
`

var xpFillTypes = map[tensor.Dtype][2]string{
	tensor.Int8:    {"int8_t", "int8_t(int(h & 0xFFu) - 128)"},
	tensor.Uint16:  {"uint16_t", "uint16_t(h & 0xFFFFu)"},
	tensor.Uint32:  {"uint", "h"},
	tensor.Float32: {"float", "float(int(h & 0xFFFFFFu) - 0x800000) * (1.0 / 1024.0)"},
	tensor.Float64: {"double", "double(h) + double(xpMix(i + 0x68E31DA4u) & 0xFFFFFu) * (1.0lf / 1048576.0lf)"},
}

func xpMix(i, seed uint32) uint32 {
	h := (i ^ seed) * 0x9E3779B1
	h ^= h >> 15
	h *= 0x85EBCA77
	h ^= h >> 13
	h *= 0xC2B2AE3D
	h ^= h >> 16
	return h
}

// xpPatternInto writes into b what xpFill writes into the elements
// first, first+1, ... of a dt tensor (len(b) a multiple of dt's size). It is
// exempt from the race detector's instrumentation: it touches only b, and
// instrumented it takes seconds at 128 MiB.
//
//go:norace
func xpPatternInto(b []byte, dt tensor.Dtype, first int, seed uint32) {
	for k := range uint32(len(b) / dt.Size()) {
		i := uint32(first) + k
		h := xpMix(i, seed)
		switch dt {
		case tensor.Int8:
			b[k] = byte(int8(int32(h&0xFF) - 128))
		case tensor.Uint16:
			binary.LittleEndian.PutUint16(b[2*k:], uint16(h))
		case tensor.Uint32:
			binary.LittleEndian.PutUint32(b[4*k:], h)
		case tensor.Float32:
			f := float32(int32(h&0xFFFFFF)-0x800000) * (1.0 / 1024.0)
			binary.LittleEndian.PutUint32(b[4*k:], math.Float32bits(f))
		case tensor.Float64:
			f := float64(h) + float64(xpMix(i+0x68E31DA4, seed)&0xFFFFF)*(1.0/1048576.0)
			binary.LittleEndian.PutUint64(b[8*k:], math.Float64bits(f))
		default:
			panic("xpPatternInto: no pattern for " + dt.String())
		}
	}
}

var (
	xpFillMu   sync.Mutex
	xpFillCode = map[tensor.Dtype][]byte{}
)

// xpFill writes the pattern of seed into x with a kernel on its Manager's GPU
// and waits for it.
func xpFill(ctx context.Context, mgr *vkflow.Manager, x *tensor.Tensor, seed uint32) error {
	if x == nil {
		return errors.New("fill: no tensor in that slot")
	}
	code, err := xpFillKernel(x.Dtype())
	if err != nil {
		return err
	}
	n := x.Len()
	a, err := algorithm.New(mgr, code, []*tensor.Tensor{x}, algorithm.Workgroups(uint32((n+255)/256), 1, 1))
	if err != nil {
		return err
	}
	defer a.Close()
	seq, err := sequence.New(mgr, 0)
	if err != nil {
		return err
	}
	defer seq.Close()
	return seq.Dispatch(a, uint32(n), seed).SyncLocal(x).Eval(ctx)
}

func xpFillKernel(dt tensor.Dtype) ([]byte, error) {
	xpFillMu.Lock()
	defer xpFillMu.Unlock()
	if code, ok := xpFillCode[dt]; ok {
		return code, nil
	}
	ty, ok := xpFillTypes[dt]
	if !ok {
		return nil, fmt.Errorf("fill: no kernel for %v", dt)
	}
	code, err := glsl.Compile(xpFillGLSL, glsl.Define("T", ty[0]), glsl.Define("VALUE", ty[1]))
	if err != nil {
		return nil, err
	}
	xpFillCode[dt] = code
	return code, nil
}

// xpCheck compares every byte of x, read through this process's own
// tensor (in place where it is mapped, else a copy), with the pattern of
// seed, a MiB at a time.
func xpCheck(x *tensor.Tensor, seed uint32) error {
	if x == nil {
		return errors.New("check: no tensor in that slot")
	}
	got, err := xpBytes(x)
	if err != nil {
		return err
	}
	dt := x.Dtype()
	want := make([]byte, 1<<20) // a multiple of every dtype's size
	for off := 0; off < len(got); off += len(want) {
		w := want[:min(len(want), len(got)-off)]
		xpPatternInto(w, dt, off/dt.Size(), seed)
		if g := got[off : off+len(w)]; !bytes.Equal(g, w) {
			i := off + xpFirstDiff(g, w)
			return fmt.Errorf("%v[%d] (%d bytes): byte %d is %#x, want %#x (seed %#x)", dt, x.Len(), len(got), i, got[i], w[i-off], seed)
		}
	}
	return nil
}

// xpBytes returns x's bytes: a view of its memory when it is mapped, else
// a copy.
func xpBytes(x *tensor.Tensor) ([]byte, error) {
	if !x.Mapped() {
		b := make([]byte, x.Bytes())
		return b, x.ReadBytes(b)
	}
	var p unsafe.Pointer
	var err error
	switch x.Dtype() {
	case tensor.Int8:
		var s []int8
		s, err = x.Int8s()
		p = unsafe.Pointer(unsafe.SliceData(s))
	case tensor.Uint16:
		var s []uint16
		s, err = x.Uint16s()
		p = unsafe.Pointer(unsafe.SliceData(s))
	case tensor.Uint32:
		var s []uint32
		s, err = x.Uint32s()
		p = unsafe.Pointer(unsafe.SliceData(s))
	case tensor.Float32:
		var s []float32
		s, err = x.Float32s()
		p = unsafe.Pointer(unsafe.SliceData(s))
	case tensor.Float64:
		var s []float64
		s, err = x.Float64s()
		p = unsafe.Pointer(unsafe.SliceData(s))
	default:
		return nil, fmt.Errorf("xpBytes: %v", x.Dtype())
	}
	if err != nil {
		return nil, err
	}
	return unsafe.Slice((*byte)(p), x.Bytes()), nil
}

//go:norace
func xpFirstDiff(a, b []byte) int {
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	return len(a)
}

// xpBusyGLSL keeps the GPU on x for a long time: every element goes through
// many rounds of an LCG.
const xpBusyGLSL = `#version 450
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) buffer B { uint x[]; };
layout(push_constant) uniform P { uint n; uint rounds; };
void main() {
	uint i = gl_GlobalInvocationID.x;
	if (i >= n) return;
	uint v = x[i];
	for (uint k = 0u; k < rounds; k++) v = v * 1664525u + 1013904223u;
	x[i] = v;
}
`

// xpBusy submits several long dispatches over x (uint32) without waiting for
// them; the sequence is returned so that it stays referenced.
func xpBusy(mgr *vkflow.Manager, x *tensor.Tensor) (*sequence.Sequence, error) {
	if x == nil {
		return nil, errors.New("busy: no tensor in that slot")
	}
	code, err := glsl.Compile(xpBusyGLSL)
	if err != nil {
		return nil, err
	}
	n := x.Len()
	a, err := algorithm.New(mgr, code, []*tensor.Tensor{x}, algorithm.Workgroups(uint32((n+255)/256), 1, 1))
	if err != nil {
		return nil, err
	}
	seq, err := sequence.New(mgr, 0)
	if err != nil {
		return nil, err
	}
	for range 8 {
		seq.Dispatch(a, uint32(n), uint32(1<<12))
	}
	p := seq.EvalAsync()
	if err := p.Err(); err != nil {
		return nil, err
	}
	if p.Done() {
		return nil, errors.New("busy: the work finished at once")
	}
	return seq, nil
}
