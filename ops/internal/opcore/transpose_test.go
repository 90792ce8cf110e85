package opcore_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/graph"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/ops"
	"github.com/vkflow/vkflow/ops/internal/opcore"
	"github.com/vkflow/vkflow/sequence"
	"github.com/vkflow/vkflow/tensor"
)

// refTranspose permutes the elements (size bytes each) of x, of shape,
// as NumPy's transpose with axes perm (already non-negative).
func refTranspose(x []byte, size int, shape, perm []int) []byte {
	r := len(shape)
	xs := make([]int, r)
	s := 1
	for i := r - 1; i >= 0; i-- {
		xs[i] = s
		s *= shape[i]
	}
	oshape := make([]int, r)
	for i, a := range perm {
		oshape[i] = shape[a]
	}
	n := numel(oshape)
	out := make([]byte, n*size)
	idx := make([]int, r)
	for o := range n {
		off := 0
		for i := range r {
			off += idx[i] * xs[perm[i]]
		}
		copy(out[o*size:], x[off*size:(off+1)*size])
		for i := r - 1; i >= 0; i-- { // next index, row-major
			if idx[i]++; idx[i] < oshape[i] {
				break
			}
			idx[i] = 0
		}
	}
	return out
}

// randomTensor makes a tensor of dt and shape with random bits (every
// NaN, Inf and subnormal pattern included for floats; 0 or 1 for bool).
func randomTensor(t *testing.T, m *vkflow.Manager, rng *rand.Rand, dt tensor.Dtype, shape []int) (*tensor.Tensor, []byte) {
	t.Helper()
	raw := make([]byte, numel(shape)*dt.Size())
	for i := range raw {
		raw[i] = byte(rng.Uint32())
		if dt == tensor.Bool {
			raw[i] &= 1
		}
	}
	x, err := tensor.New(m, dt, shape)
	require.NoError(t, err)
	t.Cleanup(func() { _ = x.Close() })
	require.NoError(t, x.WriteBytes(raw))
	return x, raw
}

func readBytes(t *testing.T, x *tensor.Tensor) []byte {
	t.Helper()
	b := make([]byte, x.Bytes())
	require.NoError(t, x.ReadBytes(b))
	return b
}

func TestTranspose(t *testing.T) {
	m, _ := testutil.Manager(t)
	rng := rand.New(rand.NewPCG(21, 22))
	type tc struct {
		shape, perm []int
		kernel      string // "tile" or "gather": the kernel it must take
	}
	cases := []tc{
		{[]int{1, 1}, nil, "gather"},
		{[]int{3, 1}, nil, "gather"},
		{[]int{1023, 1}, []int{1, 0}, "gather"},
		{[]int{3, 5}, nil, "tile"},
		{[]int{33, 65}, []int{1, 0}, "tile"},
		{[]int{1023, 17}, []int{-1, -2}, "tile"},
		{[]int{4097, 3}, nil, "tile"},
		{[]int{2, 33, 65}, []int{0, 2, 1}, "tile"},
		{[]int{3, 4, 5, 6}, []int{0, 1, 3, 2}, "tile"}, // batch dims merge
		{[]int{3, 4, 5, 6}, []int{2, 3, 0, 1}, "tile"}, // two blocks of merged dims
		{[]int{2, 3, 4}, nil, "gather"},                // reversed
		{[]int{2, 3, 4}, []int{1, 0, 2}, "gather"},     // inner dim kept
		{[]int{5, 1, 7, 1, 3}, []int{4, 3, 2, 1, 0}, "gather"},
		{[]int{2, 3, 4, 5, 6}, []int{4, 0, 3, 1, 2}, "gather"},
		{[]int{17}, nil, "gather"},
		{[]int{}, nil, "gather"},
		{[]int{2, 3}, []int{0, 1}, "gather"}, // identity: a copy
		// 4-byte elements with both sides multiples of 4: 4-vectors
		{[]int{4, 8}, nil, "tile4"},
		{[]int{2, 36, 100}, []int{0, 2, 1}, "tile4"},
		{[]int{128, 64}, nil, "tile4"},
	}
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Int8, tensor.Float16, tensor.Float64, tensor.Bool} {
		for i, c := range cases {
			if dt != tensor.Float32 && i != 4 && i != 13 && i != 18 {
				continue // every dtype through both kernels, not every case
			}
			t.Run(fmt.Sprintf("%v %v %v", dt, c.shape, c.perm), func(t *testing.T) {
				x, raw := randomTensor(t, m, rng, dt, c.shape)
				op, err := ops.Transpose(m, x, c.perm, nil)
				require.NoError(t, err)
				defer op.Close()
				defer op.Out().Close()
				perm := c.perm
				r := len(c.shape)
				if perm == nil {
					for i := range r {
						perm = append(perm, r-1-i)
					}
				}
				perm = append([]int(nil), perm...)
				for i := range perm {
					if perm[i] < 0 {
						perm[i] += r
					}
				}
				want := refTranspose(raw, dt.Size(), c.shape, perm)
				oshape := make([]int, r)
				for i, a := range perm {
					oshape[i] = c.shape[a]
				}
				assert.Equal(t, oshape, op.Out().Shape())
				local := [3]uint32{256, 1, 1}
				switch {
				case c.kernel == "tile" || c.kernel == "tile4" && dt.Size() != 4:
					local = [3]uint32{32, 8, 1}
				case c.kernel == "tile4":
					local = [3]uint32{64, 1, 1}
				}
				assert.Equal(t, [][3]uint32{local}, opcore.LocalSizes(op), "kernel")
				require.NoError(t, op.Run(context.Background()))
				got := readBytes(t, op.Out())
				assert.True(t, bytes.Equal(want, got), "elements differ")
			})
		}
	}
}

