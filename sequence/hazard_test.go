package sequence_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow/internal/kernels"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/sequence"
	"github.com/vkflow/vkflow/tensor"
)

// Sequence A writes y and a separate sequence B reads it, on one queue, both
// in flight at once: only the tracked cross-submit barriers order them
// (nothing orders a command buffer after earlier submits wholesale). The
// values and the synchronization validation layer check it; built with
// vkflow_nobarriers the layer reports the hazards (make test-oracle).
func TestCrossSubmitWriteThenRead(t *testing.T) {
	m, _ := testutil.Manager(t)
	ctx := context.Background()
	const n = 1 << 14
	xv := ramp(n, 1)
	x, err := tensor.FromSlice(m, xv)
	require.NoError(t, err)
	y, err := tensor.FromSlice(m, make([]float32, n))
	require.NoError(t, err)
	z, err := tensor.New(m, tensor.Float32, []int{n})
	require.NoError(t, err)
	saxpy, err := kernels.Saxpy(m, x, y)
	require.NoError(t, err)
	add, err := kernels.Add(m, x, y, z)
	require.NoError(t, err)
	a, err := sequence.New(m, 0)
	require.NoError(t, err)
	b, err := sequence.New(m, 0)
	require.NoError(t, err)
	a.Dispatch(saxpy, float32(2)) // y += 2x
	b.Dispatch(add).SyncLocal(z)  // z = x + y
	var records int64
	for round := 1; round <= 6; round++ {
		pa, pb := a.EvalAsync(), b.EvalAsync()
		require.NoError(t, pa.Wait(ctx))
		require.NoError(t, pb.Wait(ctx))
		zv, err := z.Float32s()
		require.NoError(t, err)
		for i := range zv {
			if want := xv[i] * float32(1+2*round); zv[i] != want {
				t.Fatalf("round %d: z[%d] = %v, want %v", round, i, zv[i], want)
			}
		}
		if round == 3 {
			_, records = sequence.HazardStats(b)
		}
	}
	bs, brec := sequence.HazardStats(b)
	assert.Equal(t, int64(6), bs, "every B reads what A wrote just before")
	assert.Equal(t, records, brec, "steady state re-records no prelude")
	as, arec := sequence.HazardStats(a)
	assert.Equal(t, int64(5), as, "A's first submit follows only host writes")
	assert.LessOrEqual(t, arec, int64(2))
	for _, c := range []interface{ Close() error }{a, b, saxpy, add, x, y, z} {
		require.NoError(t, c.Close())
	}
}

// Reads after reads need no barrier across submits; a write after them
// does, and so does the first read after that write, once.
func TestCrossSubmitReadAfterRead(t *testing.T) {
	m, _ := testutil.Manager(t)
	ctx := context.Background()
	const n = 1024
	xv := ramp(n, 1)
	x, err := tensor.FromSlice(m, xv)
	require.NoError(t, err)
	outs := make([]*tensor.Tensor, 4)
	seqs := make([]*sequence.Sequence, 4)
	for i := range outs {
		outs[i], err = tensor.New(m, tensor.Float32, []int{n})
		require.NoError(t, err)
		seqs[i], err = sequence.New(m, 0)
		require.NoError(t, err)
		seqs[i].Copy(x, outs[i]).SyncLocal(outs[i])
	}
	barriers := func(s *sequence.Sequence) int64 { n, _ := sequence.HazardStats(s); return n }

	// Two readers of x, each writing its own output for the first time.
	require.NoError(t, seqs[0].Eval(ctx))
	require.NoError(t, seqs[1].Eval(ctx))
	assert.Zero(t, barriers(seqs[0]))
	assert.Zero(t, barriers(seqs[1]), "read after read: no barrier")

	// A writer of x after the reads: write after read.
	w, err := sequence.New(m, 0)
	require.NoError(t, err)
	require.NoError(t, w.Fill(x, float32(5)).Eval(ctx))
	assert.Equal(t, int64(1), barriers(w), "write after read")

	// The first reader after the write needs a barrier; the next reader
	// of the same stage and access finds the write visible already.
	require.NoError(t, seqs[2].Eval(ctx))
	require.NoError(t, seqs[3].Eval(ctx))
	assert.Equal(t, int64(1), barriers(seqs[2]), "read after write")
	assert.Zero(t, barriers(seqs[3]), "the write is visible to transfer reads already")
	for i := 2; i < 4; i++ {
		got, err := outs[i].Float32s()
		require.NoError(t, err)
		assert.Equal(t, float32(5), got[0])
		assert.Equal(t, float32(5), got[n-1])
	}
	got, err := outs[0].Float32s()
	require.NoError(t, err)
	assert.Equal(t, xv, got)
	require.NoError(t, w.Close())
	for i := range seqs {
		require.NoError(t, seqs[i].Close())
		require.NoError(t, outs[i].Close())
	}
	require.NoError(t, x.Close())
}

