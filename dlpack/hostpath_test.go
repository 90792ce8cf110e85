package dlpack

import (
	"fmt"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/tensor"
)

// Mapped memory the host reads through a copy (as uncached device memory
// on a discrete GPU; forced here with WithHostReads) still goes out as
// kDLCPU, but as a copy made on the GPU, unless the consumer forbids a
// copy: then it gets the mapping.
func TestExportReadsThroughCopy(t *testing.T) {
	for _, tc := range []struct {
		path   vkflow.HostPath
		mode   CopyMode
		copied bool
	}{
		{vkflow.HostAuto, CopyIfNeeded, false},
		{vkflow.HostStaged, CopyIfNeeded, true},
		{vkflow.HostRing, CopyIfNeeded, true},
		{vkflow.HostStaged, CopyNever, false},
	} {
		t.Run(fmt.Sprint(tc.path, "/copy=", tc.mode), func(t *testing.T) {
			m, _ := testutil.Manager(t, vkflow.WithHostReads(tc.path))
			x, err := tensor.FromSlice(m, []float32{1, 2, 3})
			require.NoError(t, err)
			defer x.Close()
			mt, err := Export(ctx, x, Options{Copy: tc.mode, MaxVersion: &Version{1, 1}})
			require.NoError(t, err)
			defer mt.Delete()
			in := mt.Describe()
			assert.Equal(t, Device{CPU, 0}, in.Device)
			assert.Equal(t, tc.copied, in.Flags&FlagIsCopied != 0)
			assert.Equal(t, tc.copied, in.Data != x.Allocation().Mapped, "a copy, or the mapping")
			assert.Equal(t, []float32{1, 2, 3}, unsafe.Slice((*float32)(in.Data), 3))
		})
	}
}
