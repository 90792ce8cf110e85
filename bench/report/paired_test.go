package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The kernel goal pairs C and vkflow round by round: a round where the
// machine was busy for one side only (round 2: vkflow 1.25x) does not
// decide it, as it would the ratio of the medians over all runs.
func TestPairedByRound(t *testing.T) {
	raw := `round: 1
BenchmarkC/mul16m_kernel_vec4-2	5	38100000 ns/op
BenchmarkGo/mul16m_kernel_vec4-2	5	38000000 ns/op
BenchmarkGo/mul16m_kernel_vec4-2	5	38300000 ns/op
round: 2
BenchmarkC/mul16m_kernel_vec4-2	5	23800000 ns/op
BenchmarkGo/mul16m_kernel_vec4-2	5	29800000 ns/op
BenchmarkGo/mul16m_kernel_vec4-2	5	29700000 ns/op
round: 3
BenchmarkC/mul16m_kernel_vec4-2	5	23700000 ns/op
BenchmarkGo/mul16m_kernel_vec4-2	5	24000000 ns/op
BenchmarkGo/mul16m_kernel_vec4-2	5	23900000 ns/op
`
	res, err := parse(strings.NewReader(raw))
	require.NoError(t, err)
	p, ok := res.pairedRatio("mul16m_kernel_vec4")
	require.True(t, ok)
	require.Len(t, p.ratios, 3)
	assert.InDelta(t, 23950000.0/23700000, p.med, 1e-9, "the median round's ratio")
	assert.InDelta(t, 29750000.0/23800000, p.max, 1e-9)
	var b strings.Builder
	renderKernelGoal(&b, res)
	assert.Contains(t, b.String(), "1.011 over 3 rounds (1.001–1.250) — **MET**")
	var all strings.Builder
	render(&all, res, meta{})
	assert.Contains(t, all.String(), "| mul16m_kernel_vec4 | 3 | 1.011 | 1.001–1.250 |")
	assert.Contains(t, all.String(), "| mul16m_kernel_vec4 | 23,800,000 | 29,750,000 | 1.25 |", "the unpaired medians")

	// Unpaired, the medians over all runs give 1.25 (checked above).
	// Without round markers there is no paired figure, and the goal says so.
	res, err = parse(strings.NewReader(strings.NewReplacer("round: 1\n", "", "round: 2\n", "", "round: 3\n", "").Replace(raw)))
	require.NoError(t, err)
	_, ok = res.pairedRatio("mul16m_kernel_vec4")
	assert.False(t, ok)
	b.Reset()
	renderKernelGoal(&b, res)
	assert.Contains(t, b.String(), "**NOT MEASURED**")
}
