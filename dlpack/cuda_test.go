package dlpack_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/cuda"
	"github.com/vkflow/vkflow/dlpack"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/tensor"
	"github.com/vkflow/vkflow/timeline"
)

// A kDLCUDA export needs libcuda and a CUDA device that is this Vulkan
// device; without them it is ErrUnsupported saying why, and nothing is
// held (no live export, no reference left on the tensor). Bad requests are
// refused before the driver is asked. The zero-copy path itself runs only
// on a GPU (docs/INTEROP.md).
func TestExportCUDAUnsupported(t *testing.T) {
	m, _ := testutil.Manager(t)
	x, err := tensor.New(m, tensor.Float32, []int{16}, tensor.Exportable())
	require.NoError(t, err)
	tl, err := timeline.New(m, 0)
	require.NoError(t, err)
	_, cudaErr := cuda.Open()
	cases := []struct {
		name string
		opts dlpack.Options
		is   error
	}{
		{"no CUDA here", dlpack.Options{Device: &dlpack.Device{Type: dlpack.CUDA, ID: 0}, Stream: 1}, vkflow.ErrUnsupported},
		{"consumer timeline", dlpack.Options{Device: &dlpack.Device{Type: dlpack.CUDA}, Consumer: timeline.Point{Timeline: tl, Value: 1}}, vkflow.ErrInvalid},
		{"bad copy mode", dlpack.Options{Device: &dlpack.Device{Type: dlpack.CUDA}, Copy: 7}, vkflow.ErrInvalid},
		{"stream below -1", dlpack.Options{Device: &dlpack.Device{Type: dlpack.CUDA}, Stream: -2}, vkflow.ErrInvalid},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.is == vkflow.ErrUnsupported && cudaErr == nil {
				t.Skip("libcuda is present: the real path is exercised on the GPU pass")
			}
			before := dlpack.Live()
			_, err := dlpack.Export(context.Background(), x, c.opts)
			require.ErrorIs(t, err, c.is)
			assert.Contains(t, err.Error(), "dlpack: Export")
			assert.Equal(t, before, dlpack.Live())
		})
	}
	require.NoError(t, x.Close())
	assert.True(t, x.Closed())
}
