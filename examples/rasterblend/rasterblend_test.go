package main

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/examples/internal/scene"
	"github.com/vkflow/vkflow/graph"
	"github.com/vkflow/vkflow/internal/testutil"
)

// TestRender renders a small scene under validation (any message fails the
// test) and checks it against the CPU reference: one graph with a ring of 1,
// 2 and 3 (the pass count not a multiple of K), and serialized execution,
// each rendered twice, since the second run replays what the first left
// behind (the ring's frames and batch indices, the image).
func TestRender(t *testing.T) {
	m, _ := testutil.Manager(t, vkflow.WithQueues(2, false))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p := scene.Params{Size: 64, Tris: 16, Passes: 8}
	require.NoError(t, p.Validate())
	geo := scene.Geometry(p)
	want := scene.Reference(p, geo)

	for _, tt := range []struct {
		name string
		new  func() (renderer, error)
	}{
		{"graph K=1", func() (renderer, error) { return newRenderer(m, p, geo, 1) }},
		{"graph K=2", func() (renderer, error) { return newRenderer(m, p, geo, 2) }},
		{"graph K=3", func() (renderer, error) { return newRenderer(m, p, geo, 3) }},
		{"serialized", func() (renderer, error) { return newSerialized(m, p, geo) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, err := tt.new()
			require.NoError(t, err)
			defer func() { require.NoError(t, r.close()) }()
			require.Empty(t, warnings(r), "every tensor read is written first or declared")
			for run := range 2 {
				got, err := r.render(ctx)
				require.NoError(t, err)
				require.Less(t, scene.MaxDiff(got, want), scene.Tolerance, "run %d", run)
			}
		})
	}
}

// TestLookahead reads the schedule Compile derived and checks that it is the
// one examples/rasterblend-timeline picks by hand: blend i waits for raster
// i on the other queue, and raster i waits for blend i-K, no earlier and no
// later (the rasterizer runs exactly up to K passes ahead), and for no blend
// before pass K.
func TestLookahead(t *testing.T) {
	m, _ := testutil.Manager(t, vkflow.WithQueues(2, false))
	p := scene.Params{Size: 16, Tris: 1, Passes: 8}
	geo := scene.Geometry(p)
	for _, k := range []int{1, 2, 3} {
		t.Run(fmt.Sprintf("K=%d", k), func(t *testing.T) {
			r, err := newRenderer(m, p, geo, k)
			require.NoError(t, err)
			defer func() { require.NoError(t, r.close()) }()
			require.Empty(t, r.exec.Warnings())
			s := r.exec.String()
			t.Log(s)
			at, waits := parseSchedule(t, s)
			for i := range p.Passes {
				raster, blend := fmt.Sprintf("raster %d", i), fmt.Sprintf("blend %d", i)
				require.Equal(t, rasterQueue, at[raster].q, raster)
				require.Equal(t, blendQueue, at[blend].q, blend)
				require.Contains(t, waits[blend], at[raster], "%s waits for %s", blend, raster)
				var onBlends []point
				for _, w := range waits[raster] {
					if w.q == blendQueue {
						onBlends = append(onBlends, w)
					}
				}
				if i < k {
					require.Empty(t, onBlends, "%s waits for no blend", raster)
					continue
				}
				require.Equal(t, []point{at[fmt.Sprintf("blend %d", i-k)]}, onBlends, "%s waits for blend %d", raster, i-k)
			}
		})
	}
}

// point is a submit: queue and number on it, as Exec.String prints them.
type point struct{ q, k int }

var (
	submitLine = regexp.MustCompile(`^submit \d+: queue (\d+) #(\d+)(.*)$`)
	waitPart   = regexp.MustCompile(`waits queue (\d+) #(\d+)`)
	nodePart   = regexp.MustCompile(`^\d+ (.+)$`)
)

// parseSchedule returns the submit of every named node and the waits of the
// submit of every named node.
func parseSchedule(t *testing.T, s string) (at map[string]point, waits map[string][]point) {
	at, waits = map[string]point{}, map[string][]point{}
	atoi := func(s string) int {
		v, err := strconv.Atoi(s)
		require.NoError(t, err)
		return v
	}
	var cur point
	var curWaits []point
	for _, line := range strings.Split(s, "\n") {
		if m := submitLine.FindStringSubmatch(line); m != nil {
			cur, curWaits = point{atoi(m[1]), atoi(m[2])}, nil
			for _, w := range waitPart.FindAllStringSubmatch(m[3], -1) {
				curWaits = append(curWaits, point{atoi(w[1]), atoi(w[2])})
			}
			continue
		}
		if !strings.HasPrefix(line, "  ") || strings.HasPrefix(line, "  barrier") {
			continue
		}
		for _, n := range strings.Split(strings.TrimSpace(line), ", ") {
			m := nodePart.FindStringSubmatch(n)
			require.NotNil(t, m, "node %q", n)
			at[m[1]], waits[m[1]] = cur, curWaits
		}
	}
	return at, waits
}

// warnings returns the Compile warnings of r's graphs.
func warnings(r renderer) []string {
	switch r := r.(type) {
	case *graphRenderer:
		return r.exec.Warnings()
	case *serialized:
		var w []string
		for _, e := range []*graph.Exec{r.clear, r.raster, r.blend, r.read} {
			w = append(w, e.Warnings()...)
		}
		return w
	}
	return []string{fmt.Sprintf("unknown renderer %T", r)}
}
