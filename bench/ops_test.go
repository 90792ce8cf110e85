package bench

// BenchmarkOps times vkflow's operators (package ops) for bench/ops.sh,
// which pairs them with bench/baseline/ops.c and NumPy in the same run
// (bench/opsreport prints the table; docs/BENCHMARKS.md, "Operators"):
//
//	add_1m       ops "add" over two 1Mi-float32 vectors into a preallocated
//	             output (C side: add_1m, the vec4 add kernel)
//	add_16m      the same over 16Mi floats (C side: add_16m)
//	add_1m_ckernel, add_16m_ckernel
//	             the C side's own shader (shaders/add_vec4.spv) registered as
//	             a user kernel ("bench.add_vec4") and run through the same
//	             ops.Prepare and op.Run: against add_1m/add_16m of C it shows
//	             what the Op machinery (submit, barriers, wait) costs, apart
//	             from the generated kernel
//	sum_16m      ops "sum" over all axes of 16Mi floats into a 0-d output
//	             (compared with the C copy kernel, copy_16m)
//	matmul_1024  ops "matmul" of two 1024x1024 float32 matrices into a
//	             preallocated output (compared with NumPy)
//
// Each op is prepared once (ops.Prepare, outside the timing); one iteration
// is one op.Run: submit + wait until the output can be read on the host.
// Like the C side, the first run is verified against the CPU and 3 warm-up
// runs precede the timer (matmul: the verified run is its only warm-up, as
// one run takes tenths of a second on lavapipe). An op not registered yet (ops.Names)
// is skipped with "missing", which the report shows.

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/ops"
	"github.com/vkflow/vkflow/shaders"
	"github.com/vkflow/vkflow/tensor"
)

const matmulN = 1024

// opEnv is one prepared op over its tensors; verify checks its outputs
// after one Run.
type opEnv struct {
	op      *ops.Op
	tensors []*tensor.Tensor
	verify  func() error
}

func (e *opEnv) close() error {
	err := e.op.Close()
	for _, t := range e.tensors {
		if cerr := t.Close(); err == nil {
			err = cerr
		}
	}
	return err
}

// hasOp reports whether the registry has name.
func hasOp(name string) bool {
	return slices.Contains(ops.Names(), name)
}

// prepareOp prepares name over in and out and keeps all the tensors for
// close.
func prepareOp(m *vkflow.Manager, name string, in, out []*tensor.Tensor, at ops.Attrs) (*opEnv, error) {
	e := &opEnv{tensors: append(slices.Clone(in), out...)}
	op, err := ops.Prepare(m, name, in, out, at)
	if err != nil {
		for _, t := range e.tensors {
			_ = t.Close()
		}
		return nil, err
	}
	e.op = op
	for _, t := range op.Outputs() {
		if !slices.Contains(e.tensors, t) {
			e.tensors = append(e.tensors, t)
		}
	}
	return e, nil
}

// ckernelAdd is the name under which the C side's vec4 add shader is
// registered (registerCKernel).
const ckernelAdd = "bench.add_vec4"

var registerOnce sync.Once

// registerCKernel registers shaders/add_vec4.spv as ckernelAdd, once.
func registerCKernel() error {
	var err error
	registerOnce.Do(func() {
		err = ops.Register(ckernelAdd, ops.Kernel{SPIRV: shaders.AddVec4, Inputs: 2})
	})
	if err == nil && !hasOp(ckernelAdd) {
		err = fmt.Errorf("%s: registration failed earlier", ckernelAdd)
	}
	return err
}

