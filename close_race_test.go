package vkflow_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/algorithm"
	"github.com/vkflow/vkflow/dlpack"
	"github.com/vkflow/vkflow/internal/kernels"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/sequence"
	"github.com/vkflow/vkflow/tensor"
	"github.com/vkflow/vkflow/timeline"
)

// closeRaceErr accepts what a call racing Manager.Close may return: nil,
// ErrClosed, or a context error. Anything else is a failure.
func closeRaceErr(err error) error {
	if err == nil || errors.Is(err, vkflow.ErrClosed) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return nil
	}
	return err
}

// raceWorkers are the workloads that run while the main goroutine closes
// the Manager. Each loops until a call fails with ErrClosed and reports the
// first unexpected error.
var raceWorkers = map[string]func(ctx context.Context, m *vkflow.Manager) error{
	"eval": func(ctx context.Context, m *vkflow.Manager) error {
		a, err := tensor.FromSlice(m, []float32{1, 2, 3, 4})
		if err != nil {
			return err
		}
		b, err := tensor.FromSlice(m, []float32{5, 6, 7, 8})
		if err != nil {
			return err
		}
		out, err := tensor.New(m, tensor.Float32, []int{4})
		if err != nil {
			return err
		}
		mul, err := kernels.Multiply(m, a, b, out)
		if err != nil {
			return err
		}
		seq, err := sequence.New(m, 0)
		if err != nil {
			return err
		}
		seq.SyncDevice(a, b).Dispatch(mul).SyncLocal(out)
		for i := 0; ; i++ {
			if i%2 == 0 {
				err = seq.Eval(ctx)
			} else {
				err = seq.EvalAsync().Wait(ctx)
			}
			if err != nil {
				return err
			}
			if _, err := out.Float32s(); err != nil {
				return err
			}
		}
	},
	"fromslice": func(ctx context.Context, m *vkflow.Manager) error {
		data := make([]float32, 1024)
		for {
			t, err := tensor.FromSlice(m, data)
			if err != nil {
				return err
			}
			if _, err := t.Float32s(); err != nil {
				return err
			}
			if err := t.Close(); err != nil {
				return err
			}
		}
	},
	"submit": func(ctx context.Context, m *vkflow.Manager) error {
		tl, err := timeline.New(m, 0)
		if err != nil {
			return err
		}
		x, err := tensor.New(m, tensor.Float32, []int{64}, tensor.In(tensor.Storage))
		if err != nil {
			return err
		}
		seq, err := sequence.New(m, len(m.Queues())-1)
		if err != nil {
			return err
		}
		seq.Fill(x, float32(1))
		for v := uint64(0); ; v += 2 {
			// The host signal comes first: a submit held back when Close
			// starts would be reported as never submitted.
			if err := tl.Signal(v + 1); err != nil {
				return err
			}
			p := seq.Submit(ctx, sequence.Wait(tl, v+1), sequence.Signal(tl, v+2))
			if err := p.Err(); err != nil {
				return err
			}
			if err := p.Wait(ctx); err != nil {
				return err
			}
			if err := tl.Wait(ctx, v+2); err != nil {
				return err
			}
		}
	},
	// A host wait for a value nobody signals ends with ErrClosed: waits
	// must not keep Close from proceeding.
	"hostwait": func(ctx context.Context, m *vkflow.Manager) error {
		tl, err := timeline.New(m, 0)
		if err != nil {
			return err
		}
		if err := tl.Wait(ctx, 1); err != nil {
			return err
		}
		return errors.New("the wait returned nil, but nothing signalled")
	},
	// DLPack exports pin the device; the last deleter after Close destroys
	// it.
	"dlpack": func(ctx context.Context, m *vkflow.Manager) error {
		for {
			t, err := tensor.FromSlice(m, []float32{1, 2, 3, 4})
			if err != nil {
				return err
			}
			exp, err := dlpack.Export(ctx, t, dlpack.Options{})
			if err != nil {
				return err
			}
			t.Close()
			time.Sleep(time.Millisecond)
			exp.Delete()
		}
	},
	"algorithm": func(ctx context.Context, m *vkflow.Manager) error {
		for {
			a, err := tensor.New(m, tensor.Float32, []int{16})
			if err != nil {
				return err
			}
			mul, err := kernels.Multiply(m, a, a, a)
			if err != nil {
				return err
			}
			var alg *algorithm.Algorithm = mul
			if err := alg.Close(); err != nil {
				return err
			}
			if err := a.Close(); err != nil {
				return err
			}
		}
	},
}

// TestCloseRace closes the Manager at a random moment while other
// goroutines evaluate, create tensors and algorithms and submit with
// timelines. Every call must return nil or ErrClosed, and Close nil.
func TestCloseRace(t *testing.T) {
	const iterations = 24
	deadline := time.Now().Add(6 * time.Second)
	for it := 0; it < iterations && time.Now().Before(deadline); it++ {
		t.Run(fmt.Sprint(it), func(t *testing.T) {
			var opts []vkflow.Option
			if it%2 == 1 {
				opts = append(opts, vkflow.WithStagedDeviceMemory())
			}
			if it%3 == 2 {
				opts = append(opts, vkflow.WithQueues(2, true))
			}
			m, _ := testutil.Manager(t, opts...)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			var wg sync.WaitGroup
			errs := make(chan error, 2*len(raceWorkers))
			for name, w := range raceWorkers {
				for k := 0; k < 2; k++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						if err := closeRaceErr(w(ctx, m)); err != nil {
							errs <- fmt.Errorf("%s: %w", name, err)
						}
					}()
				}
			}
			time.Sleep(time.Duration(rand.IntN(40)) * time.Millisecond)
			require.NoError(t, m.Close())
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
		})
	}
}
