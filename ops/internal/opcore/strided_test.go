package opcore_test

import (
	"context"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/ops"
	"github.com/vkflow/vkflow/tensor"
)

// stridedRef copies the view as the op must, on raw elements of size es.
func stridedRef(src, dst []byte, es int, at ops.Attrs) {
	shape := at.Shape
	row := func(st []int) []int {
		if st != nil {
			return st
		}
		out := make([]int, len(shape))
		acc := 1
		for k := len(shape) - 1; k >= 0; k-- {
			out[k] = acc
			acc *= shape[k]
		}
		return out
	}
	sst, dst2 := row(at.SrcStrides), row(at.DstStrides)
	n := 1
	for _, d := range shape {
		n *= d
	}
	for i := 0; i < n; i++ {
		s, d, r := at.SrcOffset, at.DstOffset, i
		for k := len(shape) - 1; k >= 0; k-- {
			c := r % shape[k]
			r /= shape[k]
			s += c * sst[k]
			d += c * dst2[k]
		}
		copy(dst[d*es:(d+1)*es], src[s*es:(s+1)*es])
	}
}

func TestStridedCopy(t *testing.T) {
	m, _ := testutil.Manager(t)
	rng := rand.New(rand.NewSource(5))
	cases := []struct {
		name   string
		dt     tensor.Dtype
		srcLen int
		dstLen int // 0: allocated output
		at     ops.Attrs
	}{
		{"contiguous prefix", tensor.Float32, 10, 0, ops.Attrs{Shape: []int{4}, SrcOffset: 3}},
		{"step slice", tensor.Int32, 20, 0, ops.Attrs{Shape: []int{7}, SrcOffset: 1, SrcStrides: []int{3}}},
		{"negative step", tensor.Float64, 9, 0, ops.Attrs{Shape: []int{9}, SrcOffset: 8, SrcStrides: []int{-1}}},
		{"transpose", tensor.Float32, 12, 0, ops.Attrs{Shape: []int{4, 3}, SrcStrides: []int{1, 4}}},
		{"broadcast source", tensor.Uint16, 3, 0, ops.Attrs{Shape: []int{5, 3}, SrcStrides: []int{0, 1}}},
		{"int8 column", tensor.Int8, 35, 0, ops.Attrs{Shape: []int{5}, SrcOffset: 2, SrcStrides: []int{7}}},
		{"bool 3-d", tensor.Bool, 24, 0, ops.Attrs{Shape: []int{2, 3, 4}, SrcStrides: []int{1, 8, 2}}},
		{"int64 scatter", tensor.Int64, 6, 20, ops.Attrs{Shape: []int{2, 3}, DstOffset: 19, DstStrides: []int{-10, -2}}},
		{"scatter rows", tensor.Float32, 8, 16, ops.Attrs{Shape: []int{2, 4}, DstOffset: 4, DstStrides: []int{8, 1}}},
		{"0-d", tensor.Float32, 5, 0, ops.Attrs{Shape: []int{}, SrcOffset: 4}},
		{"empty", tensor.Float32, 5, 0, ops.Attrs{Shape: []int{3, 0}}},
		{"8 dims", tensor.Uint8, 256, 0, ops.Attrs{Shape: []int{2, 2, 2, 2, 2, 2, 2, 2}, SrcOffset: 255,
			SrcStrides: []int{-1, -2, -4, -8, -16, -32, -64, -128}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			es := tc.dt.Size()
			srcBytes := make([]byte, tc.srcLen*es)
			rng.Read(srcBytes)
			if tc.dt == tensor.Bool {
				for i := range srcBytes {
					srcBytes[i] &= 1
				}
			}
			src, err := tensor.New(m, tc.dt, []int{tc.srcLen})
			require.NoError(t, err)
			require.NoError(t, src.WriteBytes(srcBytes))
			var dst *tensor.Tensor
			var want []byte
			if tc.dstLen > 0 {
				dst, err = tensor.New(m, tc.dt, []int{tc.dstLen})
				require.NoError(t, err)
				init := make([]byte, tc.dstLen*es)
				fill := byte(0x5a)
				if tc.dt == tensor.Bool {
					fill = 1
				}
				for i := range init {
					init[i] = fill
				}
				require.NoError(t, dst.WriteBytes(init))
				want = append([]byte(nil), init...)
			} else {
				n := 1
				for _, d := range tc.at.Shape {
					n *= d
				}
				want = make([]byte, n*es)
			}
			stridedRef(srcBytes, want, es, tc.at)
			outs, err := ops.Call(context.Background(), m, "strided_copy", []*tensor.Tensor{src}, []*tensor.Tensor{dst}, tc.at)
			require.NoError(t, err)
			if tc.dstLen == 0 {
				assert.Equal(t, tc.at.Shape, outs[0].Shape())
			}
			got := make([]byte, len(want))
			require.NoError(t, outs[0].ReadBytes(got))
			assert.Equal(t, want, got)
		})
	}
	// The reference is not trivially the identity: a transpose changes
	// the order (so a kernel that ignored the strides would fail).
	a, b := []byte{0, 1, 2, 3, 4, 5}, make([]byte, 6)
	stridedRef(a, b, 1, ops.Attrs{Shape: []int{3, 2}, SrcStrides: []int{1, 3}})
	assert.Equal(t, []byte{0, 3, 1, 4, 2, 5}, b)
}

func TestStridedCopyErrors(t *testing.T) {
	m, _ := testutil.Manager(t)
	f, err := tensor.New(m, tensor.Float32, []int{10})
	require.NoError(t, err)
	g, err := tensor.New(m, tensor.Float32, []int{10})
	require.NoError(t, err)
	i32, err := tensor.New(m, tensor.Int32, []int{10})
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		out  *tensor.Tensor
		at   ops.Attrs
		msg  string
	}{
		{"past the end", nil, ops.Attrs{Shape: []int{4}, SrcOffset: 7}, "reaches elements 7..10 of a tensor of 10"},
		{"before the start", nil, ops.Attrs{Shape: []int{4}, SrcOffset: 2, SrcStrides: []int{-1}}, "reaches elements -1..2"},
		{"destination out", g, ops.Attrs{Shape: []int{3}, DstOffset: 0, DstStrides: []int{5}}, "destination view"},
		{"stride count", nil, ops.Attrs{Shape: []int{2, 2}, SrcStrides: []int{1}}, "want 2 strides"},
		{"negative dim", nil, ops.Attrs{Shape: []int{-1}}, "bad dimension"},
		{"9 dims", nil, ops.Attrs{Shape: []int{1, 1, 1, 1, 1, 1, 1, 1, 1}}, "more than 8"},
		{"dst offset without dst", nil, ops.Attrs{Shape: []int{1}, DstOffset: 1}, "need a given output"},
		{"dtype", i32, ops.Attrs{Shape: []int{10}}, "output 0 is int32, want float32"},
		{"in place", f, ops.Attrs{Shape: []int{5}, DstOffset: 5}, "cannot work in place"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ops.Call(context.Background(), m, "strided_copy", []*tensor.Tensor{f}, []*tensor.Tensor{tc.out}, tc.at)
			require.ErrorIs(t, err, vkflow.ErrInvalid)
			assert.Contains(t, err.Error(), tc.msg)
		})
	}
}
