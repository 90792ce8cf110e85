package ops

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTrigConstants checks the generated constants against known values:
// 2/pi's first words (0xa2f9836e 0x4e441529 ...) and pi.
func TestTrigConstants(t *testing.T) {
	ws := twoOverPiWords()
	require.Equal(t, []uint32{0xa2f9836e, 0x4e441529, 0xfc2757d1, 0xf534ddc0}, ws[:4])
	hi, lo := split2(bigPi(), true)
	require.Equal(t, math.Pi, hi)
	require.InDelta(t, 1.2246467991473532e-16, lo, 1e-31)
	a, _ := bigAtan(bigPi().SetFloat64(0.5)).Float64()
	require.Equal(t, math.Atan(0.5), a)
}