// newAddEnv: out = a + b over n floats by op name ("add", or ckernelAdd:
// n/4/256 workgroups of the vec4 shader), out preallocated; verified
// exactly.
func newAddEnv(m *vkflow.Manager, name string, n int) (*opEnv, error) {
	av, bv := make([]float32, n), make([]float32, n)
	fillInputs(av, bv)
	a, err := tensor.FromSlice(m, av)
	if err != nil {
		return nil, err
	}
	b, err := tensor.FromSlice(m, bv)
	if err != nil {
		_ = a.Close()
		return nil, err
	}
	out, err := tensor.New(m, tensor.Float32, []int{n})
	if err != nil {
		_ = a.Close()
		_ = b.Close()
		return nil, err
	}
	var at ops.Attrs
	if name == ckernelAdd {
		if n%1024 != 0 {
			return nil, fmt.Errorf("%s: n=%d is not a multiple of 1024", name, n)
		}
		at.Groups = [3]uint32{uint32(n / 4 / 256), 1, 1}
	}
	e, err := prepareOp(m, name, []*tensor.Tensor{a, b}, []*tensor.Tensor{out}, at)
	if err != nil {
		return nil, err
	}
	e.verify = func() error {
		got, err := out.Float32s()
		if err != nil {
			return err
		}
		for i := range got {
			if want := av[i] + bv[i]; got[i] != want {
				return fmt.Errorf("add: element %d: got %.9g want %.9g", i, got[i], want)
			}
		}
		return nil
	}
	return e, nil
}

// newSumEnv: the sum of n floats in {-1, 0, 1} into an allocated 0-d
// output. Every partial sum, in any order, is an integer of magnitude at
// most n <= 2^24, so float32 holds it exactly and the check is exact.
func newSumEnv(m *vkflow.Manager, n int) (*opEnv, error) {
	xv := make([]float32, n)
	want := 0.0
	for i := range xv {
		xv[i] = float32(int(uint32(i)*2654435761>>8)%3 - 1)
		want += float64(xv[i])
	}
	x, err := tensor.FromSlice(m, xv)
	if err != nil {
		return nil, err
	}
	e, err := prepareOp(m, "sum", []*tensor.Tensor{x}, nil, ops.Attrs{})
	if err != nil {
		return nil, err
	}
	e.verify = func() error {
		got, err := e.op.Out().Float32s()
		if err != nil {
			return err
		}
		if len(got) != 1 || float64(got[0]) != want {
			return fmt.Errorf("sum: got %v, want [%v]", got, want)
		}
		return nil
	}
	return e, nil
}

// newMatmulEnv: out = a @ b for n x n float32 matrices, out preallocated;
// 256 entries are checked against float64 dot products, within 1e-5 of
// the sum of the products' magnitudes.
func newMatmulEnv(m *vkflow.Manager, n int) (*opEnv, error) {
	av, bv := make([]float32, n*n), make([]float32, n*n)
	for i := range av {
		h := uint32(i) * 2654435761
		av[i] = float32(h>>8&0xFFFF)/32768 - 1
		bv[i] = float32(h>>16&0x3FF)/512 - 1
	}
	a, err := tensor.FromSlice(m, av, n, n)
	if err != nil {
		return nil, err
	}
	b, err := tensor.FromSlice(m, bv, n, n)
	if err != nil {
		_ = a.Close()
		return nil, err
	}
	out, err := tensor.New(m, tensor.Float32, []int{n, n})
	if err != nil {
		_ = a.Close()
		_ = b.Close()
		return nil, err
	}
	e, err := prepareOp(m, "matmul", []*tensor.Tensor{a, b}, []*tensor.Tensor{out}, ops.Attrs{})
	if err != nil {
		return nil, err
	}
	e.verify = func() error {
		got, err := out.Float32s()
		if err != nil {
			return err
		}
		for k := range 256 {
			i, j := (k*389)%n, (k*677+11)%n
			var want, mag float64
			for p := range n {
				x, y := float64(av[i*n+p]), float64(bv[p*n+j])
				want += x * y
				mag += math.Abs(x * y)
			}
			if d := math.Abs(float64(got[i*n+j]) - want); d > 1e-5*mag+1e-6 {
				return fmt.Errorf("matmul: out[%d,%d] = %.9g, want %.9g", i, j, got[i*n+j], want)
			}
		}
		return nil
	}
	return e, nil
}

