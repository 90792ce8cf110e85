package sequence_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/dlpack"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/sequence"
	"github.com/vkflow/vkflow/tensor"
)

var ctx = context.Background()

// vulkanView imports a kDLVulkan export of t: a second tensor over t's
// VkBuffer.
func vulkanView(t *testing.T, m *vkflow.Manager, src *tensor.Tensor) *tensor.Tensor {
	t.Helper()
	mt, err := dlpack.Export(ctx, src, dlpack.Options{Device: &dlpack.Device{Type: dlpack.Vulkan, ID: int32(m.Device().Index)}})
	require.NoError(t, err)
	v, copied, err := dlpack.Import(ctx, m, mt)
	require.NoError(t, err)
	require.False(t, copied)
	require.Equal(t, src.Allocation().Buffer, v.Allocation().Buffer)
	return v
}

// Copy rejects regions that vkCmdCopyBuffer forbids (a source and a
// destination overlapping in memory, or two destinations overlapping),
// whether the bytes are shared through one tensor or through two views of
// one buffer; legal copies produce the right data.
func TestCopyOverlap(t *testing.T) {
	m, _ := testutil.Manager(t)
	a, err := tensor.FromSlice(m, []float32{0, 1, 2, 3, 4, 5, 6, 7})
	require.NoError(t, err)
	b, err := tensor.FromSlice(m, []float32{10, 11, 12, 13, 14, 15, 16, 17})
	require.NoError(t, err)
	av := vulkanView(t, m, a)
	for _, c := range []*tensor.Tensor{av, a, b} {
		defer c.Close()
	}
	type R = sequence.Region
	tests := []struct {
		name     string
		src, dst *tensor.Tensor
		regions  []R
		bad      string // part of the error, "" when the copy is legal
		want     []float32
	}{
		{"one region overlapping itself", a, a, []R{{Src: 0, Dst: 2, Len: 4}}, "region 0's destination overlaps region 0's source", nil},
		{"dst of one region over src of another", a, a, []R{{Src: 0, Dst: 4, Len: 2}, {Src: 4, Dst: 6, Len: 2}}, "region 0's destination overlaps region 1's source", nil},
		{"src of a later region under an earlier dst", a, a, []R{{Src: 6, Dst: 0, Len: 2}, {Src: 0, Dst: 4, Len: 1}}, "region 0's destination overlaps region 1's source", nil},
		{"two destinations overlap, other tensors", a, b, []R{{Src: 0, Dst: 0, Len: 3}, {Src: 4, Dst: 2, Len: 2}}, "region 0's destination overlaps region 1's destination", nil},
		{"view of the source buffer as destination", a, av, []R{{Src: 0, Dst: 1, Len: 2}}, "region 0's destination overlaps region 0's source", nil},
		{"whole copy into a view of itself", av, a, nil, "region 0's destination overlaps region 0's source", nil},
		{"disjoint regions in one tensor", a, a, []R{{Src: 0, Dst: 4, Len: 2}, {Src: 2, Dst: 6, Len: 2}}, "", []float32{0, 1, 2, 3, 0, 1, 2, 3}},
		{"disjoint regions through a view", av, a, []R{{Src: 0, Dst: 1, Len: 1}}, "", []float32{0, 0, 2, 3, 0, 1, 2, 3}},
		{"sources may overlap", b, a, []R{{Src: 0, Dst: 0, Len: 3}, {Src: 1, Dst: 3, Len: 3}}, "", []float32{10, 11, 12, 11, 12, 13, 2, 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := sequence.New(m, 0)
			require.NoError(t, err)
			defer s.Close()
			err = s.Copy(tt.src, tt.dst, tt.regions...).SyncLocal(tt.dst).Eval(ctx)
			if tt.bad != "" {
				require.ErrorIs(t, err, vkflow.ErrInvalid)
				assert.Contains(t, err.Error(), tt.bad)
				return
			}
			require.NoError(t, err)
			got, err := tt.dst.Float32s()
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
	// The rejected copies left no trace in the data.
	got, err := b.Float32s()
	require.NoError(t, err)
	assert.Equal(t, []float32{10, 11, 12, 13, 14, 15, 16, 17}, got)
}
