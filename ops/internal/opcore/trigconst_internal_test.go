package opcore

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

// TestTrigRefSane checks the tests' 200-bit reference against Go's math
// where that is accurate.
func TestTrigRefSane(t *testing.T) {
	for _, x := range []float64{0.1, 1, 2.5, -3, 100, 1e6, 1e22} {
		require.InDelta(t, math.Sin(x), trigRef("sin", x, 0), 3e-16, "sin %v", x)
		require.InDelta(t, math.Cos(x), trigRef("cos", x, 0), 3e-16, "cos %v", x)
		require.InEpsilon(t, math.Tan(x), trigRef("tan", x, 0), 5e-16, "tan %v", x)
		require.InEpsilon(t, math.Atan(x), trigRef("atan", x, 0), 3e-16, "atan %v", x)
		require.InEpsilon(t, math.Atan2(x, -2), trigRef("atan2", x, -2), 3e-16, "atan2 %v", x)
	}
	for _, x := range []float64{0.1, 0.5, -0.7, 0.99} {
		require.InEpsilon(t, math.Asin(x), trigRef("asin", x, 0), 3e-16, "asin %v", x)
		require.InEpsilon(t, math.Acos(x), trigRef("acos", x, 0), 3e-15, "acos %v", x)
	}
}
