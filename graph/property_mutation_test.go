package graph_test

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/algorithm"
	"github.com/vkflow/vkflow/graph"
	"github.com/vkflow/vkflow/internal/testutil"
)

// The property test's mutation score: random graphs compiled with one
// random inferred edge deleted (SetDropEdge). A deletion that leaves the
// schedule as it was (the edge was implied by others) cannot be seen and
// is not counted; of the others, the share the property test catches, by
// a SYNC-HAZARD report or by a value that differs from the CPU model, is
// logged and must be at least 40%. On lavapipe some deletions change the
// schedule yet stay safe or unseeable: a write-after-read range dropped
// from a barrier that still orders the same stages (its execution
// dependency is all the hazard needed), a wait dropped between logical
// queues that share the one physical queue (the queue's hazard tracking
// orders them), and a barrier dropped between two read-modify-write
// dispatches of one buffer, which the layer does not report and lavapipe
// runs in order anyway.
func TestGraphPropertyMutationScore(t *testing.T) {
	type mgr struct {
		pm *propMgr
		v  *testutil.Validation
	}
	open := func(compute int) mgr {
		m, v := testutil.Manager(t, vkflow.WithQueues(compute, false))
		v.Expect("SYNC-HAZARD")
		return mgr{&propMgr{m: m, compute: compute, algs: map[[2]int]*algorithm.Algorithm{}}, v}
	}
	ms := []mgr{open(1), open(2)}
	ctx := context.Background()
	var same, caughtSync, caughtValue, missed int
	for seed := uint64(1); seed <= propMutations; seed++ {
		s := genSpec(seed)
		for i, m := range ms {
			v := propVariant{name: "mutation", mgr: m.pm}
			r := func() *rand.Rand { return rand.New(rand.NewPCG(seed, uint64(i))) }
			if err := s.check(ctx, v, r()); err != nil {
				t.Fatalf("seed %d unmutated: %v", seed, err)
			}
			if len(m.v.Messages()) > 0 {
				t.Fatalf("seed %d unmutated draws %v\n%v", seed, m.v.Messages()[0].ID, s)
			}
			if len(s.edges) == 0 {
				continue
			}
			want := body(s.schedule)
			k := rand.New(rand.NewPCG(seed, 99)).IntN(len(s.edges))
			restore := graph.SetDropEdge(k)
			err := s.check(ctx, v, r())
			restore()
			msgs := len(m.v.Messages())
			switch {
			case body(s.schedule) == want:
				same++
			case msgs > 0:
				caughtSync++
			case err != nil:
				caughtValue++
			default:
				missed++
				if missed <= 5 { // the first few, in full
					t.Logf("seed %d, %d queues: deleting edge %d went unseen\ngraph:\n%v\nschedule:\n%s\nmutant:\n%s", seed, m.pm.compute, k, s, want, body(s.schedule))
				}
			}
			// A fresh Manager for the next graph: the layer's reports
			// must belong to one mutant.
			if msgs > 0 {
				ms[i] = open(m.pm.compute)
			}
		}
	}
	changed := caughtSync + caughtValue + missed
	t.Logf("%d mutants: %d left the schedule as it was; of the %d others, %d caught by SYNC-HAZARD, %d by values, %d missed",
		same+changed, same, changed, caughtSync, caughtValue, missed)
	assert.Greater(t, changed, 0)
	assert.GreaterOrEqual(t, float64(caughtSync+caughtValue), 0.4*float64(changed), "the property test misses most deleted edges")
}

// body is a schedule without its first line, which counts the edges.
func body(schedule string) string {
	_, b, _ := strings.Cut(schedule, "\n")
	return b
}
