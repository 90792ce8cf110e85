package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/internal/testutil"
)

// TestDAG runs the example under validation (any message fails the test) and
// checks c against the CPU.
func TestDAG(t *testing.T) {
	m, _ := testutil.Manager(t, vkflow.WithQueues(2, false))
	xs := []float32{1, 2, 3, 4, 5, 6, 7, 8, -1.5, 0, 1e3}
	c, err := dag(m, xs)
	require.NoError(t, err)
	require.NoError(t, check(xs, c))
}
