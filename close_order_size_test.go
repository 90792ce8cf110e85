//go:build !soak

package vkflow_test

// closeOrderRounds is the closing-order property test's size in the
// ordinary suite; make soak builds with -tags soak for the full size.
const closeOrderRounds = 50
