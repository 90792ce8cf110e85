package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/internal/testutil"
)

// TestDAG runs the example under validation (any message fails the test),
// checks c against the CPU, and checks that the schedule uses both queues
// with one GPU wait between them, for C.
func TestDAG(t *testing.T) {
	m, _ := testutil.Manager(t, vkflow.WithQueues(2, false))
	xs := []float32{1, 2, 3, 4, 5, 6, 7, 8, -1.5, 0, 1e3}
	c, schedule, err := dag(m, xs)
	require.NoError(t, err)
	require.NoError(t, check(xs, c))
	t.Log(schedule)
	require.Contains(t, schedule, "on queues [0 1]")
	require.Equal(t, 1, strings.Count(schedule, "waits queue"), "C waits for the job on the other queue, once")
}
