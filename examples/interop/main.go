// Command interop hands GPU memory from one process to another without a
// copy, and back (package interop, docs/INTEROP.md): a tensor's memory is
// exported as an opaque fd, sent with SCM_RIGHTS over a Unix socket and
// imported by the other process, whose GPU then reads and writes the very
// same pages.
//
// The parent computes step 0 into an exported tensor (a kernel writes a hash
// of each index), starts itself again as the child (the socket pair's other
// end is the child's fd 3) and sends it the memory. The child imports it,
// reads it on its GPU (a checksum kernel over all of it, timed against a
// memcpy of the same size) and checks every element on the host. Then the
// two take turns over the same memory: the child computes step 1 in place,
// the parent checks it through its own tensor and computes step 2 in place,
// and so on for -steps steps. Each step is x = x*a + b with constants of its
// own; such steps do not commute, so a step run out of order, or on stale
// memory, shows in the values. Both processes check the final values through
// their own tensors. Any mismatch exits with status 1 (3: a validation
// message under -validate).
//
// Ordering between the processes: where both devices can export and import
// timeline semaphores (VK_KHR_external_semaphore_fd), the parent exports a
// timeline and sends its fd too, and every step's submit waits on the GPU for
// the previous step's value and signals its own; no host waits in between.
// Where they cannot (lavapipe), the host relays: the side that finished step
// s waits for it on the host and sends a message; the other side, whose step
// s+1 is already submitted waiting on a local timeline, checks the memory and
// signals that timeline from the host. The program prints which ordering it
// used and why.
//
//	go run ./examples/interop [-mib 64] [-steps 4] [-validate]
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/interop"
	"github.com/vkflow/vkflow/tensor"
	"github.com/vkflow/vkflow/vk"
)

// config is what the parent tells the child.
type config struct {
	Bytes    int64 // the tensor's size (a multiple of 16: the checksum reads vec4s of uint32)
	Steps    int   // steps after step 0, taken in turns: the child's odd, the parent's even
	Validate bool  // the validation layer in both processes; any warning or error fails
}

// timeout bounds the whole exchange (socket reads and GPU waits).
const timeout = 2 * time.Minute

func main() {
	mib := flag.Int("mib", 64, "tensor size in MiB (at most the device's tensor.MaxBytes)")
	steps := flag.Int("steps", 4, "steps after step 0, taken in turns by the child and the parent")
	validate := flag.Bool("validate", false, "validation layer in both processes; any warning or error fails")
	flag.Parse()

	var err error
	var val validator
	if os.Getenv(childEnv) != "" {
		err = runChild(&val)
	} else {
		cfg := config{Bytes: int64(*mib) << 20, Steps: *steps, Validate: *validate}
		err = runParent(cfg, &val)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "interop (%s): %v\n", who(), err)
		os.Exit(1)
	}
	if n := val.count(); n > 0 {
		fmt.Fprintf(os.Stderr, "interop (%s): %d validation messages\n", who(), n)
		os.Exit(3)
	}
}

func who() string {
	if os.Getenv(childEnv) != "" {
		return "child"
	}
	return "parent"
}

func runParent(cfg config, val *validator) (err error) {
	mgr, err := open(cfg, val)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := mgr.Close(); err == nil {
			err = cerr
		}
	}()
	return parent(mgr, cfg, startChild, os.Stdout)
}

func runChild(val *validator) error {
	l, err := childLink()
	if err != nil {
		return err
	}
	defer l.c.Close()
	var mgr *vkflow.Manager
	err = child(l, func(cfg config) (*vkflow.Manager, error) {
		mgr, err = open(cfg, val)
		return mgr, err
	}, os.Stdout)
	if mgr != nil {
		if cerr := mgr.Close(); err == nil {
			err = cerr
		}
	}
	return err
}

// open opens the default device, with the validation layer when asked.
func open(cfg config, val *validator) (*vkflow.Manager, error) {
	var opts []vkflow.Option
	if cfg.Validate {
		opts = append(opts, vkflow.WithValidation(true), vkflow.WithDebugHook(val.hook))
	}
	return vkflow.New(opts...)
}

// validator counts the validation layer's warnings and errors (the
// loader's own messages do not count), as the test suite does.
type validator struct {
	mu sync.Mutex
	n  int
}

func (v *validator) hook(m vk.Message) {
	if m.Severity < vk.SeverityWarning || m.FromLoader() {
		return
	}
	v.mu.Lock()
	v.n++
	v.mu.Unlock()
	fmt.Fprintf(os.Stderr, "interop (%s): validation %s %s: %s\n", who(), m.Severity, m.ID, m.Text)
}

