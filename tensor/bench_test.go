package tensor_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/tensor"
)

// BenchmarkNewCloseZeroed measures New+Close of Storage tensors with the
// GPU zero fill (StagedDeviceMemory forces it on lavapipe, as on a discrete
// GPU), against the same loop with the fill switched off in the same run,
// and reports the ratio. Fills are batched: one submit zeroes every dirty
// range of a block once the allocator runs out of clean bytes.
func BenchmarkNewCloseZeroed(b *testing.B) {
	for _, size := range []int{1 << 10, 64 << 10, 1 << 20} {
		b.Run(fmt.Sprintf("%dKiB", size*4>>10), func(b *testing.B) {
			m, err := vkflow.New(vkflow.WithValidation(false), vkflow.WithStagedDeviceMemory())
			if err != nil {
				b.Fatal(err)
			}
			defer m.Close()
			loop := func(n int) time.Duration {
				start := time.Now()
				for i := 0; i < n; i++ {
					x, err := tensor.New(m, tensor.Float32, []int{size}, tensor.In(tensor.Storage))
					if err != nil {
						b.Fatal(err)
					}
					x.Close()
				}
				return time.Since(start)
			}
			d := m.Runtime()
			d.SetGPUZeroing(true)
			loop(b.N) // warm: blocks exist
			before := m.MemStats()
			b.ResetTimer()
			zeroed := loop(b.N)
			b.StopTimer()
			after := m.MemStats()
			d.SetGPUZeroing(false)
			base := loop(b.N)
			d.SetGPUZeroing(true)
			n := float64(b.N)
			b.ReportMetric(float64(zeroed.Nanoseconds())/n, "ns/zeroed")
			b.ReportMetric(float64(base.Nanoseconds())/n, "ns/unzeroed")
			b.ReportMetric(float64(zeroed)/float64(base), "ratio")
			b.ReportMetric(float64(after.ZeroFills-before.ZeroFills)/n, "fills/tensor")
		})
	}
}
