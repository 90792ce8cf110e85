//go:build soak

package graph_test

// The property test's size under make soak: thousands of graphs, each in
// every variant.
const (
	propGraphs           = 3000
	propMutations        = 1000 // graphs of the mutation score
	propVariantsPerGraph = 9
)