// A destroyed buffer's memory may back a new one: the next submit on the
// queue carries a global barrier, whatever it touches.
func TestCrossSubmitAfterFree(t *testing.T) {
	m, _ := testutil.Manager(t)
	ctx := context.Background()
	x, err := tensor.New(m, tensor.Float32, []int{256})
	require.NoError(t, err)
	w, err := sequence.New(m, 0)
	require.NoError(t, err)
	require.NoError(t, w.Fill(x, float32(1)).Eval(ctx))
	before := m.MemStats().Allocations
	require.NoError(t, w.Close())
	require.NoError(t, x.Close())
	require.Less(t, m.MemStats().Allocations, before, "x was freed")

	y, err := tensor.FromSlice(m, []float32{1, 2, 3})
	require.NoError(t, err)
	out, err := tensor.New(m, tensor.Float32, []int{3})
	require.NoError(t, err)
	r, err := sequence.New(m, 0)
	require.NoError(t, err)
	require.NoError(t, r.Copy(y, out).SyncLocal(out).Eval(ctx))
	n, _ := sequence.HazardStats(r)
	assert.Equal(t, int64(1), n, "the first submit after a free orders after everything")
	require.NoError(t, r.Eval(ctx))
	n, _ = sequence.HazardStats(r)
	assert.Equal(t, int64(2), n, "then only real hazards: out written twice")
	got, err := out.Float32s()
	require.NoError(t, err)
	assert.Equal(t, []float32{1, 2, 3}, got)
	for _, c := range []interface{ Close() error }{r, y, out} {
		require.NoError(t, c.Close())
	}
}

// A sequence submitted again orders itself after its previous submit
// (write after write on what it writes, write after read on what it
// reads and writes) without a second command buffer in the batch: its
// command buffer begins with those barriers, so the prelude is left out
// when they are all the submit needs. On lavapipe each extra command
// buffer costs about 5 µs per submit (docs/BENCHMARKS.md, "Submit path,
// pinned"). A submit whose hazards come from another command buffer still
// gets its prelude. Synchronization validation checks the order.
func TestResubmitNeedsNoPrelude(t *testing.T) {
	m, _ := testutil.Manager(t)
	ctx := context.Background()
	const n = 1024
	xv := ramp(n, 1)
	x, err := tensor.FromSlice(m, xv)
	require.NoError(t, err)
	y, err := tensor.FromSlice(m, make([]float32, n))
	require.NoError(t, err)
	saxpy, err := kernels.Saxpy(m, x, y)
	require.NoError(t, err)
	s, err := sequence.New(m, 0)
	require.NoError(t, err)
	s.Dispatch(saxpy, float32(1)).SyncLocal(y) // y += x
	const runs = 5
	for range runs {
		require.NoError(t, s.Eval(ctx))
	}
	got, err := y.Float32s()
	require.NoError(t, err)
	for i := range got {
		require.Equal(t, xv[i]*runs, got[i], "y[%d]", i)
	}
	bs, _ := sequence.HazardStats(s)
	assert.Equal(t, int64(runs-1), bs, "every submit after the first orders after the previous one")
	assert.Zero(t, sequence.PreludeSubmits(s), "its own command buffer carries those barriers")

	// Another sequence writes y with a transfer (a fill): s after it must
	// wait for a transfer write, which its leading barrier does not cover
	// (it orders after compute): a prelude.
	w, err := sequence.New(m, 0)
	require.NoError(t, err)
	w.Fill(y, float32(0))
	require.NoError(t, w.Eval(ctx))
	require.NoError(t, s.Eval(ctx))
	assert.Equal(t, int64(1), sequence.PreludeSubmits(s), "after another command buffer's transfer write")
	got, err = y.Float32s()
	require.NoError(t, err)
	assert.Equal(t, xv, got)
	for _, c := range []interface{ Close() error }{s, w, saxpy, x, y} {
		require.NoError(t, c.Close())
	}
}
