//go:build soak

package vkflow_test

// closeOrderRounds is the closing-order property test's full size (make
// soak).
const closeOrderRounds = 1000
