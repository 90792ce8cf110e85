package tensor_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/sequence"
	"github.com/vkflow/vkflow/tensor"
)

// gpuRead copies x into the Host tensor h in a sequence and returns its
// words.
func gpuRead(t *testing.T, m *vkflow.Manager, x, h *tensor.Tensor) []uint32 {
	t.Helper()
	s, err := sequence.New(m, 0)
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.Copy(x, h).SyncLocal(h).Eval(context.Background()))
	got, err := h.Uint32s()
	require.NoError(t, err)
	return append([]uint32(nil), got...)
}

func nonZero(words []uint32) int {
	n := 0
	for _, w := range words {
		if w != 0 {
			n++
		}
	}
	return n
}

type place struct {
	mem    uint64
	offset uint64
}

func placeOf(x *tensor.Tensor) place {
	a := x.Allocation()
	return place{uint64(a.Memory()), a.MemoryOffset()}
}

// New tensors read as zero whatever memory they reuse: a tensor written by
// the GPU and closed leaves nothing for the next tensor placed on its bytes.
func TestNewTensorsAreZero(t *testing.T) {
	// 30 MiB tensors and a 30 MiB readback tensor made first: the blocks
	// (64 MiB) run out of clean space, so round 2 lands on round 1's bytes.
	const n = 30 << 20 / 4
	for _, staged := range []bool{false, true} {
		var opts []vkflow.Option
		name := "default"
		if staged {
			name, opts = "staged", []vkflow.Option{vkflow.WithStagedDeviceMemory()}
		}
		kinds := []tensor.Memory{tensor.Storage}
		if staged {
			kinds = append(kinds, tensor.Device)
		}
		for _, mem := range kinds {
			t.Run(name+"/"+mem.String(), func(t *testing.T) {
				m, _ := testutil.Manager(t, opts...)
				ctx := context.Background()
				h, err := tensor.New(m, tensor.Uint32, []int{n}, tensor.In(tensor.Host))
				require.NoError(t, err)
				defer h.Close()
				used := map[place]bool{}
				reused := 0
				for round := 0; round < 3; round++ {
					var xs []*tensor.Tensor
					for i := 0; i < 2; i++ {
						x, err := tensor.New(m, tensor.Uint32, []int{n}, tensor.In(mem))
						require.NoError(t, err)
						xs = append(xs, x)
						if used[placeOf(x)] {
							reused++
						}
						used[placeOf(x)] = true
						assert.Zero(t, nonZero(gpuRead(t, m, x, h)), "round %d tensor %d: a new tensor reads as zero", round, i)
					}
					s, err := sequence.New(m, 0)
					require.NoError(t, err)
					for _, x := range xs {
						s.Fill(x, uint32(0xdeadbeef))
					}
					require.NoError(t, s.Eval(ctx))
					require.NoError(t, s.Close())
					for _, x := range xs {
						require.NoError(t, x.Close())
					}
				}
				assert.NotZero(t, reused, "later rounds reuse earlier tensors' bytes")
				st := m.MemStats()
				t.Logf("zero fills %d (%d bytes), host clears %d", st.ZeroFills, st.ZeroFillBytes, st.HostClears)
				if staged {
					assert.NotZero(t, st.ZeroFills, "unmapped memory is zeroed by GPU fills")
					assert.Less(t, st.ZeroFills, 7, "fills batch per block, not per tensor")
				} else {
					assert.NotZero(t, st.HostClears)
				}
			})
		}
	}
}

// Goroutines creating, writing and closing tensors at once (GPU zeroing
// forced by StagedDeviceMemory) each see only zeros in a new tensor.
func TestNewTensorsAreZeroConcurrently(t *testing.T) {
	m, _ := testutil.Manager(t, vkflow.WithStagedDeviceMemory())
	const n, workers, iters = 256 << 10, 4, 25
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			ctx := context.Background()
			s, err := sequence.New(m, 0)
			if !assert.NoError(t, err) {
				return
			}
			defer s.Close()
			for i := 0; i < iters; i++ {
				x, err := tensor.New(m, tensor.Uint32, []int{n - 64*w - i}, tensor.In(tensor.Storage))
				if !assert.NoError(t, err) {
					return
				}
				hv, err := tensor.New(m, tensor.Uint32, x.Shape(), tensor.In(tensor.Host))
				if !assert.NoError(t, err) {
					return
				}
				assert.NoError(t, s.Clear())
				assert.NoError(t, s.Copy(x, hv).SyncLocal(hv).Fill(x, uint32(w+1)).Eval(ctx))
				got, err := hv.Uint32s()
				assert.NoError(t, err)
				assert.Zero(t, nonZero(got), "worker %d iteration %d", w, i)
				assert.NoError(t, s.Clear())
				assert.NoError(t, x.Close())
				assert.NoError(t, hv.Close())
			}
		}(w)
	}
	wg.Wait()
	st := m.MemStats()
	t.Logf("%+v", st)
	assert.Greater(t, st.ZeroFills, 1, "allocations landed on freed bytes")
}
