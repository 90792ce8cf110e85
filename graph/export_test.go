package graph

// SetDropEdge makes Compile delete inferred edge k (-1: none), for the
// mutation check that a missing edge draws a synchronization hazard. It
// returns a function that restores the previous setting. Tests that use it
// must not run in parallel with other Compiles.
func SetDropEdge(k int) (restore func()) {
	old := dropEdge
	dropEdge = k
	return func() { dropEdge = old }
}

// Edges lists the edges of e's plan as (from, to) node pairs, inferred
// edges first in the order SetDropEdge counts them, then After edges.
func Edges(e *Exec) [][2]int {
	var out [][2]int
	for _, ed := range e.plan.edges {
		out = append(out, [2]int{ed.from, ed.to})
	}
	return out
}
