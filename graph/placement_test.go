package graph

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/internal/kernels"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/tensor"
	"github.com/vkflow/vkflow/vk"
)

// diamondGraph records s = x + x, then two branches b0 = s + x and
// b1 = s + s of n invocations each, and the join d = b0 + b1.
func diamondGraph(t *testing.T, m *vkflow.Manager, n int) *Graph {
	t.Helper()
	ts := make([]*tensor.Tensor, 5) // x, s, b0, b1, d
	for i := range ts {
		var err error
		ts[i], err = tensor.New(m, tensor.Float32, []int{n})
		require.NoError(t, err)
	}
	x, s, b0, b1, d := ts[0], ts[1], ts[2], ts[3], ts[4]
	g, err := New(m)
	require.NoError(t, err)
	g.Input(x)
	for _, k := range [][3]*tensor.Tensor{{x, x, s}, {s, x, b0}, {s, s, b1}, {b0, b1, d}} {
		a, err := kernels.Add(m, k[0], k[1], k[2])
		require.NoError(t, err)
		g.Dispatch(a)
	}
	return g
}

// planOn compiles g's plan as if its logical queues 0 and 1 ran on the
// physical queues given (lavapipe has one; the decision is tested on any
// device this way).
func planOn(t *testing.T, g *Graph, phys [2]int, opts ...Option) *plan {
	t.Helper()
	o := options{queues: []int{0, 1}, maxNodes: DefaultMaxNodesPerSubmit, maxWork: DefaultMaxWorkPerSubmit}
	for _, f := range opts {
		require.NoError(t, f(&o))
	}
	infos := []core.QueueInfo{{Logical: 0, Physical: phys[0]}, {Logical: 1, Physical: phys[1], Index: uint32(phys[1])}}
	accs := make([][]access, len(g.nodes))
	for i := range g.nodes {
		accs[i] = accessesOf(&g.nodes[i])
	}
	p, err := compilePlan(g.nodes, accs, infos, o, map[vk.Buffer]bool{})
	require.NoError(t, err)
	return p
}

// The figures of the H200 pass of 2026-11-26 (a hand-off between physical
// queues 180 µs, 17 µs on one; HBM fills at about 2 TB/s) and of a slow
// GPU where the same branches take milliseconds.
var (
	h200Costs = Costs{SubmitNs: 17e3, HandoffNs: 180e3, ByteNs: 0.0005}
	slowCosts = Costs{SubmitNs: 17e3, HandoffNs: 180e3, ByteNs: 10}
)

// Placement by cost puts the diamond's branches on two physical queues
// only where their work exceeds the hand-off; logical queues on one
// physical queue never split; the options force either way.
func TestPlacementDecisions(t *testing.T) {
	m, _ := testutil.Manager(t, vkflow.WithQueues(2, false))
	g := diamondGraph(t, m, 1<<16)
	for _, tc := range []struct {
		name   string
		phys   [2]int
		opts   []Option
		spread bool
	}{
		{"H200 costs: 16,384 vec4 invocations do not pay a 180 µs hand-off", [2]int{0, 1}, []Option{WithCosts(h200Costs)}, false},
		{"slow GPU: milliseconds of work a branch do", [2]int{0, 1}, []Option{WithCosts(slowCosts)}, true},
		{"one physical queue: never, whatever the costs", [2]int{0, 0}, []Option{WithCosts(slowCosts)}, false},
		{"one physical queue, no costs needed", [2]int{0, 0}, nil, false},
		{"PlaceSpread forces two queues", [2]int{0, 1}, []Option{Place(PlaceSpread), WithCosts(h200Costs)}, true},
		{"PlaceSpread on one physical queue too", [2]int{0, 0}, []Option{Place(PlaceSpread)}, true},
		{"PlaceOneQueue forces one", [2]int{0, 1}, []Option{Place(PlaceOneQueue), WithCosts(slowCosts)}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := planOn(t, g, tc.phys, tc.opts...)
			assert.Equal(t, tc.spread, p.slotOf[1] != p.slotOf[2], "branches on different queues; slots %v", p.slotOf)
			if !tc.spread {
				assert.Len(t, p.segs, 1, "one command buffer")
			}
		})
	}
}

// The schedule and DOT show the decision, the costs and the estimates.
func TestPlacementShown(t *testing.T) {
	m, _ := testutil.Manager(t, vkflow.WithQueues(2, false))
	g := diamondGraph(t, m, 1<<16)
	e, err := g.Compile(WithCosts(slowCosts))
	require.NoError(t, err)
	defer e.Close()
	line := strings.Split(e.String(), "\n")[1]
	assert.Contains(t, line, "placement: by cost, hand-off 17µs on one queue, 180µs between queues, 40 ns per invocation (injected)")
	assert.Contains(t, line, "estimated work: queue 0 ")
	dot := e.DOT()
	assert.Contains(t, dot, `label="placement: by cost`)
	assert.Contains(t, dot, `n1 [label="1 dispatch\nest. 819µs"]`, "16,384 vec4 invocations and a node's 4,096 at 40 ns")

	spread, err := g.Compile(Place(PlaceSpread))
	require.NoError(t, err)
	defer spread.Close()
	assert.Contains(t, spread.String(), "placement: spread; estimated work: queue 0 ")
}

func TestPlacementOptions(t *testing.T) {
	m, _ := testutil.Manager(t, vkflow.WithQueues(2, false))
	g := diamondGraph(t, m, 64)
	for _, opt := range []Option{Place(Placement(7)), WithCosts(Costs{SubmitNs: 1}), WithCosts(Costs{ByteNs: 1, HandoffNs: -1})} {
		_, err := g.Compile(opt)
		assert.ErrorIs(t, err, vkflow.ErrInvalid)
	}
	// On lavapipe's one physical queue the default needs no measurement:
	// two logical queues make one command buffer.
	e, err := g.Compile()
	require.NoError(t, err)
	defer e.Close()
	assert.Len(t, e.plan.segs, 1)
}
