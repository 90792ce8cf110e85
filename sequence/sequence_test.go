package sequence_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/algorithm"
	"github.com/vkflow/vkflow/internal/kernels"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/sequence"
	"github.com/vkflow/vkflow/shaders"
	"github.com/vkflow/vkflow/tensor"
	"github.com/vkflow/vkflow/timeline"
)

func ramp(n int, scale float32) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = float32(i%1000)*scale + 1
	}
	return out
}

func TestMultiply(t *testing.T) {
	m, _ := testutil.Manager(t)
	ctx := context.Background()
	tests := []struct {
		name   string
		n      int
		scalar bool
	}{
		{"vec4", 1024, false},
		{"scalar odd length", 1001, false},
		{"scalar forced", 1024, true},
		// 4.3M elements / 64 per workgroup exceeds lavapipe's 65535
		// workgroups: the dispatch is split with vkCmdDispatchBase.
		{"scalar split over the workgroup limit", 65535*64 + 4096 + 3, true},
		// Three pieces: vkCmdDispatch, then two vkCmdDispatchBase with
		// bases 65535 and 131070 (the last piece partly out of range).
		{"scalar split in three pieces", (2*65535+5)*64 - 7, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			av, bv := ramp(tt.n, 0.5), ramp(tt.n, 0.25)
			a, err := tensor.FromSlice(m, av)
			require.NoError(t, err)
			b, err := tensor.FromSlice(m, bv)
			require.NoError(t, err)
			out, err := tensor.New(m, tensor.Float32, []int{tt.n})
			require.NoError(t, err)
			mul := kernels.Multiply
			if tt.scalar {
				mul = kernels.MultiplyScalar
			}
			algo, err := mul(m, a, b, out)
			require.NoError(t, err)
			seq, err := sequence.New(m, 0)
			require.NoError(t, err)
			require.NoError(t, seq.SyncDevice(a, b).Dispatch(algo).SyncLocal(out).Eval(ctx))
			got, err := out.Float32s()
			require.NoError(t, err)
			for i := range got {
				if got[i] != av[i]*bv[i] {
					t.Fatalf("out[%d] = %v, want %v", i, got[i], av[i]*bv[i])
				}
			}
			for _, c := range []interface{ Close() error }{seq, algo, a, b, out} {
				require.NoError(t, c.Close())
			}
		})
	}
}

// The same read-modify-write dispatch twice with no barrier is a hazard the
// synchronization validation layer does not catch; only the values show it.
func TestInferredBarriersByValue(t *testing.T) {
	m, _ := testutil.Manager(t)
	ctx := context.Background()
	const n = 1 << 16
	x, err := tensor.FromSlice(m, ramp(n, 1))
	require.NoError(t, err)
	y, err := tensor.New(m, tensor.Float32, []int{n})
	require.NoError(t, err)
	z, err := tensor.New(m, tensor.Float32, []int{n})
	require.NoError(t, err)
	saxpy, err := kernels.Saxpy(m, x, y)
	require.NoError(t, err)
	add, err := kernels.Add(m, x, y, z)
	require.NoError(t, err)
	seq, err := sequence.New(m, 0)
	require.NoError(t, err)
	// fill (WAW with nothing) -> saxpy RMW y -> saxpy RMW y (RAW+WAW) ->
	// add reads y writes z (RAW) -> copy z into x's... no: fill x after add
	// reads it (WAR), then copy y into z (WAW on z).
	seq.Fill(y, float32(1)).
		Dispatch(saxpy, float32(2)).
		Dispatch(saxpy, float32(3)).
		Dispatch(add).
		SyncLocal(z)
	require.NoError(t, seq.Eval(ctx))
	xv := ramp(n, 1)
	zv, err := z.Float32s()
	require.NoError(t, err)
	for i := range zv {
		want := xv[i] + (1 + 2*xv[i] + 3*xv[i])
		if zv[i] != want {
			t.Fatalf("z[%d] = %v, want %v", i, zv[i], want)
		}
	}

	// WAR: the add must read x before the fill overwrites it; WAW on z.
	seq2, err := sequence.New(m, 0)
	require.NoError(t, err)
	seq2.Dispatch(add).Fill(x, float32(0)).Copy(y, z, sequence.Region{Src: 0, Dst: 0, Len: n / 2}).SyncLocal(x, z)
	require.NoError(t, seq2.Eval(ctx))
	zv, err = z.Float32s()
	require.NoError(t, err)
	yv, err := y.Float32s()
	require.NoError(t, err)
	for i := range zv {
		want := xv[i] + yv[i]
		if i < n/2 {
			want = yv[i]
		}
		if zv[i] != want {
			t.Fatalf("z[%d] = %v, want %v", i, zv[i], want)
		}
	}
	xz, err := x.Float32s()
	require.NoError(t, err)
	assert.Equal(t, make([]float32, n), xz)
}

