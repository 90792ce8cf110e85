package graph_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/algorithm"
	"github.com/vkflow/vkflow/graph"
	"github.com/vkflow/vkflow/internal/kernels"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/sequence"
	"github.com/vkflow/vkflow/shaders"
	"github.com/vkflow/vkflow/tensor"
	"github.com/vkflow/vkflow/timeline"
)

// newFixture opens a Manager with x (a ramp) and y (zeros) of n floats.
func newFixture(t *testing.T, n int, opts ...vkflow.Option) (*vkflow.Manager, *tensor.Tensor, *tensor.Tensor, []float32) {
	t.Helper()
	m, _ := testutil.Manager(t, opts...)
	xv := ramp(n, 1)
	x, err := tensor.FromSlice(m, xv)
	require.NoError(t, err)
	y, err := tensor.New(m, tensor.Float32, []int{n})
	require.NoError(t, err)
	return m, x, y, xv
}

func TestCompileErrors(t *testing.T) {
	m, x, y, _ := newFixture(t, 256, vkflow.WithQueues(1, true))
	saxpy, err := kernels.Saxpy(m, x, y)
	require.NoError(t, err)
	closed, err := tensor.New(m, tensor.Float32, []int{256})
	require.NoError(t, err)
	require.NoError(t, closed.Close())
	i32, err := tensor.New(m, tensor.Int32, []int{256})
	require.NoError(t, err)
	x2, err := tensor.New(m, tensor.Float32, []int{256})
	require.NoError(t, err)
	cases := []struct {
		name  string
		build func(g *graph.Graph)
		opts  []graph.Option
		err   error
		msg   string
	}{
		{"empty", func(g *graph.Graph) {}, nil, vkflow.ErrInvalid, "no nodes"},
		{"nil algorithm", func(g *graph.Graph) { g.Dispatch(nil) }, nil, vkflow.ErrInvalid, "nil algorithm"},
		{"push size", func(g *graph.Graph) { g.Dispatch(saxpy) }, nil, vkflow.ErrInvalid, "push constants"},
		{"closed at record", func(g *graph.Graph) { g.Fill(closed, float32(1)) }, nil, vkflow.ErrClosed, "node 0 (fill)"},
		{"copy dtypes", func(g *graph.Graph) { g.Copy(x, i32) }, nil, vkflow.ErrInvalid, "mismatched dtypes"},
		{"upload size", func(g *graph.Graph) { g.Upload(y, make([]float32, 3)) }, nil, vkflow.ErrInvalid, "the slice has 12 bytes"},
		{"upload dtype", func(g *graph.Graph) { g.Upload(y, make([]int32, 256)) }, nil, vkflow.ErrInvalid, "mismatched dtypes"},
		{"download type", func(g *graph.Graph) { g.Download(y, 3) }, nil, vkflow.ErrInvalid, "must be a slice"},
		{"fill dtype", func(g *graph.Graph) { g.Fill(y, int32(1)) }, nil, vkflow.ErrInvalid, "mismatched dtypes"},
		{"queue out of range", func(g *graph.Graph) { g.Fill(y, float32(0)).OnQueue(5) }, nil, vkflow.ErrInvalid, "OnQueue(5)"},
		{"dispatch on transfer queue", func(g *graph.Graph) { g.Dispatch(saxpy, float32(1)).OnQueue(1) }, nil, vkflow.ErrInvalid, "transfer queue"},
		{"only transfer queues", func(g *graph.Graph) { g.Dispatch(saxpy, float32(1)) }, []graph.Option{graph.Queues(1)}, vkflow.ErrInvalid, "needs a compute queue"},
		{"pinned outside Queues", func(g *graph.Graph) { g.Fill(y, float32(0)).OnQueue(1) }, []graph.Option{graph.Queues(0)}, vkflow.ErrInvalid, "may not use"},
		{"Queues out of range", func(g *graph.Graph) { g.Fill(y, float32(0)) }, []graph.Option{graph.Queues(7)}, vkflow.ErrInvalid, "out of range"},
		{"Queues twice", func(g *graph.Graph) { g.Fill(y, float32(0)) }, []graph.Option{graph.Queues(0, 0)}, vkflow.ErrInvalid, "given twice"},
		{"bad cap", func(g *graph.Graph) { g.Fill(y, float32(0)) }, []graph.Option{graph.MaxNodesPerSubmit(0)}, vkflow.ErrInvalid, "at least 1"},
		{"cycle", func(g *graph.Graph) {
			a := g.Fill(y, float32(1)).Named("fill")
			b := g.Dispatch(saxpy, float32(1)).Named("saxpy") // after the fill: WAW on y
			a.After(b)
		}, nil, vkflow.ErrInvalid, "cycle: 1 saxpy -> 0 fill -> 1 saxpy"},
		{"self after", func(g *graph.Graph) { a := g.Fill(y, float32(1)); a.After(a) }, nil, vkflow.ErrInvalid, "cannot follow itself"},
		{"in place is one writer", func(g *graph.Graph) {
			inPlace, err := kernels.Add(m, y, x, y) // y = y + x
			require.NoError(t, err)
			g.Dispatch(inPlace)
		}, nil, nil, ""},
		{"two writers", func(g *graph.Graph) {
			// logreg_update writes bindings 1, 2 and 3: bind y to two.
			two, err := algorithm.New(m, shaders.LogRegUpdate, []*tensor.Tensor{x, y, y, x2})
			require.NoError(t, err)
			g.Dispatch(two, uint32(1), uint32(1), float32(0.1), uint32(1))
		}, nil, vkflow.ErrInvalid, "bindings 1 and 2 write the same tensor"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g, err := graph.New(m)
			require.NoError(t, err)
			c.build(g)
			e, err := g.Compile(c.opts...)
			if c.err == nil {
				require.NoError(t, err)
				require.NoError(t, e.Close())
				return
			}
			require.ErrorIs(t, err, c.err)
			assert.Contains(t, err.Error(), c.msg)
			assert.Nil(t, e)
		})
	}
}