// The 2-D kernel without its barrier reads tile elements other
// invocations have not written yet: the test must fail.
func TestTransposeMutationNoBarrier(t *testing.T) {
	m, _ := testutil.Manager(t)
	rng := rand.New(rand.NewPCG(23, 24))
	// The 4-vector kernel (64×96 float32) and the scalar one (63×96).
	for _, shape := range [][]int{{64, 96}, {63, 96}} {
		x, raw := randomTensor(t, m, rng, tensor.Float32, shape)
		want := refTranspose(raw, 4, shape, []int{1, 0})
		for _, broken := range []bool{false, true} {
			opcore.SetTransposeNoBarrier(broken)
			op, err := ops.Transpose(m, x, nil, nil)
			opcore.SetTransposeNoBarrier(false)
			require.NoError(t, err)
			require.NoError(t, op.Run(context.Background()))
			got := readBytes(t, op.Out())
			if broken {
				assert.False(t, bytes.Equal(want, got), "%v: the kernel without barrier() gave the right result: the tests cannot see a missing barrier", shape)
			} else {
				assert.True(t, bytes.Equal(want, got), "%v", shape)
			}
			require.NoError(t, op.Out().Close())
			require.NoError(t, op.Close())
		}
	}
}

func TestTransposeErrors(t *testing.T) {
	m, _ := testutil.Manager(t)
	rng := rand.New(rand.NewPCG(25, 26))
	x, _ := randomTensor(t, m, rng, tensor.Float32, []int{2, 3})
	sq, _ := randomTensor(t, m, rng, tensor.Float32, []int{3, 3})
	wrong, _ := randomTensor(t, m, rng, tensor.Float32, []int{2, 3})
	wrongDt, _ := randomTensor(t, m, rng, tensor.Int32, []int{3, 2})
	for _, c := range []struct {
		name string
		x    *tensor.Tensor
		perm []int
		out  *tensor.Tensor
		msg  string
	}{
		{"short perm", x, []int{0}, nil, "1 entries for 2 dimensions"},
		{"repeated axis", x, []int{1, 1}, nil, "repeats axis 1"},
		{"axis out of range", x, []int{0, 2}, nil, "out of range"},
		{"negative axis out of range", x, []int{-3, 0}, nil, "out of range"},
		{"in place", sq, nil, sq, "cannot work in place"},
		{"out of the wrong shape", x, nil, wrong, "shape"},
		{"out of the wrong dtype", x, nil, wrongDt, "int32"},
		{"nil x", nil, nil, nil, "input 0 is nil"},
	} {
		t.Run(c.name, func(t *testing.T) {
			op, err := ops.Transpose(m, c.x, c.perm, c.out)
			assert.Nil(t, op)
			require.ErrorIs(t, err, vkflow.ErrInvalid)
			assert.Contains(t, err.Error(), c.msg)
		})
	}
}