func (v *validator) count() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.n
}

// parent runs the parent's side on mgr; spawn starts the child with the
// given socket as its fd 3.
func parent(mgr *vkflow.Manager, cfg config, spawn func(*os.File) (*exec.Cmd, error), out io.Writer) (err error) {
	if cfg.Bytes <= 0 || cfg.Bytes%16 != 0 || cfg.Steps < 0 {
		return fmt.Errorf("size %d bytes (want a positive multiple of 16), %d steps", cfg.Bytes, cfg.Steps)
	}
	if err := interop.Supported(mgr); err != nil {
		return err
	}
	fmt.Fprintln(out, "device:", mgr.Device().Name)

	l, end, err := pair()
	if err != nil {
		return err
	}
	cmd, err := spawn(end)
	end.Close()
	if err != nil {
		l.c.Close()
		return fmt.Errorf("starting the child: %w", err)
	}
	// On any error, tell the child and close the socket, so that it ends
	// too; then collect its status.
	defer func() {
		if err != nil {
			l.send(msg{Kind: "error", Err: err.Error()})
		}
		l.c.Close()
		if werr := cmd.Wait(); werr != nil && err == nil {
			err = fmt.Errorf("child: %w", werr)
		}
	}()
	l.c.SetDeadline(time.Now().Add(timeout))

	if err := l.send(msg{Kind: "config", Cfg: &cfg}); err != nil {
		return err
	}
	ready, err := l.recv("ready")
	if err != nil {
		return err
	}
	shared, why := orderingMode(interop.TimelinesSupported(mgr), ready.Timeline)
	fmt.Fprintln(out, "ordering:", why)

	x, err := tensor.New(mgr, tensor.Uint32, []int{int(cfg.Bytes / 4)}, tensor.Exportable())
	if err != nil {
		return err
	}
	s, err := newSide(mgr, cfg, 0, x)
	if err != nil {
		return err
	}
	defer s.close()
	if shared {
		if s.shared, err = newSharedTimeline(mgr); err != nil {
			return err
		}
	}
	if err := s.produce(); err != nil {
		return err
	}

	h, err := interop.Export(s.x)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "parent: exported %s: fd %d, allocation %d bytes (tensor at offset %d), memory type %d, dedicated %v, device %x\n",
		size(cfg.Bytes), h.FD, h.Size, h.Offset, h.MemoryType, h.Dedicated, h.DeviceUUID)
	err = l.send(msg{Kind: "handle", Shared: shared})
	if err == nil {
		err = interop.SendHandle(l.c, h)
	}
	syscall.Close(h.FD) // SendHandle sent a copy; ours is ours to close
	if err != nil {
		return err
	}
	if shared {
		fd, err := interop.ExportTimeline(s.shared)
		if err != nil {
			return err
		}
		err = l.sendFD(fd)
		syscall.Close(fd)
		if err != nil {
			return err
		}
	}

	imp, err := l.recv("imported")
	if err != nil {
		return err
	}
	report(out, s, imp)

	if err := s.steps(l); err != nil {
		return err
	}
	if err := l.send(msg{Kind: "bye"}); err != nil {
		return err
	}
	if _, err := l.recv("bye"); err != nil {
		return err
	}
	checked := "each process checked every element after every step the other one computed (host relay)"
	if shared {
		checked = "the steps were ordered on the GPUs alone; both processes checked every element of the final values"
	}
	fmt.Fprintf(out, "ok: %d steps over one %s allocation shared by two processes; %s\n", cfg.Steps+1, size(cfg.Bytes), checked)
	return nil
}

// orderingMode decides how the processes order their work, and says why.
func orderingMode(parentErr error, childWhy string) (bool, string) {
	const relay = "host relay: the side that finishes a step waits for it on the host and sends a message; the other side," +
		" whose next step is already submitted waiting on a local timeline, checks the memory and signals that timeline from the host"
	switch {
	case parentErr == nil && childWhy == "":
		return true, "shared timeline semaphore (VK_KHR_external_semaphore_fd in both processes): every step's submit waits on the GPU" +
			" for the previous step's value on the timeline and signals its own; no host wait between steps"
	case parentErr != nil:
		return false, fmt.Sprintf("%s.\n  Why: the parent's device cannot share a timeline (%v)", relay, parentErr)
	default:
		return false, fmt.Sprintf("%s.\n  Why: the child's device cannot share a timeline (%s)", relay, childWhy)
	}
}