// A tensor closed after Compile makes runs fail with ErrClosed naming the
// node; nothing is freed under the GPU.
func TestClosedTensorAtRun(t *testing.T) {
	m, x, y, _ := newFixture(t, 256)
	saxpy, err := kernels.Saxpy(m, x, y)
	require.NoError(t, err)
	g, _ := graph.New(m)
	g.Dispatch(saxpy, float32(1)).Named("saxpy")
	e, err := g.Compile()
	require.NoError(t, err)
	require.NoError(t, e.Run(context.Background()))
	require.NoError(t, y.Close())
	err = e.Run(context.Background())
	require.ErrorIs(t, err, vkflow.ErrClosed)
	assert.Contains(t, err.Error(), "node 0 saxpy")
	require.NoError(t, e.Close())
	require.ErrorIs(t, e.Run(context.Background()), vkflow.ErrClosed)
	require.ErrorIs(t, e.SetPush(graph.Node{}, float32(1)), vkflow.ErrClosed)
}

func TestWarnings(t *testing.T) {
	m, x, y, _ := newFixture(t, 256)
	fresh, err := tensor.New(m, tensor.Float32, []int{256})
	require.NoError(t, err)
	add, err := kernels.Add(m, fresh, x, y)
	require.NoError(t, err)
	g, _ := graph.New(m)
	g.Dispatch(add).Named("add")
	e, err := g.Compile()
	require.NoError(t, err)
	w := e.Warnings()
	require.Len(t, w, 1, "fresh is read and nothing wrote it; x came from the host")
	assert.Contains(t, w[0], "node 0 add reads a tensor that nothing wrote")
	g.Input(fresh)
	e2, err := g.Compile()
	require.NoError(t, err)
	assert.Empty(t, e2.Warnings())
	// A tensor written by a graph is written for later graphs.
	g3, _ := graph.New(m)
	other, _ := tensor.New(m, tensor.Float32, []int{256})
	g3.Fill(other, float32(2))
	_, err = g3.Compile()
	require.NoError(t, err)
	add2, err := kernels.Add(m, other, x, y)
	require.NoError(t, err)
	g4, _ := graph.New(m)
	g4.Dispatch(add2)
	e4, err := g4.Compile()
	require.NoError(t, err)
	assert.Empty(t, e4.Warnings())
}

