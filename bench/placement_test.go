package bench

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/graph"
	"github.com/vkflow/vkflow/internal/testutil"
)

// TestPlacementReport prints, for bench/placement.sh (make bench), the
// device's costs as placement by cost sees them and the decision on the
// benchmark graphs wide8 and diamond8 on two logical queues at their
// benchmark sizes: the schedule's placement line and its submits. It runs
// only with VKFLOW_PLACEMENT_REPORT=1 (it measures the costs, or reads the
// cache, on the default device).
func TestPlacementReport(t *testing.T) {
	if os.Getenv("VKFLOW_PLACEMENT_REPORT") != "1" {
		t.Skip("VKFLOW_PLACEMENT_REPORT=1 runs it (bench/placement.sh)")
	}
	m, _ := testutil.Manager(t, vkflow.WithQueues(2, false))
	d := m.Runtime()
	fmt.Printf("device: %s, %d physical queue(s) for 2 logical\n", m.Device().Name, d.PhysicalQueues())
	c, err := d.Costs(context.Background())
	require.NoError(t, err)
	fmt.Printf("costs: %v\n", c)
	we, err := newWideEnv(m, wideN)
	require.NoError(t, err)
	de, err := newDiamondEnv(m, diamondN)
	require.NoError(t, err)
	for _, w := range []struct {
		name  string
		graph func() (*graph.Graph, error)
	}{
		{"wide8", func() (*graph.Graph, error) { return wideGraph(m, we) }},
		{"diamond8", func() (*graph.Graph, error) { return diamondGraph(m, de) }},
	} {
		g, err := w.graph()
		require.NoError(t, err)
		for _, p := range []graph.Placement{graph.PlaceByCost, graph.PlaceSpread} {
			e, err := g.Compile(graph.Queues(0, 1), graph.Place(p))
			require.NoError(t, err)
			lines := strings.SplitN(e.String(), "\n", 3)
			fmt.Printf("%s, %v: %s\n  %s\n", w.name, p, strings.TrimPrefix(lines[0], "graph: "), lines[1])
			require.NoError(t, e.Close())
		}
	}
}
