package shaders

import (
	"encoding/binary"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const spirvMagic = 0x07230203

func TestEmbeddedBlobs(t *testing.T) {
	tests := []struct {
		name string
		file string
		code []byte
	}{
		{"Mul", "mul.spv", Mul},
		{"MulVec4", "mul_vec4.spv", MulVec4},
		{"Add", "add.spv", Add},
		{"AddVec4", "add_vec4.spv", AddVec4},
		{"Saxpy", "saxpy.spv", Saxpy},
		{"LogRegGrad", "logreg_grad.spv", LogRegGrad},
		{"LogRegUpdate", "logreg_update.spv", LogRegUpdate},
		{"Raster", "raster.spv", Raster},
		{"Blend", "blend.spv", Blend},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.NotNil(t, tt.code)
			require.GreaterOrEqual(t, len(tt.code), 20, "shorter than a SPIR-V header")
			assert.Zero(t, len(tt.code)%4, "length %d is not word aligned", len(tt.code))
			assert.Equal(t, uint32(spirvMagic), binary.LittleEndian.Uint32(tt.code),
				"does not start with the little-endian SPIR-V magic")

			fromFS, err := fs.ReadFile(FS(), tt.file)
			require.NoError(t, err)
			assert.Equal(t, fromFS, tt.code, "variable and FS disagree")
		})
	}
}

// TestEverySourceEmbedded checks that each GLSL source in this folder has its
// SPIR-V embedded, and that nothing else is.
func TestEverySourceEmbedded(t *testing.T) {
	sources, err := filepath.Glob("*.comp")
	require.NoError(t, err)
	require.NotEmpty(t, sources)

	want := make([]string, 0, len(sources))
	for _, src := range sources {
		want = append(want, strings.TrimSuffix(src, ".comp")+".spv")
	}

	entries, err := fs.ReadDir(FS(), ".")
	require.NoError(t, err)
	got := make([]string, 0, len(entries))
	for _, e := range entries {
		got = append(got, e.Name())
	}
	assert.ElementsMatch(t, want, got)

	for _, name := range got {
		code, err := fs.ReadFile(FS(), name)
		require.NoError(t, err, name)
		onDisk, err := os.ReadFile(name)
		require.NoError(t, err, name)
		assert.Equal(t, onDisk, code, name)
		if assert.GreaterOrEqual(t, len(code), 4, name) {
			assert.Equal(t, uint32(spirvMagic), binary.LittleEndian.Uint32(code), name)
		}
		assert.Zero(t, len(code)%4, name)
	}
}
