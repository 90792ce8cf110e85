package graph

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/internal/kernels"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/tensor"
)

// A segment that another queue waits for ends with the producer the
// waiter needs (package doc: "the producer's ends with the producer"), so
// the consumer does not also wait for nodes recorded after the producer:
// the last node of every segment waited for is an ancestor of the first
// node of the waiting segment (the node that needed the wait). Diamond
// s -> (b0, b1) -> d with enough work per node that the branches go to two
// queues: s and b0 on one, b1 on the other; b1 must not wait for b0, or the
// branches run one after the other.
//
// Fails on the plan of 2026-11-23 (b1 waits for s and b0); the fix in the
// h-bench report ends a segment after any node that a node of another
// queue depends on. Remove the Skip with that fix.
func TestBenchPlanWaitEndsAtProducer(t *testing.T) {
	m, _ := testutil.Manager(t, vkflow.WithQueues(2, false))
	const n = 256 << 10
	ts := make([]*tensor.Tensor, 4) // x, s, b0, b1
	for i := range ts {
		var err error
		ts[i], err = tensor.New(m, tensor.Float32, []int{n})
		require.NoError(t, err)
	}
	x, s, b0, b1 := ts[0], ts[1], ts[2], ts[3]
	d, err := tensor.New(m, tensor.Float32, []int{n})
	require.NoError(t, err)
	src, err := kernels.Add(m, x, x, s)
	require.NoError(t, err)
	br0, err := kernels.Add(m, s, x, b0)
	require.NoError(t, err)
	br1, err := kernels.Add(m, s, s, b1)
	require.NoError(t, err)
	join, err := kernels.Add(m, b0, b1, d)
	require.NoError(t, err)
	g, err := New(m)
	require.NoError(t, err)
	g.Input(x)
	g.Dispatch(src).Named("s")
	g.Dispatch(br0).Named("b0")
	g.Dispatch(br1).Named("b1")
	g.Dispatch(join).Named("d")
	e, err := g.Compile(Place(PlaceSpread))
	require.NoError(t, err)
	defer e.Close()
	t.Log(e.String())
	p := e.plan
	require.NotEqual(t, p.slotOf[1], p.slotOf[2], "the branches should be on two queues")
	// ancestors[i][j]: node j precedes node i (edges go forward in the
	// topological order).
	ancestors := make([]map[int]bool, len(e.nodes))
	for _, i := range p.order {
		ancestors[i] = map[int]bool{}
		for _, ed := range p.edges {
			if ed.to == i {
				ancestors[i][ed.from] = true
				for a := range ancestors[ed.from] {
					ancestors[i][a] = true
				}
			}
		}
	}
	for _, seg := range p.segs {
		first := seg.nodes[0]
		for _, w := range seg.waits {
			from := p.segs[p.bySlot[w.q][w.k]]
			last := from.nodes[len(from.nodes)-1]
			require.Truef(t, ancestors[first][last], "submit %d (first node %s) waits for submit %d, whose last node %s it does not need:\n%s",
				seg.id, e.nodes[first].label(first), from.id, e.nodes[last].label(last), e.String())
		}
	}
}
