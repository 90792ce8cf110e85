package dlpack

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/internal/testutil"
)

// Host memory imports zero-copy exactly when the data pointer meets the
// device's rule (HostImportAlignment: the buffer alignment within imported
// pages on lavapipe, 64 bytes, not the 16 the docs once said); otherwise it
// is copied, or refused under CopyNever.
func TestImportHostAlignment(t *testing.T) {
	m, _ := testutil.Manager(t)
	d := m.Runtime()
	align := d.HostImportAlignment()
	require.NotZero(t, align)
	t.Logf("host import alignment: %d bytes (minImportedHostPointerAlignment %d)", align, d.Info.Limits.MinImportedHostPointerAlignment)
	offsets := []int{0, 4, 16, 32, 48, int(align), 2 * int(align), int(align) + 16}
	for _, off := range offsets {
		if off >= pageBytes {
			continue
		}
		aligned := uint64(off)%align == 0
		for _, mode := range []CopyMode{CopyIfNeeded, CopyNever, CopyAlways} {
			f := foreign{dev: Device{CPU, 0}, dt: DataType{codeFloat, 32, 1}, ndim: 1, shape: []int64{5}, data: f32bytes(1, 2, 3, 4, 5), dataOffset: off}
			mt, _ := f.build()
			before := foreignDeletes()
			x, copied, err := ImportCopy(ctx, m, mt, mode)
			if mode == CopyNever && !aligned {
				assert.ErrorIs(t, err, vkflow.ErrUnsupported, "offset %d: CopyNever", off)
				assert.Equal(t, before+1, foreignDeletes(), "the deleter ran")
				continue
			}
			require.NoError(t, err, "offset %d mode %v", off, mode)
			assert.Equal(t, !aligned || mode == CopyAlways, copied, "offset %d mode %v: copied", off, mode)
			got, err := x.Float32s()
			require.NoError(t, err)
			assert.Equal(t, []float32{1, 2, 3, 4, 5}, got)
			require.NoError(t, x.Close())
			assert.Equal(t, before+1, foreignDeletes())
		}
	}
}