func TestResubmitClearRerecord(t *testing.T) {
	m, _ := testutil.Manager(t)
	ctx := context.Background()
	x, err := tensor.FromSlice(m, []float32{1, 2, 3, 4})
	require.NoError(t, err)
	y, err := tensor.FromSlice(m, []float32{0, 0, 0, 0})
	require.NoError(t, err)
	saxpy, err := kernels.Saxpy(m, x, y)
	require.NoError(t, err)
	seq, err := sequence.New(m, 0)
	require.NoError(t, err)
	seq.Dispatch(saxpy, float32(1)).SyncLocal(y)
	for i := 0; i < 3; i++ {
		require.NoError(t, seq.Eval(ctx), "re-submitting without re-recording")
	}
	got, err := y.Float32s()
	require.NoError(t, err)
	assert.Equal(t, []float32{3, 6, 9, 12}, got)

	// Re-bind the algorithm to new tensors without rebuilding the pipeline.
	x2, err := tensor.FromSlice(m, []float32{10, 10, 10, 10})
	require.NoError(t, err)
	y2, err := tensor.FromSlice(m, []float32{1, 1, 1, 1})
	require.NoError(t, err)
	require.NoError(t, saxpy.Bind(x2, y2))
	require.NoError(t, seq.Eval(ctx), "the old build still uses x and y")
	got, err = y.Float32s()
	require.NoError(t, err)
	assert.Equal(t, []float32{4, 8, 12, 16}, got)
	require.NoError(t, seq.Rerecord())
	require.NoError(t, seq.Clear())
	seq.Dispatch(saxpy, float32(0.5)).SyncLocal(y2)
	require.NoError(t, seq.Eval(ctx))
	got, err = y2.Float32s()
	require.NoError(t, err)
	assert.Equal(t, []float32{6, 6, 6, 6}, got)

	// An empty sequence submits and signals.
	empty, err := sequence.New(m, 0)
	require.NoError(t, err)
	require.NoError(t, empty.Eval(ctx))
}

func TestEvalAsyncAndTimestamps(t *testing.T) {
	m, _ := testutil.Manager(t)
	ctx := context.Background()
	const n = 1 << 14
	a, err := tensor.FromSlice(m, ramp(n, 1))
	require.NoError(t, err)
	out, err := tensor.New(m, tensor.Float32, []int{n})
	require.NoError(t, err)
	mul, err := kernels.Multiply(m, a, a, out)
	require.NoError(t, err)
	seq, err := sequence.New(m, 0, sequence.WithTimestamps())
	require.NoError(t, err)
	seq.Dispatch(mul).Copy(out, a).SyncLocal(a)
	p := seq.EvalAsync()
	require.NoError(t, p.Err())
	assert.NotZero(t, p.Value())
	require.NoError(t, p.Wait(ctx))
	assert.True(t, p.Done())
	ts, err := seq.Timestamps()
	require.NoError(t, err)
	require.Len(t, ts, 3)
	assert.Greater(t, ts[0], time.Duration(0), "the dispatch took GPU time")
	got, err := a.Float32s()
	require.NoError(t, err)
	v := ramp(n, 1)
	assert.Equal(t, v[7]*v[7], got[7])

	noTS, err := sequence.New(m, 0)
	require.NoError(t, err)
	_, err = noTS.Timestamps()
	assert.ErrorIs(t, err, vkflow.ErrInvalid)
}

