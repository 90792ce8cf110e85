package dlpack

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/tensor"
)

// 0-d arrays keep shape () through import and export, in both directions.
func TestScalarShape(t *testing.T) {
	m, _ := testutil.Manager(t)
	f32 := DataType{2, 32, 1}
	for _, versioned := range []bool{false, true} {
		mt, _ := foreign{versioned: versioned, major: 1, dev: Device{CPU, 0}, dt: f32, ndim: 0, data: f32bytes(7)}.build()
		x, _, err := Import(ctx, m, mt)
		require.NoError(t, err)
		assert.Equal(t, []int{}, x.Shape(), "imported 0-d array")
		got, err := x.Float32s()
		require.NoError(t, err)
		assert.Equal(t, []float32{7}, got)
		require.NoError(t, x.Close())
	}

	src, err := tensor.New(m, tensor.Float32, []int{})
	require.NoError(t, err)
	defer src.Close()
	require.NoError(t, tensor.Write(src, []float32{3}))
	for _, dev := range []Device{{CPU, 0}, {Vulkan, int32(m.Device().Index)}} {
		for _, v := range []*Version{nil, {1, 3}} {
			out, err := Export(ctx, src, Options{Device: &dev, MaxVersion: v})
			require.NoError(t, err, "%v", dev)
			in := out.Describe()
			assert.Empty(t, in.Shape, "exported ndim")
			assert.Equal(t, int32(0), int32(out.dl().ndim))
			back, _, err := Import(ctx, m, out)
			require.NoError(t, err)
			assert.Equal(t, []int{}, back.Shape(), "%v round trip", dev)
			got, err := back.Float32s()
			require.NoError(t, err)
			assert.Equal(t, []float32{3}, got)
			require.NoError(t, back.Close())
		}
	}
}