// Rebind and SetPush change what runs without compiling again.
func TestRebindAndSetPush(t *testing.T) {
	const n = 1024
	m, x, y, xv := newFixture(t, n)
	ctx := context.Background()
	saxpy, err := kernels.Saxpy(m, x, y)
	require.NoError(t, err)
	g, _ := graph.New(m)
	g.Fill(y, float32(0))
	s := g.Dispatch(saxpy, float32(1))
	out := make([]float32, n)
	g.Download(y, out)
	e, err := g.Compile()
	require.NoError(t, err)
	require.NoError(t, e.Run(ctx))
	assert.Equal(t, xv[5], out[5])

	require.NoError(t, e.SetPush(s, float32(4)))
	require.NoError(t, e.Run(ctx))
	assert.Equal(t, 4*xv[5], out[5])

	x2, err := tensor.FromSlice(m, ramp(n, 3))
	require.NoError(t, err)
	require.NoError(t, e.Rebind(x, x2))
	require.NoError(t, e.Run(ctx))
	assert.Equal(t, 4*3*xv[5], out[5])

	bad := []struct {
		name     string
		old, new *tensor.Tensor
		msg      string
	}{
		{"size", x2, mustNew(t, m, tensor.Float32, 7), "dtype and size must match"},
		{"dtype", x2, mustNew(t, m, tensor.Int32, n), "dtype and size must match"},
		{"already used", x2, y, "already used"},
		{"not used", x, mustNew(t, m, tensor.Float32, n), "not used by the graph"},
		{"nil", nil, x, "nil tensor"},
	}
	for _, c := range bad {
		err := e.Rebind(c.old, c.new)
		require.ErrorIs(t, err, vkflow.ErrInvalid, c.name)
		assert.Contains(t, err.Error(), c.msg, c.name)
	}
	require.ErrorIs(t, e.SetPush(s, int32(1), int32(2)), vkflow.ErrInvalid)
	require.ErrorIs(t, e.SetPush(graph.Node{}, float32(1)), vkflow.ErrInvalid, "the zero Node")

	// While a run is in flight, edits are refused.
	blocker, _ := timeline.New(m, 0)
	p := e.RunAsync(graph.Wait(blocker, 1))
	require.ErrorIs(t, e.SetPush(s, float32(1)), vkflow.ErrPending)
	require.ErrorIs(t, e.Rebind(x2, x), vkflow.ErrPending)
	require.NoError(t, blocker.Signal(1))
	require.NoError(t, p.Wait(ctx))
}

func mustNew(t *testing.T, m *vkflow.Manager, d tensor.Dtype, n int) *tensor.Tensor {
	t.Helper()
	x, err := tensor.New(m, d, []int{n})
	require.NoError(t, err)
	return x
}

// Wait holds a run until a timeline point; Signal marks its completion,
// so a sequence can follow a graph on the GPU.
func TestExternalOrdering(t *testing.T) {
	const n = 2048
	m, x, y, xv := newFixture(t, n, vkflow.WithQueues(2, false))
	ctx := context.Background()
	saxpy, err := kernels.Saxpy(m, x, y)
	require.NoError(t, err)
	z, _ := tensor.New(m, tensor.Float32, []int{n})
	add, err := kernels.Add(m, y, x, z)
	require.NoError(t, err)
	g, _ := graph.New(m)
	g.Fill(y, float32(0))
	g.Dispatch(saxpy, float32(2)).OnQueue(0)
	g.Dispatch(saxpy, float32(2)).OnQueue(1) // a cross-queue chain
	e, err := g.Compile()
	require.NoError(t, err)
	in, _ := timeline.New(m, 0)
	done, _ := timeline.New(m, 0)
	p := e.RunAsync(graph.Wait(in, 5), graph.Signal(done, 1))
	require.NoError(t, p.Err())
	seq, err := sequence.New(m, 0)
	require.NoError(t, err)
	seq.Dispatch(add).SyncLocal(z)
	sp := seq.Submit(ctx, sequence.Wait(done, 1))
	time.Sleep(20 * time.Millisecond)
	assert.False(t, p.Done(), "the run waits for in=5")
	assert.False(t, sp.Done(), "the sequence waits for the run")
	require.NoError(t, in.Signal(5))
	require.NoError(t, p.Wait(ctx))
	require.NoError(t, sp.Wait(ctx))
	zv, err := z.Float32s()
	require.NoError(t, err)
	for i := range zv {
		require.Equal(t, 5*xv[i], zv[i], "z = 4x + x at %d", i)
	}
	// A signal value that does not increase fails the run.
	err = e.RunAsync(graph.Signal(done, 1)).Wait(ctx)
	require.ErrorIs(t, err, vkflow.ErrInvalid)
	require.NoError(t, e.Run(ctx), "the Exec keeps working")
}

