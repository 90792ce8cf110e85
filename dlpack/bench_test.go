package dlpack

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/tensor"
)

// The DLPack benchmarks (make bench). Each one measures its baseline in
// the same loop, interleaved, and reports the ratio, because this machine
// is shared and noisy:
//
//	BenchmarkExport/<kind>/<size>  export + deleter of a <size> tensor;
//	                               x_1KiB is its time over a 1 KiB export of
//	                               the same kind (about 1 for O(1) exports)
//	BenchmarkImport/<size>         zero-copy import + Close (ns/zero_copy)
//	                               against a copying import + Close of the
//	                               same data (ns/copy); copy_x is their ratio
//
// No validation layer: benchmarks measure vkflow, not the layer.

var benchSizes = []int{1 << 10, 64 << 10, 1 << 20, 16 << 20, 64 << 20}

func sizeName(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%dMiB", n>>20)
	case n >= 1<<10:
		return fmt.Sprintf("%dKiB", n>>10)
	}
	return fmt.Sprintf("%dB", n)
}

// benchManager opens a Manager without the validation layer: benchmarks
// measure vkflow, and the layer would dominate the timings. The tests cover
// the same calls under validation.
func benchManager(b *testing.B) *vkflow.Manager {
	m, err := vkflow.New(vkflow.WithLogger(testutil.Quiet))
	require.NoError(b, err)
	b.Cleanup(func() { m.Close() })
	return m
}

func BenchmarkExport(b *testing.B) {
	m := benchManager(b)
	vulkan := &Device{Vulkan, int32(m.Device().Index)}
	kinds := []struct {
		name string
		opts Options
	}{
		{"cpu", Options{}},
		{"vulkan", Options{Device: vulkan}},
		{"cpu_copy", Options{Copy: CopyAlways}},
	}
	small, err := tensor.New(m, tensor.Float32, []int{256})
	require.NoError(b, err)
	for _, size := range benchSizes {
		t, err := tensor.New(m, tensor.Float32, []int{size / 4})
		require.NoError(b, err)
		for _, k := range kinds {
			b.Run(k.name+"/"+sizeName(size), func(b *testing.B) {
				var base, big time.Duration
				for i := 0; i < b.N; i++ {
					start := time.Now()
					mt, err := Export(ctx, small, k.opts)
					if err != nil {
						b.Fatal(err)
					}
					mt.Delete()
					mid := time.Now()
					mt, err = Export(ctx, t, k.opts)
					if err != nil {
						b.Fatal(err)
					}
					mt.Delete()
					base += mid.Sub(start)
					big += time.Since(mid)
				}
				b.ReportMetric(float64(big.Nanoseconds())/float64(b.N), "ns/export")
				b.ReportMetric(float64(big)/float64(base), "x_1KiB")
			})
		}
		t.Close()
	}
}

func BenchmarkImport(b *testing.B) {
	m := benchManager(b)
	for _, size := range benchSizes {
		data := make([]byte, size)
		zero, _ := foreign{dev: Device{CPU, 0}, dt: DataType{2, 32, 1}, ndim: 1, shape: []int64{int64(size / 4)}, data: data}.build()
		// 4 bytes past a page boundary: no host import, so Import copies.
		cp, _ := foreign{dev: Device{CPU, 0}, dt: DataType{2, 32, 1}, ndim: 1, shape: []int64{int64(size / 4)}, data: data, dataOffset: 4}.build()
		keep(zero)
		keep(cp)
		b.Run(sizeName(size), func(b *testing.B) {
			var zc, copied time.Duration
			for i := 0; i < b.N; i++ {
				start := time.Now()
				t, c, err := Import(ctx, m, zero)
				if err != nil || c {
					b.Fatal("zero-copy import failed", err)
				}
				t.Close()
				mid := time.Now()
				t, c, err = Import(ctx, m, cp)
				if err != nil || !c {
					b.Fatal("copy import failed", err)
				}
				t.Close()
				zc += mid.Sub(start)
				copied += time.Since(mid)
			}
			b.ReportMetric(float64(zc.Nanoseconds())/float64(b.N), "ns/zero_copy")
			b.ReportMetric(float64(copied.Nanoseconds())/float64(b.N), "ns/copy")
			b.ReportMetric(float64(copied)/float64(zc), "copy_x")
		})
		freeForeign(zero)
		freeForeign(cp)
	}
}