// Through the registry (Attrs.Perm), in a sequence and in a graph.
func TestTransposeRecord(t *testing.T) {
	m, _ := testutil.Manager(t)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(27, 28))
	shape := []int{3, 40, 50}
	x, raw := randomTensor(t, m, rng, tensor.Float32, shape)
	want := refTranspose(raw, 4, shape, []int{2, 0, 1})
	at, err := ops.ParseAttrs([]byte(`{"perm": [-1, 0, 1]}`))
	require.NoError(t, err)
	outs, err := ops.Call(ctx, m, "transpose", []*tensor.Tensor{x}, nil, at)
	require.NoError(t, err)
	require.Len(t, outs, 1)
	defer outs[0].Close()
	assert.True(t, bytes.Equal(want, readBytes(t, outs[0])))

	// x -> transpose -> transpose back: the round trip is x.
	there, err := ops.Transpose(m, x, []int{2, 0, 1}, nil)
	require.NoError(t, err)
	back, err := ops.Transpose(m, there.Out(), []int{1, 2, 0}, nil)
	require.NoError(t, err)
	t.Cleanup(func() {
		for _, c := range []interface{ Close() error }{there, back, there.Out(), back.Out()} {
			assert.NoError(t, c.Close())
		}
	})
	s, err := sequence.New(m, 0)
	require.NoError(t, err)
	defer s.Close()
	back.Record(there.Record(s)).SyncLocal(back.Out())
	require.NoError(t, s.Eval(ctx))
	assert.True(t, bytes.Equal(raw, readBytes(t, back.Out())))

	require.NoError(t, back.Out().WriteBytes(make([]byte, len(raw))))
	g, err := graph.New(m)
	require.NoError(t, err)
	there.AddTo(g)
	back.AddTo(g)
	got := make([]float32, len(raw)/4)
	g.Download(back.Out(), got)
	exec, err := g.Compile()
	require.NoError(t, err)
	defer exec.Close()
	require.NoError(t, exec.Run(ctx))
	gotRaw := readBytes(t, back.Out())
	assert.True(t, bytes.Equal(raw, gotRaw))
}

// A grid past the device's limits is cut into dispatches: forced with a
// limit of 2 workgroups per dimension.
func TestTransposeCut(t *testing.T) {
	m, _ := testutil.Manager(t)
	defer opcore.SetMatmulLimits(2, 1<<15)()
	rng := rand.New(rand.NewPCG(29, 30))
	// The scalar kernel (70 columns) and the 4-vector one (72).
	for _, shape := range [][]int{{3, 100, 70}, {3, 100, 72}} {
		x, raw := randomTensor(t, m, rng, tensor.Float32, shape)
		op, err := ops.Transpose(m, x, []int{0, 2, 1}, nil)
		require.NoError(t, err)
		assert.Equal(t, 2*2*2, op.Dispatches())
		require.NoError(t, op.Run(context.Background()))
		assert.True(t, bytes.Equal(refTranspose(raw, 4, shape, []int{0, 2, 1}), readBytes(t, op.Out())), "%v", shape)
		require.NoError(t, op.Out().Close())
		require.NoError(t, op.Close())
	}
}

// Empty dimensions give an empty result and no dispatch.
func TestTransposeEmpty(t *testing.T) {
	m, _ := testutil.Manager(t)
	x, err := tensor.New(m, tensor.Float32, []int{0, 3})
	require.NoError(t, err)
	defer x.Close()
	op, err := ops.Transpose(m, x, nil, nil)
	require.NoError(t, err)
	defer op.Close()
	defer op.Out().Close()
	assert.Equal(t, []int{3, 0}, op.Out().Shape())
	assert.Zero(t, op.Dispatches())
	require.NoError(t, op.Run(context.Background()))
}
