package dlpack

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow/internal/testutil"
)

// Empty arrays (a zero-length dimension) import as empty tensors, whatever
// their data pointer (NULL included), and export back with their shape.
func TestImportExportEmpty(t *testing.T) {
	m, _ := testutil.Manager(t)
	for _, f := range []foreign{
		{dev: Device{CPU, 0}, dt: DataType{2, 32, 1}, ndim: 1, shape: []int64{0}, nullData: true},
		{dev: Device{CPU, 0}, dt: DataType{2, 32, 1}, ndim: 2, shape: []int64{3, 0}, data: f32bytes(1)},
		{dev: Device{CPU, 0}, dt: DataType{0, 8, 1}, ndim: 3, shape: []int64{0, 1 << 40, 2}, nullData: true},
	} {
		mt, _ := f.build()
		before := foreignDeletes()
		ten, _, err := Import(ctx, m, mt)
		require.NoError(t, err, "shape %v", f.shape)
		assert.Equal(t, before+1, foreignDeletes(), "the producer's memory is released at once")
		assert.Equal(t, 0, ten.Len())
		want := make([]int, len(f.shape))
		for i, s := range f.shape {
			want[i] = int(s)
		}
		assert.Equal(t, want, ten.Shape())

		ex, err := Export(ctx, ten, Options{})
		require.NoError(t, err)
		info := ex.Describe()
		assert.Equal(t, len(want), len(info.Shape))
		ex.Delete()
		require.NoError(t, ten.Close())
	}
}
