// Command interop is the cross-process hand-off benchmark of make bench
// (bench/interop.sh; docs/BENCHMARKS.md, "Interop").
//
// One hand-off moves -mib MiB (default 256) from this process to a child
// process without a copy: the parent exports its tensors (interop.Export),
// sends the handles over a Unix socket (interop.SendHandle, SCM_RIGHTS), and
// the child receives and imports them (interop.RecvHandle, interop.Import)
// and reads all of the memory with a kernel on its GPU (a checksum, checked
// against the CPU's), then closes the imports and answers. A tensor cannot
// exceed tensor.MaxBytes (128 MiB on lavapipe: maxStorageBufferRange), so
// 256 MiB travels as two tensors of 128 MiB.
//
// The baseline is a memcpy of the same size in the parent (Go's copy, the
// runtime's memmove, between two buffers already touched), measured in the
// same run: each round times -iters memcpys, then -iters hand-offs. The
// table gives medians over all iterations and, per row, the ratio to the
// memcpy with the median and range of the per-round ratios (the noise).
// Rows: the hand-off with the GPU read (the workload), the hand-off without
// it (export, send, receive, import: what no data copy costs), and the read
// alone (the child's submit and wait of the checksum kernel).
//
//	go run ./bench/interop [-mib 256] [-rounds 5] [-iters 5]
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"syscall"
	"time"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/algorithm"
	"github.com/vkflow/vkflow/glsl"
	"github.com/vkflow/vkflow/interop"
	"github.com/vkflow/vkflow/sequence"
	"github.com/vkflow/vkflow/tensor"
)

const childEnv = "VKFLOW_BENCH_INTEROP_CHILD"

// cmd is the parent's message: hand off Pieces (uint32 counts; the handles
// follow, one datagram each), or exit.
type cmd struct {
	Op     string
	Pieces []int
}

// reply is the child's answer to a hand-off.
type reply struct {
	ImportNs int64 // receive and import every piece
	ReadNs   int64 // record, submit and wait for the checksum kernels
	Err      string
}

func main() {
	mib := flag.Int("mib", 256, "MiB handed off per iteration")
	rounds := flag.Int("rounds", 5, "rounds (memcpys, then hand-offs)")
	iters := flag.Int("iters", 5, "iterations of each side per round")
	piece := flag.Int("piece-mib", 0, "largest tensor in MiB (0: tensor.MaxBytes)")
	flag.Parse()
	if err := run(*mib, *rounds, *iters, *piece); err != nil {
		fmt.Fprintln(os.Stderr, "bench/interop:", err)
		os.Exit(1)
	}
}

