package bench

// Graphs (issue 10), recorded once, compiled once and replayed with
// exec.Run per iteration:
//
//	graph_chain1000    the chain1000 dispatches (1000 x saxpy on one y)
//	                   recorded in a graph; C side: chain1000_cmdbuf
//	graph_wide8_1q     the 8 independent saxpy dispatches of wide8,
//	                   compiled with graph.Queues(0); C side: wide8_cmdbuf
//	graph_wide8_2q     the same graph compiled on logical queues 0 and 1
//	                   with graph.PlaceSpread (both queues used, as C's
//	                   wide8_2q); bench/report compares it with C and
//	                   with graph_wide8_1q
//	graph_wide8_2q_bycost  the same on logical queues 0 and 1 placed by
//	                   cost (the default): bench/report compares it with
//	                   graph_wide8_1q, the goal being at most 1.0x
//	graph_diamond8_1q  a diamond: s = x + x, then 8 branches b[i] = s + c[i],
//	                   then one join out = b[0] + ... + b[7] (sum8.spv,
//	                   testdata/), every node over diamondN floats; on
//	                   queue 0; C side: diamond8_cmdbuf
//	graph_diamond8_2q  the same diamond on logical queues 0 and 1 with
//	                   PlaceSpread; C side: diamond8_2q (the same hand-offs);
//	                   compared with graph_diamond8_1q too
//	graph_diamond8_2q_bycost  the diamond on queues 0 and 1 placed by cost
//
// The spread graphs must use both queues (checked at setup from
// exec.String()). On lavapipe both logical queues are one VkQueue, so the
// second queue can only cost: more submits and timeline waits, no overlap;
// placed by cost, the graphs stay on one queue there.

import (
	"context"
	_ "embed"
	"fmt"
	"os"
	"strings"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/algorithm"
	"github.com/vkflow/vkflow/graph"
	"github.com/vkflow/vkflow/internal/kernels"
	"github.com/vkflow/vkflow/sequence"
	"github.com/vkflow/vkflow/tensor"
)

//go:embed testdata/sum8.spv
var sum8SPV []byte

const (
	diamondN     = 256 << 10 // floats per tensor of the diamond benchmarks
	diamondWidth = 8         // branches (sum8 joins exactly 8)
)

// graphRun compiles g with opts and returns its Run. With twoQueues the
// schedule must put work on logical queue 1 as well as on 0; without, it
// must be one submit (one command buffer, as on the C side), unless opts
// place by cost (anyQueues): the device's costs decide.
func graphRun(g *graph.Graph, twoQueues bool, opts ...graph.Option) (run, error) {
	ex, err := g.Compile(opts...)
	if err != nil {
		return nil, err
	}
	if w := ex.Warnings(); len(w) > 0 {
		return nil, fmt.Errorf("compile warnings: %v", w)
	}
	s := ex.String()
	if os.Getenv("VKFLOW_SCHEDULES") != "" {
		fmt.Fprint(os.Stderr, s)
	}
	byCost := strings.Contains(s, "placement: by cost") && strings.Contains(s, "queues [0 1]")
	if twoQueues && !byCost && (!strings.Contains(s, ": queue 0 #0") || !strings.Contains(s, ": queue 1 #0")) {
		return nil, fmt.Errorf("compiled on two queues, the schedule uses one:\n%s", s)
	}
	if !twoQueues && !strings.Contains(s, " 1 submits ") {
		return nil, fmt.Errorf("compiled on one queue, the schedule is not one submit:\n%s", s)
	}
	return func(ctx context.Context) error { return ex.Run(ctx) }, nil
}

// graphChain records n dispatches of saxpy (alpha = 1) in a graph on
// every logical queue the Manager has: a chain stays on one.
func graphChain(m *vkflow.Manager, x *tensor.Tensor, saxpy *algorithm.Algorithm, n int) (run, error) {
	g, err := graph.New(m)
	if err != nil {
		return nil, err
	}
	g.Input(x)
	for range n {
		g.Dispatch(saxpy, float32(1))
	}
	return graphRun(g, false)
}

// graphWide records the wide DAG, one saxpy per y, on the given queues,
// placed as place says.
func graphWide(m *vkflow.Manager, e *wideEnv, place graph.Placement, queues ...int) (run, error) {
	g, err := wideGraph(m, e)
	if err != nil {
		return nil, err
	}
	return graphRun(g, len(queues) > 1, graph.Queues(queues...), graph.Place(place))
}

