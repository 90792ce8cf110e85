package graph

// BenchmarkCompile measures Compile on graphs of 1k, 10k and 100k dispatch
// nodes and reports ns/node; the goal is linear growth (ns/node
// flat across sizes) and 10k nodes under 50 ms. Shapes:
//
//	chain   n dispatches of one saxpy on the same y: one long dependency
//	        chain, every node RAW/WAW on its predecessor
//	random  n dispatches of saxpy over random pairs (x, y) of a pool of
//	        64 tensors (256 algorithms, fixed seed): a random DAG with
//	        RAW, WAR and WAW edges, about 32 nodes wide
//	random_1q  the same random DAG compiled with Queues(0): on two queues
//	        the small nodes (64 floats) spill over both and are cut into
//	        about one segment per 8 nodes, on one queue into 1024-node ones
//
// Sub-benchmarks:
//
//	BenchmarkCompile/<shape>/<n>   the whole public Compile: analysis plus
//	                               the Vulkan work (descriptor sets,
//	                               command buffers, recording); Close
//	                               is outside the timing
//	BenchmarkCompilePlan/<shape>/<n>  the analysis alone (accesses,
//	                               hazards, order, queues, segments,
//	                               waits, barriers): no Vulkan call
//
// Besides ns/node (wall clock) both report cpu-ns/node: the process's CPU
// time (user + system, all threads) spent in the timed calls, per node,
// which other processes on a shared machine disturb far less. Recording
// the graph is outside the timing. Both run on a Manager with
// two logical queues and no validation layer, so queue assignment has a
// choice. Run with
//
//	go test ./graph -run '^$' -bench 'Compile' -benchtime 3x

import (
	"fmt"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/algorithm"
	"github.com/vkflow/vkflow/internal/kernels"
	"github.com/vkflow/vkflow/tensor"
	"github.com/vkflow/vkflow/vk"
)

var compileSizes = []int{1000, 10000, 100000}

// compileShapes build a graph of n dispatch nodes on m.
var compileShapes = []struct {
	name   string
	build  func(tb testing.TB, m *vkflow.Manager, n int) *Graph
	queues []int // Compile's Queues; nil: both
}{
	{"chain", chainGraph, nil},
	{"random", randomGraph, nil},
	{"random_1q", randomGraph, []int{0}},
}

func (o *options) queuesOr(qs []int) {
	if qs != nil {
		o.queues = qs
	}
}

func benchManager(tb testing.TB) *vkflow.Manager {
	tb.Helper()
	m, err := vkflow.New(vkflow.WithValidation(false), vkflow.WithQueues(2, false))
	if err != nil {
		tb.Fatalf("vkflow.New: %v", err)
	}
	tb.Cleanup(func() {
		if err := m.Close(); err != nil {
			tb.Errorf("Manager.Close: %v", err)
		}
	})
	return m
}

func chainGraph(tb testing.TB, m *vkflow.Manager, n int) *Graph {
	tb.Helper()
	x, err := tensor.New(m, tensor.Float32, []int{64})
	benchMust(tb, err)
	y, err := tensor.New(m, tensor.Float32, []int{64})
	benchMust(tb, err)
	saxpy, err := kernels.Saxpy(m, x, y)
	benchMust(tb, err)
	g, err := New(m)
	benchMust(tb, err)
	g.Input(x, y)
	for range n {
		g.Dispatch(saxpy, float32(1))
	}
	benchMust(tb, g.Err())
	return g
}

func randomGraph(tb testing.TB, m *vkflow.Manager, n int) *Graph {
	tb.Helper()
	const pool, algos = 64, 256
	r := rand.New(rand.NewPCG(10, uint64(n)))
	ts := make([]*tensor.Tensor, pool)
	for i := range ts {
		var err error
		ts[i], err = tensor.New(m, tensor.Float32, []int{64})
		benchMust(tb, err)
	}
	as := make([]*algorithm.Algorithm, algos)
	for i := range as {
		a := r.IntN(pool)
		b := (a + 1 + r.IntN(pool-1)) % pool
		var err error
		as[i], err = kernels.Saxpy(m, ts[a], ts[b])
		benchMust(tb, err)
	}
	g, err := New(m)
	benchMust(tb, err)
	g.Input(ts...)
	for range n {
		g.Dispatch(as[r.IntN(algos)], float32(1))
	}
	benchMust(tb, g.Err())
	return g
}

func benchMust(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
}

func perNode(b *testing.B, n int, cpu time.Duration) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/node")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N)/float64(n), "cpu-ns/node")
}

// cpuTime returns the process's user + system CPU time so far.
func cpuTime(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func BenchmarkCompile(b *testing.B) {
	m := benchManager(b)
	for _, sh := range compileShapes {
		for _, n := range compileSizes {
			b.Run(fmt.Sprintf("%s/%d", sh.name, n), func(b *testing.B) {
				g := sh.build(b, m, n)
				var opts []Option
				if sh.queues != nil {
					opts = append(opts, Queues(sh.queues...))
				}
				var cpu time.Duration
				for b.Loop() {
					c0 := cpuTime(b)
					e, err := g.Compile(opts...)
					if err != nil {
						b.Fatal(err)
					}
					cpu += cpuTime(b) - c0
					b.StopTimer()
					benchMust(b, e.Close())
					b.StartTimer()
				}
				perNode(b, n, cpu)
				e, err := g.Compile(opts...)
				benchMust(b, err)
				b.ReportMetric(float64(len(e.plan.segs)), "submits")
				benchMust(b, e.Close())
			})
		}
	}
}

func BenchmarkCompilePlan(b *testing.B) {
	m := benchManager(b)
	for _, sh := range compileShapes {
		for _, n := range compileSizes {
			b.Run(fmt.Sprintf("%s/%d", sh.name, n), func(b *testing.B) {
				g := sh.build(b, m, n)
				infos := g.dev.Queues()
				o := options{queues: []int{0, 1}, maxNodes: DefaultMaxNodesPerSubmit, maxWork: DefaultMaxWorkPerSubmit}
				o.queuesOr(sh.queues)
				inputs := map[vk.Buffer]bool{}
				for buf := range g.inputs {
					inputs[buf] = true
				}
				c0 := cpuTime(b)
				for b.Loop() {
					accs := make([][]access, len(g.nodes))
					for i := range g.nodes {
						accs[i] = accessesOf(&g.nodes[i])
					}
					p, err := compilePlan(g.nodes, accs, infos, o, inputs)
					if err != nil {
						b.Fatal(err)
					}
					if len(p.warnings) > 0 {
						b.Fatal(p.warnings)
					}
				}
				perNode(b, n, cpuTime(b)-c0)
			})
		}
	}
}