func run(mib, rounds, iters, piece int) error {
	mgr, err := vkflow.New()
	if err != nil {
		return err
	}
	defer mgr.Close()
	if os.Getenv(childEnv) != "" {
		c, err := net.FileConn(os.NewFile(3, "socket"))
		if err != nil {
			return err
		}
		return child(mgr, c.(*net.UnixConn))
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	res, err := parent(mgr, int64(mib)<<20, int64(piece)<<20, rounds, iters, func(end *os.File) *exec.Cmd {
		c := exec.Command(self)
		c.Env = append(os.Environ(), childEnv+"=1")
		c.ExtraFiles = []*os.File{end}
		c.Stderr = os.Stderr
		return c
	})
	if err != nil {
		return err
	}
	res.print(os.Stdout, mgr)
	return nil
}

// results holds one duration per iteration, per round.
type results struct {
	bytes, pieces   int64
	memcpy, handoff [][]time.Duration // handoff: parent's wall time, export to answer
	imports, reads  [][]time.Duration // the child's parts
	rounds, iters   int
	piece           int64
}

// parent runs the benchmark against a child that command starts.
func parent(mgr *vkflow.Manager, total, piece int64, rounds, iters int, command func(*os.File) *exec.Cmd) (_ *results, err error) {
	if err := interop.Supported(mgr); err != nil {
		return nil, err
	}
	if max := int64(tensor.MaxBytes(mgr.Runtime())); piece <= 0 || piece > max {
		piece = max
	}
	piece &^= 15 // the checksum reads vec4s
	var pieces []int
	for left := total; left > 0; left -= piece {
		pieces = append(pieces, int(min(left, piece)/4))
	}
	// The tensors, filled once on the GPU.
	var xs []*tensor.Tensor
	for _, n := range pieces {
		x, err := tensor.New(mgr, tensor.Uint32, []int{n}, tensor.Exportable())
		if err != nil {
			return nil, err
		}
		defer x.Close()
		seq, err := sequence.New(mgr, 0)
		if err != nil {
			return nil, err
		}
		err = seq.Fill(x, uint32(0x5bd1e995)).SyncLocal(x).Eval(context.Background())
		seq.Close()
		if err != nil {
			return nil, err
		}
		xs = append(xs, x)
	}

	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_SEQPACKET|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	mine, theirs := os.NewFile(uintptr(fds[0]), "parent"), os.NewFile(uintptr(fds[1]), "child")
	c, err := net.FileConn(mine)
	mine.Close()
	if err != nil {
		theirs.Close()
		return nil, err
	}
	conn := c.(*net.UnixConn)
	ch := command(theirs)
	err = ch.Start()
	theirs.Close()
	if err != nil {
		conn.Close()
		return nil, err
	}
	// Closing the socket ends the child (at once on an error, else after
	// "exit"); its exit status counts.
	defer func() {
		conn.Close()
		if werr := ch.Wait(); werr != nil && err == nil {
			err = fmt.Errorf("child: %w", werr)
		}
	}()

	src, dst := make([]byte, total), make([]byte, total)
	for i := range src {
		src[i] = byte(i)
	}
	copy(dst, src) // touch both

	r := &results{bytes: total, pieces: int64(len(pieces)), rounds: rounds, iters: iters, piece: piece}
	handoff := func() (time.Duration, reply, error) {
		start := time.Now()
		if err := send(conn, cmd{Op: "handoff", Pieces: pieces}); err != nil {
			return 0, reply{}, err
		}
		for _, x := range xs {
			h, err := interop.Export(x)
			if err != nil {
				return 0, reply{}, err
			}
			err = interop.SendHandle(conn, h)
			syscall.Close(h.FD)
			if err != nil {
				return 0, reply{}, err
			}
		}
		var rep reply
		if err := recv(conn, &rep); err != nil {
			return 0, rep, err
		}
		took := time.Since(start)
		if rep.Err != "" {
			return 0, rep, errors.New("child: " + rep.Err)
		}
		return took, rep, nil
	}
	for range 2 { // warm-up: the child builds its pipelines
		if _, _, err := handoff(); err != nil {
			return nil, err
		}
	}
	for range rounds {
		var mc, ho, im, rd []time.Duration
		for range iters {
			start := time.Now()
			copy(dst, src)
			mc = append(mc, time.Since(start))
		}
		for range iters {
			took, rep, err := handoff()
			if err != nil {
				return nil, err
			}
			ho = append(ho, took)
			im = append(im, time.Duration(rep.ImportNs))
			rd = append(rd, time.Duration(rep.ReadNs))
		}
		r.memcpy, r.handoff = append(r.memcpy, mc), append(r.handoff, ho)
		r.imports, r.reads = append(r.imports, im), append(r.reads, rd)
	}
	runtime.KeepAlive(dst)
	if err := send(conn, cmd{Op: "exit"}); err != nil {
		return nil, err
	}
	return r, nil
}

// checksumGLSL reads all of x as vec4s (uvec4 over the same bytes):
// invocation j sums x[i] ^ i over its own 64 vec4s, in a tight loop (on
// lavapipe a storage-buffer load costs per lane and per load, so whole
// vec4s; docs/BENCHMARKS.md, "Operators", has the measurements).
const checksumGLSL = `#version 450
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer X { uvec4 x4[]; };
layout(set = 0, binding = 1) writeonly buffer S { uint s[]; };
layout(push_constant) uniform P { uint n4; };
void main() {
	uint j = gl_GlobalInvocationID.x;
	uint start = j * 64u;
	uint end = min(start + 64u, n4);
	uvec4 idx = uvec4(0u, 1u, 2u, 3u) + 4u * start;
	uvec4 acc = uvec4(0u);
	for (uint k = start; k < end; k++) {
		acc += x4[k] ^ idx;
		idx += 4u;
	}
	s[j] = acc.x + acc.y + acc.z + acc.w;
}
`

// lanes is the checksum kernel's invocations (and partial sums) for n
// uint32 elements, n a multiple of 4.
func lanes(n int) int { return (n/4 + 64*256 - 1) / (64 * 256) * 256 }

// child serves hand-offs: receive and import every piece, read all of it
// with the checksum kernel, check the sum, close the imports, answer.
func child(mgr *vkflow.Manager, conn *net.UnixConn) error {
	defer conn.Close()
	code, err := glsl.Compile(checksumGLSL)
	if err != nil {
		return err
	}
	seq, err := sequence.New(mgr, 0)
	if err != nil {
		return err
	}
	defer seq.Close()
	var (
		algos []*algorithm.Algorithm
		sums  []*tensor.Tensor
	)
	defer func() {
		for _, a := range algos {
			a.Close()
		}
		for _, s := range sums {
			s.Close()
		}
	}()
	ctx := context.Background()
	for {
		var c cmd
		if err := recv(conn, &c); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if c.Op == "exit" {
			return nil
		}
		rep := reply{}
		err := func() error {
			start := time.Now()
			ys := make([]*tensor.Tensor, 0, len(c.Pieces))
			defer func() {
				for _, y := range ys {
					y.Close()
				}
			}()
			for _, n := range c.Pieces {
				h, err := interop.RecvHandle(conn)
				if err != nil {
					return err
				}
				y, err := interop.Import(mgr, h, tensor.Uint32, []int{n})
				if err != nil {
					return err
				}
				ys = append(ys, y)
			}
			imported := time.Now()
			rep.ImportNs = int64(imported.Sub(start))

			for len(algos) < len(ys) {
				l := lanes(ys[len(algos)].Len())
				s, err := tensor.New(mgr, tensor.Uint32, []int{l})
				if err != nil {
					return err
				}
				sums = append(sums, s)
				a, err := algorithm.New(mgr, code, []*tensor.Tensor{ys[len(algos)], s}, algorithm.Workgroups(uint32(l/256), 1, 1))
				if err != nil {
					return err
				}
				algos = append(algos, a)
			}
			if err := seq.Clear(); err != nil {
				return err
			}
			for i, y := range ys {
				if err := algos[i].Bind(y, sums[i]); err != nil {
					return err
				}
				seq.Dispatch(algos[i], uint32(y.Len()/4))
			}
			if err := seq.SyncLocal(sums[:len(ys)]...).Eval(ctx); err != nil {
				return err
			}
			rep.ReadNs = int64(time.Since(imported))
			for i, y := range ys {
				parts, err := sums[i].Uint32s()
				if err != nil {
					return err
				}
				var got uint32
				for _, p := range parts {
					got += p
				}
				if want := fillChecksum(y.Len()); got != want {
					return fmt.Errorf("piece %d: checksum %#x, want %#x", i, got, want)
				}
			}
			return nil
		}()
		if err != nil {
			rep.Err = err.Error()
		}
		if err := send(conn, rep); err != nil {
			return err
		}
	}
}

var checksums = map[int]uint32{}

// fillChecksum is the checksum of n elements of the parent's fill value.
func fillChecksum(n int) uint32 {
	if s, ok := checksums[n]; ok {
		return s
	}
	var s uint32
	for i := range uint32(n) {
		s += 0x5bd1e995 ^ i
	}
	checksums[n] = s
	return s
}

func send(c *net.UnixConn, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = c.Write(b)
	return err
}

func recv(c *net.UnixConn, v any) error {
	buf := make([]byte, 4096)
	n, err := c.Read(buf)
	if err != nil {
		return err
	}
	return json.Unmarshal(buf[:n], v)
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func flat(rs [][]time.Duration) []time.Duration { return slices.Concat(rs...) }

// print writes the table: medians over every iteration, the ratio to the
// memcpy, and the median and range of the per-round ratios.
func (r *results) print(w io.Writer, mgr *vkflow.Manager) {
	size := fmt.Sprintf("%d MiB", r.bytes>>20)
	if r.bytes%(1<<20) != 0 {
		size = fmt.Sprintf("%d bytes", r.bytes)
	}
	fmt.Fprintf(w, "Cross-process hand-off of %s (%d tensor(s) of at most %d bytes) against a memcpy of %s, %d rounds x %d iterations, device %s, %d CPUs.\n\n",
		size, r.pieces, r.piece, size, r.rounds, r.iters, mgr.Device().Name, runtime.NumCPU())
	fmt.Fprintln(w, "| row | median | GB/s | / memcpy | per-round ratios: median (min–max) |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---|")
	mc := median(flat(r.memcpy))
	row := func(name string, rs [][]time.Duration, gbps bool) {
		m := median(flat(rs))
		var ratios []float64
		for i := range rs {
			ratios = append(ratios, float64(median(rs[i]))/float64(median(r.memcpy[i])))
		}
		slices.Sort(ratios)
		rate := "—"
		if gbps {
			rate = fmt.Sprintf("%.2f", float64(r.bytes)/m.Seconds()/1e9)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %.3f | %.3f (%.3f–%.3f) |\n", name, m.Round(time.Microsecond),
			rate, float64(m)/float64(mc), ratios[len(ratios)/2], ratios[0], ratios[len(ratios)-1])
	}
	row("memcpy "+size+" (parent: Go copy, runtime memmove)", r.memcpy, true)
	row("hand-off + GPU read of "+size+": export, send, receive, import, checksum kernel, close, answer", r.handoff, true)
	sub := make([][]time.Duration, len(r.handoff))
	for i := range r.handoff {
		for j := range r.handoff[i] {
			sub[i] = append(sub[i], r.handoff[i][j]-r.reads[i][j])
		}
	}
	row("the same without the GPU read", sub, false)
	row("child: receive + import", r.imports, false)
	row("child: GPU read (bind, record, submit, wait)", r.reads, true)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "GB/s: the bytes copied, or handed off and read, per second of the row's median. Ratios are of times: below 1 is faster than the memcpy.")
}