func TestEvalAllocatesNothing(t *testing.T) {
	m, _ := testutil.Manager(t)
	ctx := context.Background()
	a, err := tensor.FromSlice(m, ramp(1024, 1))
	require.NoError(t, err)
	out, err := tensor.New(m, tensor.Float32, []int{1024})
	require.NoError(t, err)
	mul, err := kernels.Multiply(m, a, a, out)
	require.NoError(t, err)
	seq, err := sequence.New(m, 0)
	require.NoError(t, err)
	seq.Dispatch(mul)
	require.NoError(t, seq.Eval(ctx)) // builds
	// testutil.Allocs counts every allocation over all runs (AllocsPerRun
	// would round one allocation in 100 calls down to zero).
	allocs := testutil.Allocs(1000, func() {
		if err := seq.Eval(ctx); err != nil {
			t.Fatal(err)
		}
	})
	assert.Zero(t, allocs, "steady-state submit + wait, 1000 runs")
	allocs = testutil.Allocs(1000, func() {
		p := seq.EvalAsync()
		for !p.Done() {
		}
		if err := p.Wait(ctx); err != nil {
			t.Fatal(err)
		}
	})
	assert.Zero(t, allocs, "EvalAsync + Done + Wait, 1000 runs")
}

// heavy records enough work that it is still running a few milliseconds
// after submission on lavapipe.
// It also returns what it created besides keep, the algorithm first.
func heavy(t *testing.T, m *vkflow.Manager) (*sequence.Sequence, []interface{ Close() error }, *tensor.Tensor) {
	const n = 1 << 22
	a, err := tensor.FromSlice(m, ramp(n, 1))
	require.NoError(t, err)
	b, err := tensor.New(m, tensor.Float32, []int{n})
	require.NoError(t, err)
	keep, err := tensor.New(m, tensor.Float32, []int{n})
	require.NoError(t, err)
	mul, err := kernels.MultiplyScalar(m, a, a, b)
	require.NoError(t, err)
	seq, err := sequence.New(m, 0)
	require.NoError(t, err)
	for i := 0; i < 40; i++ {
		seq.Dispatch(mul)
	}
	seq.Copy(b, keep).SyncLocal(keep)
	return seq, []interface{ Close() error }{mul, a, b}, keep
}

// A wait that times out returns the context's error and frees nothing the
// GPU may still use, even when everything is closed (Kompute crashes here).
func TestTimedOutWaitKeepsResourcesAlive(t *testing.T) {
	m, _ := testutil.Manager(t)
	seq, ts, keep := heavy(t, m)
	p := seq.EvalAsync()
	require.NoError(t, p.Err())
	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	err := p.Wait(ctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.False(t, p.Done(), "the work is still running")

	before := m.MemStats()
	require.NoError(t, seq.Close())
	for _, tt := range ts {
		require.NoError(t, tt.Close())
	}
	assert.Equal(t, before.Allocations, m.MemStats().Allocations, "nothing freed while the GPU runs")
	assert.Positive(t, m.Runtime().Deferred())

	require.NoError(t, p.Wait(context.Background()))
	assert.Zero(t, m.Runtime().Deferred(), "freed once the GPU is done")
	assert.Equal(t, before.Allocations-2, m.MemStats().Allocations)
	got, err := keep.Float32s()
	require.NoError(t, err)
	v := float32(1)
	assert.Equal(t, v*v, got[0])
}

// gated submits heavy()'s sequence held behind a timeline nobody has
// signalled yet, so it is certainly pending until gate.Signal(1).
func gated(t *testing.T, m *vkflow.Manager) (*sequence.Sequence, sequence.Pending, *timeline.Timeline) {
	seq, _, _ := heavy(t, m)
	gate, err := timeline.New(m, 0)
	require.NoError(t, err)
	p := seq.Submit(context.Background(), sequence.Wait(gate, 1))
	require.NoError(t, p.Err())
	return seq, p, gate
}

func TestCancelledWait(t *testing.T) {
	m, _ := testutil.Manager(t)
	_, p, gate := gated(t, m)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(2 * time.Millisecond); cancel() }()
	assert.ErrorIs(t, p.Wait(ctx), context.Canceled)
	require.NoError(t, gate.Signal(1))
	require.NoError(t, p.Wait(context.Background()))
}

