//go:build !soak

package graph_test

// The property test's size in the ordinary suite; make soak builds with
// -tags soak for the full size (property_soak_test.go).
const (
	propGraphs           = 60
	propMutations        = 20 // graphs of the mutation score
	propVariantsPerGraph = 4
)
