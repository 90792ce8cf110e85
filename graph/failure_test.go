package graph_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/graph"
	"github.com/vkflow/vkflow/kernels"
	"github.com/vkflow/vkflow/timeline"
)

// A run that waits on a failed point fails, down to its Signal points,
// at once (package timeline, Failures); the Exec stays usable: the next
// run that does not depend on the failure runs and computes the right
// values, on one queue and on two.
func TestRunFailsAndExecRecovers(t *testing.T) {
	for _, queues := range []int{1, 2} {
		t.Run(map[int]string{1: "one queue", 2: "two queues"}[queues], func(t *testing.T) {
			const n = 1024
			m, x, y, xv := newFixture(t, n, vkflow.WithQueues(queues, false))
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			add, err := kernels.Add(m, y, x, y) // y = y + x
			require.NoError(t, err)
			g, err := graph.New(m)
			require.NoError(t, err)
			for i := range 4 {
				g.Dispatch(add).OnQueue(i % queues)
			}
			e, err := g.Compile(graph.MaxNodesPerSubmit(1))
			require.NoError(t, err)
			require.NoError(t, e.Run(ctx)) // y = 4x

			gate, err := timeline.New(m, 0)
			require.NoError(t, err)
			done, err := timeline.New(m, 0)
			require.NoError(t, err)
			p := e.RunAsync(graph.Wait(gate, 1), graph.Signal(done, 1))
			start := time.Now()
			require.NoError(t, gate.Close()) // 1 can never be signalled now
			err = p.Wait(ctx)
			require.ErrorIs(t, err, vkflow.ErrFailed)
			require.ErrorIs(t, err, vkflow.ErrClosed)
			assert.ErrorIs(t, done.Wait(ctx, 1), vkflow.ErrFailed)
			assert.Less(t, time.Since(start), 5*time.Second)

			require.NoError(t, e.Run(ctx), "the Exec recovers from a failed run")
			require.NoError(t, e.Run(ctx))
			yv, err := y.Float32s()
			require.NoError(t, err)
			assert.Equal(t, 12*xv[5], yv[5], "three good runs of four adds; the failed one added nothing")
			assert.Empty(t, m.Runtime().Held())
		})
	}
}
