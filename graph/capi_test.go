package graph_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow/graph"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/tensor"
)

// A read of a tensor that no node writes and Input did not declare draws
// one warning, whether the tensor is read once or twice (found through
// the C API's warnings text: a single read drew none).
func TestWarnsUnwrittenRead(t *testing.T) {
	m, _ := testutil.Manager(t)
	for _, reads := range []int{1, 2} {
		x, err := tensor.New(m, tensor.Float32, []int{64})
		require.NoError(t, err)
		ys := make([]*tensor.Tensor, reads)
		g, err := graph.New(m)
		require.NoError(t, err)
		for i := range ys {
			ys[i], err = tensor.New(m, tensor.Float32, []int{64})
			require.NoError(t, err)
			g.Copy(x, ys[i])
		}
		e, err := g.Compile()
		require.NoError(t, err)
		assert.Len(t, e.Warnings(), 1, "%d reads: %q", reads, e.Warnings())
		if w := e.Warnings(); len(w) == 1 {
			assert.Contains(t, w[0], "node 0 copy", "the first read is named")
		}
		require.NoError(t, e.Close())
	}
}