// benchOp runs the benchmark of op name: skipped as missing when the
// registry lacks it; else prepared by setup on a fresh Manager, run and
// verified once, warmed up with warm more runs, then timed per Run. bytes
// (per Run) gives a GB/s metric, flops a GFLOP/s one; bench/opsreport
// recomputes both from ns/op.
func benchOp(b *testing.B, name string, setup func(*vkflow.Manager) (*opEnv, error), bytes, flops float64, warm int) {
	if !hasOp(name) {
		b.Skipf("missing: no op named %q in ops.Names()", name)
	}
	ctx := context.Background()
	m := openBench(b)
	defer func() {
		if err := m.Close(); err != nil {
			b.Errorf("Manager.Close: %v", err)
		}
	}()
	e, err := setup(m)
	if err != nil {
		b.Fatalf("prepare %s: %v", name, err)
	}
	defer func() {
		if err := e.close(); err != nil {
			b.Errorf("close %s: %v", name, err)
		}
	}()
	if err := e.op.Run(ctx); err != nil {
		b.Fatalf("%s: Run: %v", name, err)
	}
	if err := e.verify(); err != nil {
		b.Fatal(err)
	}
	for range warm {
		if err := e.op.Run(ctx); err != nil {
			b.Fatal(err)
		}
	}
	// Each Run is timed too: its median ("med-ns/op", which
	// bench/opsreport prefers to the mean ns/op) is as robust to the
	// machine's noise as the C side's median of batches.
	times := make([]float64, 0, 1024)
	for b.Loop() {
		t0 := time.Now()
		if err := e.op.Run(ctx); err != nil {
			b.Fatal(err)
		}
		times = append(times, float64(time.Since(t0).Nanoseconds()))
	}
	slices.Sort(times)
	b.ReportMetric(times[len(times)/2], "med-ns/op")
	sec := b.Elapsed().Seconds() / float64(b.N)
	if bytes > 0 {
		b.ReportMetric(bytes/sec/1e9, "GB/s")
	}
	if flops > 0 {
		b.ReportMetric(flops/sec/1e9, "GFLOP/s")
	}
}

func BenchmarkOps(b *testing.B) {
	if err := registerCKernel(); err != nil {
		b.Fatal(err)
	}
	for _, w := range []struct {
		name, op string
		n        int
	}{
		{"add_1m", "add", 1 << 20}, {"add_1m_ckernel", ckernelAdd, 1 << 20},
		{"add_16m", "add", 16 << 20}, {"add_16m_ckernel", ckernelAdd, 16 << 20},
	} {
		b.Run(w.name, func(b *testing.B) {
			benchOp(b, w.op, func(m *vkflow.Manager) (*opEnv, error) { return newAddEnv(m, w.op, w.n) },
				12*float64(w.n), 0, warmup) // a and b read, out written
		})
	}
	b.Run("sum_16m", func(b *testing.B) {
		benchOp(b, "sum", func(m *vkflow.Manager) (*opEnv, error) { return newSumEnv(m, bigN) },
			4*bigN, 0, warmup) // the input read
	})
	b.Run("matmul_1024", func(b *testing.B) {
		benchOp(b, "matmul", func(m *vkflow.Manager) (*opEnv, error) { return newMatmulEnv(m, matmulN) },
			0, 2*matmulN*matmulN*matmulN, 0)
	})
}

// TestOpsBenchSmoke runs every BenchmarkOps workload once on small sizes
// (odd ones where the op allows), with validation on as in the rest of the
// suite; ops not registered yet are skipped.
func TestOpsBenchSmoke(t *testing.T) {
	cases := []struct {
		name, op string
		setup    func(*vkflow.Manager) (*opEnv, error)
	}{
		{"add_4096", "add", func(m *vkflow.Manager) (*opEnv, error) { return newAddEnv(m, "add", 4096) }},
		{"add_4097", "add", func(m *vkflow.Manager) (*opEnv, error) { return newAddEnv(m, "add", 4097) }},
		{"ckernel_4096", ckernelAdd, func(m *vkflow.Manager) (*opEnv, error) { return newAddEnv(m, ckernelAdd, 4096) }},
		{"sum_4099", "sum", func(m *vkflow.Manager) (*opEnv, error) { return newSumEnv(m, 4099) }},
		{"matmul_67", "matmul", func(m *vkflow.Manager) (*opEnv, error) { return newMatmulEnv(m, 67) }},
	}
	if err := registerCKernel(); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !hasOp(c.op) {
				t.Skipf("missing: no op named %q", c.op)
			}
			m, _ := testutil.Manager(t)
			e, err := c.setup(m)
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				if err := e.close(); err != nil {
					t.Error(err)
				}
			}()
			for range 2 {
				if err := e.op.Run(context.Background()); err != nil {
					t.Fatal(err)
				}
				if err := e.verify(); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}