// Caps cut a long chain into several submits; values stay right.
func TestSubmitCaps(t *testing.T) {
	const n, steps = 1024, 50
	m, x, y, xv := newFixture(t, n)
	saxpy, err := kernels.Saxpy(m, x, y)
	require.NoError(t, err)
	g, _ := graph.New(m)
	g.Fill(y, float32(0))
	for range steps {
		g.Dispatch(saxpy, float32(1))
	}
	out := make([]float32, n)
	g.Download(y, out)
	for _, c := range []struct {
		opt     graph.Option
		submits string
	}{
		{graph.MaxNodesPerSubmit(10), "6 submits"},
		{graph.MaxWorkPerSubmit(20 * (1024 + 64)), "3 submits"},
	} {
		e, err := g.Compile(c.opt)
		require.NoError(t, err)
		assert.Contains(t, e.String(), c.submits)
		require.NoError(t, e.Run(context.Background()))
		assert.Equal(t, xv[7]*steps, out[7])
		require.NoError(t, e.Close())
	}
}

// With a transfer queue, an upload with no compute neighbour goes there;
// a small one stays on the first queue (not worth a wait).
func TestTransferQueue(t *testing.T) {
	const n = 1 << 16
	m, x, y, _ := newFixture(t, n, vkflow.WithQueues(1, true))
	saxpy, err := kernels.Saxpy(m, x, y)
	require.NoError(t, err)
	other, _ := tensor.New(m, tensor.Float32, []int{n})
	g, _ := graph.New(m)
	g.Dispatch(saxpy, float32(1)).Named("saxpy")
	g.Upload(other, ramp(n, 2)).Named("up")
	e, err := g.Compile(graph.Place(graph.PlaceSpread))
	require.NoError(t, err)
	s := e.String()
	assert.Contains(t, s, "queue 1 #0\n  1 up", s)
	assert.Contains(t, s, "queue 0 #0\n  0 saxpy", s)
	require.NoError(t, e.Run(context.Background()))
	ov, err := other.Float32s()
	require.NoError(t, err)
	assert.Equal(t, ramp(n, 2), ov)
}

// Runs of an Exec whose queues touch disjoint buffers in turn (a ring of
// frames) do not wait for each other's previous run: the raster queue may
// run ahead by the ring's size.
func TestLookahead(t *testing.T) {
	const n = 1 << 12
	m, x, _, _ := newFixture(t, n, vkflow.WithQueues(2, false))
	acc, _ := tensor.New(m, tensor.Float32, []int{n})
	g, _ := graph.New(m)
	g.Input(x)
	g.Fill(acc, float32(0)).OnQueue(1)
	var frames []*tensor.Tensor
	for range 2 {
		f, _ := tensor.New(m, tensor.Float32, []int{n})
		frames = append(frames, f)
		copyNode := g.Copy(x, f).OnQueue(0).Named("raster")
		_ = copyNode
		blend, err := kernels.Add(m, acc, f, acc)
		require.NoError(t, err)
		g.Dispatch(blend).OnQueue(1).Named("blend")
	}
	e, err := g.Compile()
	require.NoError(t, err)
	s := e.String()
	t.Log(s)
	// Raster i of a run waits only for blend i of the previous run (it
	// rewrites frame i), so raster runs ahead of blend by two frames.
	assert.Contains(t, s, "queue 0 #0, waits the previous run's queue 1 #1\n  1 raster")
	assert.Contains(t, s, "queue 0 #1, waits the previous run's queue 1 #2\n  3 raster")
	for range 3 {
		require.NoError(t, e.Run(context.Background()))
	}
	_ = frames
}

func TestDOT(t *testing.T) {
	m, x, y, _ := newFixture(t, 256, vkflow.WithQueues(2, false))
	saxpy, _ := kernels.Saxpy(m, x, y)
	g, _ := graph.New(m)
	g.Fill(y, float32(0)).OnQueue(0).Named("zero")
	g.Dispatch(saxpy, float32(1)).OnQueue(1).Named("axpy")
	e, err := g.Compile()
	require.NoError(t, err)
	dot := e.DOT()
	for _, want := range []string{"digraph vkflow {", "subgraph cluster_0", `label="submit 1: queue 1 #0"`, `n0 -> n1 [label="WAW", style=dashed]`, `label="wait", color=red`} {
		assert.Contains(t, dot, want)
	}
}