// report prints where each process sees the memory and what the hand-off
// cost against a memcpy.
func report(out io.Writer, s *side, imp msg) {
	if xs, err := s.x.Uint32s(); err == nil && s.x.Mapped() {
		addr, where := mapping(xs)
		fmt.Fprintf(out, "parent: maps it at %#x: %s\n", addr, where)
		fmt.Fprintf(out, "child:  maps it at %#x: %s\n", imp.Addr, imp.Mapping)
		if where == imp.Mapping {
			fmt.Fprintln(out, "        the same device and inode in both processes: the same pages, not a copy")
		}
	} else {
		fmt.Fprintln(out, "parent: the tensor is not host-mapped on this device; the child's GPU reads the exported memory itself")
	}
	imported, read, cp := time.Duration(imp.ImportNs), time.Duration(imp.ReadNs), time.Duration(imp.MemcpyNs)
	n := size(s.cfg.Bytes)
	fmt.Fprintf(out, "child: import of %s: %v, %.3fx a memcpy of %s in the child (%v): the import copies nothing\n",
		n, imported, float64(imported)/float64(cp), n, cp)
	fmt.Fprintf(out, "child: import + GPU read of all of it (checksum kernel, checked): %v, %.2fx the memcpy\n",
		imported+read, float64(imported+read)/float64(cp))
}

func size(b int64) string {
	if b >= 1<<20 && b%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", b>>20)
	}
	return fmt.Sprintf("%d bytes", b)
}

// child runs the child's side over l; open opens its Manager once the
// configuration is known.
func child(l *link, open func(config) (*vkflow.Manager, error), out io.Writer) (err error) {
	l.c.SetDeadline(time.Now().Add(timeout))
	defer func() {
		if err != nil {
			l.send(msg{Kind: "error", Err: err.Error()})
		}
	}()
	m, err := l.recv("config")
	if err != nil {
		return err
	}
	if m.Cfg == nil {
		return errors.New("config message without a config")
	}
	cfg := *m.Cfg
	mgr, err := open(cfg)
	if err != nil {
		return err
	}
	if err := interop.Supported(mgr); err != nil {
		return err
	}
	why := ""
	if err := interop.TimelinesSupported(mgr); err != nil {
		why = err.Error()
	}
	if err := l.send(msg{Kind: "ready", Timeline: why}); err != nil {
		return err
	}

	hm, err := l.recv("handle")
	if err != nil {
		return err
	}
	h, err := interop.RecvHandle(l.c)
	if err != nil {
		return err
	}
	start := time.Now()
	y, err := interop.Import(mgr, h, tensor.Uint32, []int{int(cfg.Bytes / 4)})
	importDur := time.Since(start)
	if err != nil {
		return err
	}
	s, err := newSide(mgr, cfg, 1, y)
	if err != nil {
		return err
	}
	defer s.close()
	if hm.Shared {
		fd, err := l.recvFD()
		if err != nil {
			return err
		}
		if s.shared, err = interop.ImportTimeline(mgr, fd); err != nil {
			return err
		}
	}

	// The GPU reads all of the memory the parent wrote; time it, and a
	// memcpy of the same size here, in the same run.
	sum, readDur, err := s.checksum()
	if err != nil {
		return err
	}
	if want := wantChecksum(s.n); sum != want {
		return fmt.Errorf("checksum of step 0 read by the child's GPU: %#x, want %#x", sum, want)
	}
	if err := s.check(0); err != nil {
		return err
	}
	imp := msg{Kind: "imported", ImportNs: int64(importDur), ReadNs: int64(readDur), MemcpyNs: int64(memcpy(cfg.Bytes)), Checksum: sum}
	if xs, err := s.x.Uint32s(); err == nil && s.x.Mapped() {
		imp.Addr, imp.Mapping = mapping(xs)
	}
	if err := l.send(imp); err != nil {
		return err
	}
	fmt.Fprintf(out, "child: imported %s and checked step 0 (GPU checksum %#x and every element on the host)\n", size(cfg.Bytes), sum)

	if err := s.steps(l); err != nil {
		return err
	}
	if _, err := l.recv("bye"); err != nil {
		return err
	}
	return l.send(msg{Kind: "bye"})
}

// memcpy times a copy of n bytes between two host buffers already touched
// (page faults are not counted); the best of three.
func memcpy(n int64) time.Duration {
	src, dst := make([]byte, n), make([]byte, n)
	for i := range src {
		src[i] = byte(i)
	}
	copy(dst, src)
	best := time.Duration(1<<63 - 1)
	for range 3 {
		t := time.Now()
		copy(dst, src)
		best = min(best, time.Since(t))
	}
	return best
}
