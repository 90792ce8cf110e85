package vkflow_test

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/algorithm"
	"github.com/vkflow/vkflow/graph"
	"github.com/vkflow/vkflow/internal/kernels"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/ops"
	"github.com/vkflow/vkflow/sequence"
	"github.com/vkflow/vkflow/tensor"
	"github.com/vkflow/vkflow/vk"
)

// recordFixture is what one round of TestRecordRacesClose records from.
type recordFixture struct {
	src, dst *tensor.Tensor
	mul      *algorithm.Algorithm
	op       *ops.Op
}

// recorders record with every recording method; each returns the
// recording error (nil or ErrClosed are both fine while src, mul or op is
// being closed) and, for a sequence, the sequence to run.
var recorders = []struct {
	name string
	rec  func(m *vkflow.Manager, f *recordFixture) (*sequence.Sequence, error)
}{
	{"sequence Copy", func(m *vkflow.Manager, f *recordFixture) (*sequence.Sequence, error) {
		return seqRecord(m, func(s *sequence.Sequence) { s.Copy(f.src, f.dst) })
	}},
	{"sequence Copy regions", func(m *vkflow.Manager, f *recordFixture) (*sequence.Sequence, error) {
		return seqRecord(m, func(s *sequence.Sequence) { s.Copy(f.src, f.dst, sequence.Region{Src: 1, Dst: 0, Len: 3}) })
	}},
	{"sequence Fill", func(m *vkflow.Manager, f *recordFixture) (*sequence.Sequence, error) {
		return seqRecord(m, func(s *sequence.Sequence) { s.Fill(f.src, float32(2)) })
	}},
	{"sequence SyncDevice", func(m *vkflow.Manager, f *recordFixture) (*sequence.Sequence, error) {
		return seqRecord(m, func(s *sequence.Sequence) { s.SyncDevice(f.src) })
	}},
	{"sequence SyncLocal", func(m *vkflow.Manager, f *recordFixture) (*sequence.Sequence, error) {
		return seqRecord(m, func(s *sequence.Sequence) { s.SyncLocal(f.src) })
	}},
	{"sequence Dispatch", func(m *vkflow.Manager, f *recordFixture) (*sequence.Sequence, error) {
		return seqRecord(m, func(s *sequence.Sequence) { s.Dispatch(f.mul) })
	}},
	{"ops Record", func(m *vkflow.Manager, f *recordFixture) (*sequence.Sequence, error) {
		return seqRecord(m, func(s *sequence.Sequence) { f.op.Record(s) })
	}},
	{"graph nodes", func(m *vkflow.Manager, f *recordFixture) (*sequence.Sequence, error) {
		g, err := graph.New(m)
		if err != nil {
			return nil, err
		}
		host := make([]float32, 4)
		g.Input(f.src)
		g.Copy(f.src, f.dst)
		g.Fill(f.src, float32(2))
		g.Upload(f.src, host)
		g.Download(f.src, host)
		g.Dispatch(f.mul)
		g.Opaque("copy", []*tensor.Tensor{f.src}, []*tensor.Tensor{f.dst}, func(vk.CommandBuffer) {})
		f.op.AddTo(g)
		if err := g.Err(); err != nil {
			return nil, err
		}
		// Compile holds what it compiles, or fails with ErrClosed.
		e, err := g.Compile()
		if err == nil {
			e.Close()
		}
		return nil, err
	}},
}

func seqRecord(m *vkflow.Manager, rec func(*sequence.Sequence)) (*sequence.Sequence, error) {
	s, err := sequence.New(m, 0)
	if err != nil {
		return nil, err
	}
	rec(s)
	if err := s.Err(); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// TestRecordRacesClose records with every recording method while another
// goroutine closes the source tensor, the algorithm and the op (issue 19,
// defect 1: the race detector saw sequence.Copy read an allocation that
// Tensor.Close was freeing). Recording must either hold what it read, and
// so that submitting it fails cleanly with ErrClosed, or fail with
// ErrClosed itself; the race detector must see nothing.
func TestRecordRacesClose(t *testing.T) {
	m, _ := testutil.Manager(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rounds := 40
	if testing.Short() {
		rounds = 10
	}
	for _, r := range recorders {
		t.Run(r.name, func(t *testing.T) {
			recorded := 0
			for round := range rounds {
				src, err := tensor.FromSlice(m, []float32{1, 2, 3, 4})
				require.NoError(t, err)
				dst, err := tensor.New(m, tensor.Float32, []int{4})
				require.NoError(t, err)
				mul, err := kernels.Multiply(m, src, src, dst)
				require.NoError(t, err)
				op, err := ops.Add(m, src, src, dst)
				require.NoError(t, err)
				f := &recordFixture{src: src, dst: dst, mul: mul, op: op}

				var wg sync.WaitGroup
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range round % 4 {
						runtime.Gosched()
					}
					src.Close()
					mul.Close()
					op.Close()
				}()
				s, err := r.rec(m, f)
				wg.Wait()
				if err != nil {
					require.ErrorIs(t, err, vkflow.ErrClosed, "round %d", round)
				} else {
					recorded++
				}
				if s != nil {
					// The sequence holds what it recorded, so the Close
					// freed nothing under it; submitting it after the Close
					// is refused with ErrClosed (a sequence does not run
					// closed tensors).
					if err := s.Eval(ctx); err != nil {
						require.ErrorIs(t, err, vkflow.ErrClosed, "round %d", round)
					}
					require.NoError(t, s.Close())
				}
				require.NoError(t, dst.Close())
			}
			t.Logf("%d of %d rounds recorded before the Close", recorded, rounds)
		})
	}
	require.False(t, errors.Is(ctx.Err(), context.DeadlineExceeded))
}
