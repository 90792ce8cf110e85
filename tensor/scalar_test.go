package tensor_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/tensor"
)

// A 0-d tensor (shape []) is a scalar with one element, as in NumPy and
// DLPack; it keeps its empty shape.
func TestScalar(t *testing.T) {
	for _, opts := range [][]vkflow.Option{nil, {vkflow.WithStagedDeviceMemory()}} {
		m, _ := testutil.Manager(t, opts...)
		for _, mem := range []tensor.Memory{tensor.Device, tensor.Host, tensor.Storage} {
			for _, shape := range [][]int{{}, nil} {
				x, err := tensor.New(m, tensor.Float64, shape, tensor.In(mem))
				require.NoError(t, err, "%v %v", mem, shape)
				assert.Equal(t, []int{}, x.Shape())
				assert.Equal(t, 1, x.Len())
				assert.Equal(t, uint64(8), x.Bytes())
				if mem != tensor.Storage {
					require.NoError(t, tensor.Write(x, []float64{2.5}))
					got, err := x.Float64s()
					require.NoError(t, err)
					assert.Equal(t, []float64{2.5}, got)
				}
				require.NoError(t, x.Close())
			}
		}
	}
}
