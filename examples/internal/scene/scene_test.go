package scene

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// The scene is not trivial: most pixels are covered, and some by several
// passes, so the examples' tests would notice a pass lost or blended out of
// order.
func TestReferenceCoverage(t *testing.T) {
	p := Params{Size: 64, Tris: 16, Passes: 8}
	require.NoError(t, p.Validate())
	img := Reference(p, Geometry(p))
	var covered, opaque int
	for i := 3; i < len(img); i += 4 {
		if img[i] > 0 {
			covered++
		}
		if img[i] > 0.9 {
			opaque++
		}
	}
	n := p.Size * p.Size
	require.Greater(t, covered, n/2, "covered pixels")
	require.Greater(t, opaque, n/20, "pixels covered by several passes")
}

func TestMaxDiff(t *testing.T) {
	for _, tt := range []struct {
		name string
		a, b []float32
		want float64
	}{
		{"equal", []float32{1, 2}, []float32{1, 2}, 0},
		{"largest", []float32{1, 2}, []float32{1.5, 4}, 2},
		{"lengths", []float32{1}, []float32{1, 2}, math.Inf(1)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, MaxDiff(tt.a, tt.b))
		})
	}
	require.True(t, math.IsNaN(MaxDiff([]float32{float32(math.NaN())}, []float32{0})))
}

func TestValidate(t *testing.T) {
	require.NoError(t, Params{Size: MaxSize, Tris: 1, Passes: 1}.Validate())
	for _, p := range []Params{{0, 1, 1}, {MaxSize + 1, 1, 1}, {8, 0, 1}, {8, 1, 0}} {
		require.Error(t, p.Validate(), "%+v", p)
	}
}