// wideGraph records the wide DAG.
func wideGraph(m *vkflow.Manager, e *wideEnv) (*graph.Graph, error) {
	g, err := graph.New(m)
	if err != nil {
		return nil, err
	}
	g.Input(e.x)
	for _, a := range e.saxpy {
		g.Dispatch(a, float32(1))
	}
	return g, nil
}

// diamondGraph records the diamond.
func diamondGraph(m *vkflow.Manager, e *diamondEnv) (*graph.Graph, error) {
	g, err := graph.New(m)
	if err != nil {
		return nil, err
	}
	g.Input(append([]*tensor.Tensor{e.x}, e.c...)...)
	g.Dispatch(e.src).Named("s=x+x")
	for i, a := range e.branch {
		g.Dispatch(a).Named(fmt.Sprintf("b%d=s+c%d", i, i))
	}
	g.Dispatch(e.join).Named("out=sum(b)")
	return g, nil
}

// diamondEnv is the diamond setup: x (x[j] = j mod 97), s = x + x, c[i]
// filled with i, b[i] = s + c[i], out = sum of b; one graph per entry of
// diamondQueues.
type diamondEnv struct {
	x, s, out *tensor.Tensor
	c, b      []*tensor.Tensor
	src       *algorithm.Algorithm
	branch    []*algorithm.Algorithm
	join      *algorithm.Algorithm
	sync      *sequence.Sequence // SyncLocal(out): verification only
	runs      []run              // per diamondQueues entry
}

// diamondQueues are the benchmarks over the diamond and their queues.
var diamondQueues = []struct {
	name   string
	queues []int
	place  graph.Placement
}{
	{"graph_diamond8_1q", []int{0}, graph.PlaceSpread},
	{"graph_diamond8_2q", []int{0, 1}, graph.PlaceSpread},
	{"graph_diamond8_2q_bycost", []int{0, 1}, graph.PlaceByCost},
}

// newDiamondEnv needs a Manager with two logical compute queues.
func newDiamondEnv(m *vkflow.Manager, n int) (*diamondEnv, error) {
	e := &diamondEnv{}
	xs := make([]float32, n)
	for j := range xs {
		xs[j] = float32(j % 97)
	}
	var err error
	if e.x, err = tensor.FromSlice(m, xs); err != nil {
		return nil, err
	}
	if e.s, err = tensor.New(m, tensor.Float32, []int{n}); err != nil {
		return nil, err
	}
	if e.out, err = tensor.New(m, tensor.Float32, []int{n}); err != nil {
		return nil, err
	}
	if e.src, err = kernels.Add(m, e.x, e.x, e.s); err != nil {
		return nil, err
	}
	for i := range diamondWidth {
		c, err := tensor.FromSlice(m, filled(n, float32(i)))
		if err != nil {
			return nil, err
		}
		b, err := tensor.New(m, tensor.Float32, []int{n})
		if err != nil {
			return nil, err
		}
		a, err := kernels.Add(m, e.s, c, b)
		if err != nil {
			return nil, err
		}
		e.c, e.b, e.branch = append(e.c, c), append(e.b, b), append(e.branch, a)
	}
	if e.join, err = algorithm.New(m, sum8SPV, append(append([]*tensor.Tensor(nil), e.b...), e.out)); err != nil {
		return nil, err
	}
	if e.sync, err = sequence.New(m, 0); err != nil {
		return nil, err
	}
	if err = e.sync.SyncLocal(e.out).Err(); err != nil {
		return nil, err
	}
	for _, d := range diamondQueues {
		g, err := diamondGraph(m, e)
		if err != nil {
			return nil, err
		}
		r, err := graphRun(g, len(d.queues) > 1, graph.Queues(d.queues...), graph.Place(d.place))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", d.name, err)
		}
		e.runs = append(e.runs, r)
	}
	return e, nil
}

// verifyAll runs each diamond once from a cleared s, b and out and checks
// out[j] == 16*x[j] + 28 (0+1+...+7) exactly.
func (e *diamondEnv) verifyAll(ctx context.Context) error {
	for k, d := range diamondQueues {
		for _, t := range append([]*tensor.Tensor{e.s, e.out}, e.b...) {
			if err := tensor.Write(t, make([]float32, t.Len())); err != nil {
				return err
			}
		}
		if err := e.runs[k](ctx); err != nil {
			return err
		}
		if err := e.sync.Eval(ctx); err != nil {
			return err
		}
		got, err := e.out.Float32s()
		if err != nil {
			return err
		}
		for j, v := range got {
			if want := 16*float32(j%97) + 28; v != want {
				return fmt.Errorf("%s: verification failed at %d: got %.9g want %.9g", d.name, j, v, want)
			}
		}
	}
	return nil
}