// Closing the Manager with runs in flight waits for them and frees the
// Exec; Close of the Exec is idempotent.
func TestManagerCloseWithRuns(t *testing.T) {
	m, x, y, _ := newFixture(t, 1<<14)
	saxpy, _ := kernels.Saxpy(m, x, y)
	g, _ := graph.New(m)
	for range 20 {
		g.Dispatch(saxpy, float32(1))
	}
	e, err := g.Compile()
	require.NoError(t, err)
	for range 5 {
		require.NoError(t, e.RunAsync().Err())
	}
	require.NoError(t, m.Close())
	require.NoError(t, e.Close())
	require.ErrorIs(t, e.Run(context.Background()), vkflow.ErrClosed)
	_, err = graph.New(m)
	require.ErrorIs(t, err, vkflow.ErrClosed)
}

// Runs, edits and Close from several goroutines: every call returns (an
// error once closed), nothing crashes, and validation stays quiet.
func TestCloseRace(t *testing.T) {
	for round := range 8 {
		m, x, y, _ := newFixture(t, 1<<12, vkflow.WithQueues(2, false))
		saxpy, err := kernels.Saxpy(m, x, y)
		require.NoError(t, err)
		z, _ := tensor.New(m, tensor.Float32, []int{1 << 12})
		add, err := kernels.Add(m, x, x, z)
		require.NoError(t, err)
		g, _ := graph.New(m)
		s := g.Dispatch(saxpy, float32(1)).OnQueue(0)
		g.Dispatch(add).OnQueue(1)
		g.Dispatch(saxpy, float32(1))
		out := make([]float32, 1<<12)
		g.Download(z, out)
		e, err := g.Compile()
		require.NoError(t, err)
		done := make(chan struct{})
		for w := range 3 {
			go func() {
				defer func() { done <- struct{}{} }()
				for i := 0; i < 20; i++ {
					switch (w + i) % 3 {
					case 0:
						_ = e.Run(context.Background())
					case 1:
						_ = e.RunAsync().Wait(context.Background())
					case 2:
						_ = e.SetPush(s, float32(1))
					}
				}
			}()
		}
		time.Sleep(time.Duration(round) * time.Millisecond)
		if round%2 == 0 {
			require.NoError(t, e.Close())
		}
		require.NoError(t, m.Close())
		for range 3 {
			<-done
		}
		require.ErrorIs(t, e.Run(context.Background()), vkflow.ErrClosed)
	}
}

// Run from several goroutines on a graph with an upload and a download:
// each Run waits for the staging buffers instead of failing.
func TestConcurrentRunsWithHostNodes(t *testing.T) {
	const n = 1024
	m, x, y, xv := newFixture(t, n)
	saxpy, err := kernels.Saxpy(m, x, y)
	require.NoError(t, err)
	g, _ := graph.New(m)
	g.Upload(x, xv)
	g.Fill(y, float32(0))
	g.Dispatch(saxpy, float32(2))
	out := make([]float32, n)
	g.Download(y, out)
	e, err := g.Compile()
	require.NoError(t, err)
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			for range 5 {
				if err := e.Run(context.Background()); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range 4 {
		require.NoError(t, <-errs)
	}
	assert.Equal(t, 2*xv[9], out[9])
}

// A run whose Signal value does not increase is refused before any of its
// work is submitted: the accumulating dispatch does not run.
func TestBadSignalSubmitsNothing(t *testing.T) {
	const n = 1024
	m, x, y, xv := newFixture(t, n, vkflow.WithQueues(2, false))
	saxpy, err := kernels.Saxpy(m, x, y)
	require.NoError(t, err)
	z, _ := tensor.New(m, tensor.Float32, []int{n})
	add, err := kernels.Add(m, x, x, z)
	require.NoError(t, err)
	g, _ := graph.New(m)
	g.Dispatch(saxpy, float32(1)).OnQueue(0) // y += x
	g.Dispatch(add).OnQueue(1)               // z = 2x, on the other queue: a join carries the signal
	e, err := g.Compile()
	require.NoError(t, err)
	done, _ := timeline.New(m, 0)
	require.NoError(t, done.Signal(5))
	p := e.RunAsync(graph.Signal(done, 3))
	require.ErrorIs(t, p.Err(), vkflow.ErrInvalid)
	require.ErrorIs(t, p.Wait(context.Background()), vkflow.ErrInvalid)
	require.NoError(t, e.Run(context.Background(), graph.Signal(done, 6)))
	yv, err := y.Float32s()
	require.NoError(t, err)
	assert.Equal(t, xv[3], yv[3], "only the good run added x")
	v, err := done.Value()
	require.NoError(t, err)
	assert.Equal(t, uint64(6), v)
}