func TestClearWhilePending(t *testing.T) {
	m, _ := testutil.Manager(t)
	seq, p, gate := gated(t, m)
	assert.ErrorIs(t, seq.Clear(), vkflow.ErrPending)
	assert.ErrorIs(t, seq.Rerecord(), vkflow.ErrPending)
	require.NoError(t, gate.Signal(1))
	require.NoError(t, p.Wait(context.Background()))
	require.NoError(t, seq.Clear())
}

func TestBadInput(t *testing.T) {
	m, _ := testutil.Manager(t)
	other, _ := testutil.Manager(t)
	f4, err := tensor.FromSlice(m, []float32{1, 2, 3, 4})
	require.NoError(t, err)
	f3, err := tensor.FromSlice(m, []float32{1, 2, 3})
	require.NoError(t, err)
	i4, err := tensor.FromSlice(m, []int32{1, 2, 3, 4})
	require.NoError(t, err)
	st, err := tensor.New(m, tensor.Float32, []int{4}, tensor.In(tensor.Storage))
	require.NoError(t, err)
	foreign, err := tensor.FromSlice(other, []float32{1, 2, 3, 4})
	require.NoError(t, err)
	saxpy, err := kernels.Saxpy(m, f4, f4)
	require.NoError(t, err)
	closedT, err := tensor.FromSlice(m, []float32{1})
	require.NoError(t, err)
	require.NoError(t, closedT.Close())

	newSeq := func() *sequence.Sequence {
		s, err := sequence.New(m, 0)
		require.NoError(t, err)
		return s
	}
	tests := []struct {
		name string
		run  func() error
		is   error
	}{
		{"copy size mismatch", func() error { return newSeq().Copy(f4, f3).Err() }, vkflow.ErrInvalid},
		{"copy mismatched dtypes", func() error { return newSeq().Copy(f4, i4).Err() }, vkflow.ErrInvalid},
		{"copy region out of bounds", func() error {
			return newSeq().Copy(f4, f3, sequence.Region{Src: 2, Dst: 0, Len: 3}).Err()
		}, vkflow.ErrInvalid},
		{"copy overlapping in place", func() error {
			return newSeq().Copy(f4, f4, sequence.Region{Src: 0, Dst: 1, Len: 2}).Err()
		}, vkflow.ErrInvalid},
		{"fill mismatched dtype", func() error { return newSeq().Fill(f4, int32(1)).Err() }, vkflow.ErrInvalid},
		{"fill float64 with unequal halves", func() error {
			d, err := tensor.New(m, tensor.Float64, []int{2})
			require.NoError(t, err)
			return newSeq().Fill(d, 1.5).Err()
		}, vkflow.ErrInvalid},
		{"kernel mismatched dtypes", func() error { _, err := kernels.Multiply(m, f4, i4, f4); return err }, vkflow.ErrInvalid},
		{"kernel size mismatch", func() error { _, err := kernels.Add(m, f4, f3, f4); return err }, vkflow.ErrInvalid},
		{"binding count differs from the shader", func() error {
			_, err := algorithm.New(m, shaders.Mul, []*tensor.Tensor{f4, f4})
			return err
		}, vkflow.ErrInvalid},
		{"push constant size differs", func() error { return newSeq().Dispatch(saxpy).Err() }, vkflow.ErrInvalid},
		{"push constant wrong type size", func() error { return newSeq().Dispatch(saxpy, float64(2)).Err() }, vkflow.ErrInvalid},
		{"invalid SPIR-V", func() error {
			_, err := algorithm.New(m, []byte("not spir-v at all"), []*tensor.Tensor{f4})
			return err
		}, vkflow.ErrInvalid},
		{"truncated SPIR-V", func() error {
			_, err := algorithm.New(m, shaders.Mul[:len(shaders.Mul)-8], []*tensor.Tensor{f4, f4, f4})
			return err
		}, vkflow.ErrInvalid},
		{"unaligned SPIR-V", func() error {
			_, err := algorithm.New(m, shaders.Mul[:len(shaders.Mul)-1], []*tensor.Tensor{f4, f4, f4})
			return err
		}, vkflow.ErrInvalid},
		{"spec constant the shader lacks", func() error {
			_, err := algorithm.New(m, shaders.Mul, []*tensor.Tensor{f4, f4, f4}, algorithm.Spec(7, float32(1)))
			return err
		}, vkflow.ErrInvalid},
		{"queue index out of range", func() error { _, err := sequence.New(m, 5); return err }, vkflow.ErrInvalid},
		{"negative queue index", func() error { _, err := sequence.New(m, -1); return err }, vkflow.ErrInvalid},
		{"nil tensor", func() error { return newSeq().SyncLocal(nil).Err() }, vkflow.ErrInvalid},
		{"nil algorithm", func() error { return newSeq().Dispatch(nil).Err() }, vkflow.ErrInvalid},
		{"nil tensor in algorithm", func() error {
			_, err := kernels.Saxpy(m, f4, nil)
			return err
		}, vkflow.ErrInvalid},
		{"tensor of another manager", func() error { return newSeq().Copy(f4, foreign).Err() }, vkflow.ErrInvalid},
		{"storage tensor has no host side", func() error { return newSeq().SyncLocal(st).Err() }, vkflow.ErrInvalid},
		{"closed tensor", func() error { return newSeq().SyncDevice(closedT).Err() }, vkflow.ErrClosed},
		{"sticky error reaches Eval", func() error {
			return newSeq().Copy(f4, f3).Dispatch(saxpy, float32(1)).Eval(context.Background())
		}, vkflow.ErrInvalid},
		{"closed sequence", func() error {
			s := newSeq()
			require.NoError(t, s.Close())
			require.NoError(t, s.Close(), "idempotent")
			return s.Eval(context.Background())
		}, vkflow.ErrClosed},
		{"tensor closed after recording", func() error {
			x, err := tensor.FromSlice(m, []float32{1, 2})
			require.NoError(t, err)
			s := newSeq().SyncLocal(x)
			require.NoError(t, x.Close())
			return s.Eval(context.Background())
		}, vkflow.ErrClosed},
		{"closed algorithm", func() error {
			a, err := kernels.Saxpy(m, f4, f4)
			require.NoError(t, err)
			require.NoError(t, a.Close())
			return newSeq().Dispatch(a, float32(1)).Err()
		}, vkflow.ErrClosed},
		{"bind wrong count", func() error { return saxpy.Bind(f4) }, vkflow.ErrInvalid},
		{"cancelled context", func() error {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			_, p, gate := gated(t, m)
			err := p.Wait(ctx)
			require.NoError(t, gate.Signal(1))
			require.NoError(t, p.Wait(context.Background()))
			return err
		}, context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.run()
			require.Error(t, err)
			assert.True(t, errors.Is(err, tt.is), "got %v, want %v", err, tt.is)
		})
	}
}

func TestManagerCloseOrder(t *testing.T) {
	m, _ := testutil.Manager(t)
	a, err := tensor.FromSlice(m, []float32{1, 2, 3, 4})
	require.NoError(t, err)
	mul, err := kernels.Multiply(m, a, a, a)
	require.NoError(t, err)
	seq, err := sequence.New(m, 0)
	require.NoError(t, err)
	seq.Dispatch(mul)
	p := seq.EvalAsync() // still pending, perhaps, when Close starts
	require.NoError(t, m.Close())
	require.NoError(t, m.Close())
	assert.True(t, p.Done())
	assert.ErrorIs(t, seq.Eval(context.Background()), vkflow.ErrClosed)
	assert.ErrorIs(t, mul.Bind(a, a, a), vkflow.ErrClosed)
	assert.True(t, a.Closed())
	_, err = sequence.New(m, 0)
	assert.ErrorIs(t, err, vkflow.ErrClosed)
}
