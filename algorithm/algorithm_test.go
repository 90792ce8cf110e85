package algorithm_test

import (
	"context"
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/algorithm"
	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/internal/kernels"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/sequence"
	"github.com/vkflow/vkflow/tensor"
)

// Test shaders; each .spv is built from the .comp beside it (see the
// command at the top of each source).
var (
	// specSPV computes o[i] = a[i]*SCALE + float(OFFSET): local_size_x_id
	// 0 (default 1), constant 1 float SCALE = 1, constant 2 uint OFFSET = 0;
	// binding 0 a (read-only), 1 o (write-only).
	//
	//go:embed testdata/spec.spv
	specSPV []byte

	// set1SPV has a storage buffer at set 1, binding 0.
	//
	//go:embed testdata/set1.spv
	set1SPV []byte

	// uniformSPV has a storage buffer at set 0, binding 0 and a uniform
	// block at set 0, binding 1.
	//
	//go:embed testdata/uniform.spv
	uniformSPV []byte

	// gapSPV has storage buffers at set 0, bindings 0 and 2.
	//
	//go:embed testdata/gap.spv
	gapSPV []byte
)

const sentinel = float32(-12345)

// inputs returns n values whose products with small integers are exact in
// float32, so that a fused multiply-add and a separate multiply and add give
// the same result.
func inputs(n int) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = float32(i%1000)*0.5 - 100
	}
	return out
}

func filled(n int, v float32) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func newTensor(t *testing.T, m *vkflow.Manager, data []float32) *tensor.Tensor {
	t.Helper()
	x, err := tensor.FromSlice(m, data)
	require.NoError(t, err)
	return x
}

// equal compares float32 slices exactly (as numbers: -0 equals 0, since
// Vulkan does not require signed zeros to be preserved) and reports the
// first difference only, instead of the whole slices.
func equal(t *testing.T, want, got []float32, msgAndArgs ...any) bool {
	t.Helper()
	if !assert.Len(t, got, len(want), msgAndArgs...) {
		return false
	}
	for i := range want {
		if want[i] != got[i] {
			return assert.Fail(t, fmt.Sprintf("element %d of %d is %v, want %v", i, len(want), got[i], want[i]), msgAndArgs...)
		}
	}
	return true
}

func floats(t *testing.T, x *tensor.Tensor) []float32 {
	t.Helper()
	v, err := x.Float32s()
	require.NoError(t, err)
	return append([]float32(nil), v...)
}

// wantSpec is the CPU version of spec.comp over the first `done` elements;
// the rest keep their previous value prev.
func wantSpec(a []float32, scale float32, offset uint32, done int, prev float32) []float32 {
	out := make([]float32, len(a))
	for i := range a {
		if i < done {
			out[i] = a[i]*scale + float32(offset)
		} else {
			out[i] = prev
		}
	}
	return out
}

func live(m *vkflow.Manager, k core.Kind) int { return m.Runtime().Live()[k] }

func closeAll(t *testing.T, cs ...interface{ Close() error }) {
	t.Helper()
	for _, c := range cs {
		require.NoError(t, c.Close())
	}
}

func run(t *testing.T, m *vkflow.Manager, a *algorithm.Algorithm, sync ...*tensor.Tensor) {
	t.Helper()
	seq, err := sequence.New(m, 0)
	require.NoError(t, err)
	defer seq.Close()
	require.NoError(t, seq.Dispatch(a).SyncLocal(sync...).Eval(context.Background()))
}

func TestSpecializationConstants(t *testing.T) {
	m, _ := testutil.Manager(t)
	tests := []struct {
		name   string
		n      int
		opts   []algorithm.Option
		local  [3]uint32
		groups [3]uint32
		scale  float32
		offset uint32
	}{
		{"defaults", 10, nil, [3]uint32{1, 1, 1}, [3]uint32{10, 1, 1}, 1, 0},
		{"all three", 1000, []algorithm.Option{
			algorithm.Spec(1, float32(3)), algorithm.Spec(2, uint32(5)), algorithm.Spec(0, uint32(32)),
		}, [3]uint32{32, 1, 1}, [3]uint32{32, 1, 1}, 3, 5},
		{"exact multiple", 1024, []algorithm.Option{algorithm.Spec(0, uint32(32))},
			[3]uint32{32, 1, 1}, [3]uint32{32, 1, 1}, 1, 0},
		{"one past a multiple", 1025, []algorithm.Option{algorithm.Spec(0, uint32(32))},
			[3]uint32{32, 1, 1}, [3]uint32{33, 1, 1}, 1, 0},
		{"scale only, odd local size", 777, []algorithm.Option{
			algorithm.Spec(1, float32(-0.5)), algorithm.Spec(0, uint32(7)),
		}, [3]uint32{7, 1, 1}, [3]uint32{111, 1, 1}, -0.5, 0},
		{"offset only", 64, []algorithm.Option{algorithm.Spec(2, uint32(1<<20))},
			[3]uint32{1, 1, 1}, [3]uint32{64, 1, 1}, 1, 1 << 20},
		{"nil options are skipped", 5, []algorithm.Option{nil, algorithm.Spec(1, float32(2)), nil},
			[3]uint32{1, 1, 1}, [3]uint32{5, 1, 1}, 2, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			av := inputs(tt.n)
			a := newTensor(t, m, av)
			o := newTensor(t, m, filled(tt.n, sentinel))
			algo, err := algorithm.New(m, specSPV, []*tensor.Tensor{a, o}, tt.opts...)
			require.NoError(t, err)
			assert.Equal(t, tt.local, algo.LocalSize())
			assert.Equal(t, tt.groups, algo.Workgroups())
			assert.Zero(t, algo.PushSize())
			assert.Equal(t, algorithm.ReadOnly, algo.Access(0))
			assert.Equal(t, algorithm.WriteOnly, algo.Access(1))
			assert.Equal(t, []*tensor.Tensor{a, o}, algo.Tensors())
			run(t, m, algo, o)
			equal(t, wantSpec(av, tt.scale, tt.offset, tt.n, 0), floats(t, o))
			closeAll(t, algo, a, o)
		})
	}
}

func TestSpecializationConstantErrors(t *testing.T) {
	m, _ := testutil.Manager(t)
	a := newTensor(t, m, inputs(8))
	o := newTensor(t, m, inputs(8))
	tests := []struct {
		name string
		opts []algorithm.Option
		is   error
	}{
		{"int32 for a float", []algorithm.Option{algorithm.Spec(1, int32(3))}, vkflow.ErrInvalid},
		{"float64 for a float", []algorithm.Option{algorithm.Spec(1, float64(3))}, vkflow.ErrInvalid},
		{"uint32 for a float", []algorithm.Option{algorithm.Spec(1, uint32(3))}, vkflow.ErrInvalid},
		{"int32 for a uint", []algorithm.Option{algorithm.Spec(2, int32(5))}, vkflow.ErrInvalid},
		{"uint64 for a uint", []algorithm.Option{algorithm.Spec(2, uint64(5))}, vkflow.ErrInvalid},
		{"bool for a uint", []algorithm.Option{algorithm.Spec(2, true)}, vkflow.ErrInvalid},
		{"int32 for the local size", []algorithm.Option{algorithm.Spec(0, int32(32))}, vkflow.ErrInvalid},
		{"unknown id", []algorithm.Option{algorithm.Spec(9, float32(1))}, vkflow.ErrInvalid},
		{"given twice", []algorithm.Option{algorithm.Spec(1, float32(3)), algorithm.Spec(1, float32(4))}, vkflow.ErrInvalid},
		{"given twice, different types", []algorithm.Option{algorithm.Spec(2, uint32(3)), algorithm.Spec(2, int32(4))}, vkflow.ErrInvalid},
		{"string", []algorithm.Option{algorithm.Spec(1, "x")}, vkflow.ErrInvalid},
		{"untyped int constant is an int", []algorithm.Option{algorithm.Spec(2, 5)}, vkflow.ErrInvalid},
		{"nil", []algorithm.Option{algorithm.Spec(1, nil)}, vkflow.ErrInvalid},
		{"pointer", []algorithm.Option{algorithm.Spec(1, new(float32))}, vkflow.ErrInvalid},
		{"zero local size", []algorithm.Option{algorithm.Spec(0, uint32(0))}, vkflow.ErrInvalid},
		{"local size over the device limit", []algorithm.Option{algorithm.Spec(0, uint32(1<<20))}, vkflow.ErrUnsupported},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			algo, err := algorithm.New(m, specSPV, []*tensor.Tensor{a, o}, tt.opts...)
			require.Error(t, err)
			assert.Nil(t, algo)
			assert.ErrorIs(t, err, tt.is)
		})
	}
	assert.Zero(t, live(m, core.KindAlgorithm), "failed constructors register nothing")
}

func TestWorkgroups(t *testing.T) {
	m, _ := testutil.Manager(t)
	const n = 1000
	av := inputs(n)
	local32 := algorithm.Spec(0, uint32(32))
	tests := []struct {
		name   string
		opts   []algorithm.Option
		groups [3]uint32
		done   int // elements the dispatch computes
	}{
		{"derived", nil, [3]uint32{32, 1, 1}, n},
		{"derived, 4 items per invocation", []algorithm.Option{algorithm.ItemsPerInvocation(4)}, [3]uint32{8, 1, 1}, 8 * 32},
		{"derived, 1000 items per invocation", []algorithm.Option{algorithm.ItemsPerInvocation(1000)}, [3]uint32{1, 1, 1}, 32},
		{"explicit", []algorithm.Option{algorithm.Workgroups(3, 1, 1)}, [3]uint32{3, 1, 1}, 3 * 32},
		{"explicit beats items per invocation", []algorithm.Option{
			algorithm.ItemsPerInvocation(4), algorithm.Workgroups(5, 1, 1),
		}, [3]uint32{5, 1, 1}, 5 * 32},
		{"explicit, more than needed", []algorithm.Option{algorithm.Workgroups(100, 1, 1)}, [3]uint32{100, 1, 1}, n},
		{"later Workgroups wins", []algorithm.Option{
			algorithm.Workgroups(1, 1, 1), algorithm.Workgroups(2, 1, 1),
		}, [3]uint32{2, 1, 1}, 2 * 32},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := newTensor(t, m, av)
			o := newTensor(t, m, filled(n, sentinel))
			algo, err := algorithm.New(m, specSPV, []*tensor.Tensor{a, o}, append([]algorithm.Option{local32}, tt.opts...)...)
			require.NoError(t, err)
			assert.Equal(t, tt.groups, algo.Workgroups())
			run(t, m, algo, o)
			equal(t, wantSpec(av, 1, 0, tt.done, sentinel), floats(t, o))
			closeAll(t, algo, a, o)
		})
	}

	t.Run("errors", func(t *testing.T) {
		a := newTensor(t, m, av)
		o := newTensor(t, m, av)
		for _, opt := range []algorithm.Option{
			algorithm.Workgroups(0, 1, 1),
			algorithm.Workgroups(1, 0, 1),
			algorithm.Workgroups(1, 1, 0),
			algorithm.ItemsPerInvocation(0),
		} {
			_, err := algorithm.New(m, specSPV, []*tensor.Tensor{a, o}, opt)
			assert.ErrorIs(t, err, vkflow.ErrInvalid)
		}
		closeAll(t, a, o)
	})

	t.Run("derived count follows Bind", func(t *testing.T) {
		a := newTensor(t, m, av)
		o := newTensor(t, m, av)
		small := newTensor(t, m, inputs(33))
		smallOut := newTensor(t, m, filled(33, sentinel))
		algo, err := algorithm.New(m, specSPV, []*tensor.Tensor{a, o}, local32)
		require.NoError(t, err)
		assert.Equal(t, [3]uint32{32, 1, 1}, algo.Workgroups())
		require.NoError(t, algo.Bind(small, smallOut))
		assert.Equal(t, [3]uint32{2, 1, 1}, algo.Workgroups())
		run(t, m, algo, smallOut)
		equal(t, wantSpec(inputs(33), 1, 0, 33, 0), floats(t, smallOut))
		closeAll(t, algo, a, o, small, smallOut)
	})
}

func TestPush(t *testing.T) {
	type params struct {
		N     uint32
		Scale float32
		Pair  [2]int16
		Big   uint64
	}
	f := func(v float32) []byte { return binary.LittleEndian.AppendUint32(nil, math.Float32bits(v)) }
	cat := func(bs ...[]byte) []byte {
		var out []byte
		for _, b := range bs {
			out = append(out, b...)
		}
		return out
	}
	tests := []struct {
		name   string
		values []any
		want   []byte
	}{
		{"none", nil, nil},
		{"float32", []any{float32(1.5)}, []byte{0x00, 0x00, 0xc0, 0x3f}},
		{"uint32", []any{uint32(0x01020304)}, []byte{0x04, 0x03, 0x02, 0x01}},
		{"int32 negative", []any{int32(-2)}, []byte{0xfe, 0xff, 0xff, 0xff}},
		{"float64", []any{float64(1)}, []byte{0, 0, 0, 0, 0, 0, 0xf0, 0x3f}},
		{"packed, no alignment padding", []any{uint8(7), uint64(0x0102030405060708)},
			[]byte{7, 8, 7, 6, 5, 4, 3, 2, 1}},
		{"in order", []any{uint32(64), uint32(3), float32(0.25)}, cat(
			[]byte{64, 0, 0, 0}, []byte{3, 0, 0, 0}, f(0.25))},
		{"array", []any{[3]float32{1, -1, 0.5}}, cat(f(1), f(-1), f(0.5))},
		{"struct", []any{params{N: 9, Scale: 2, Pair: [2]int16{-1, 2}, Big: 1 << 40}}, cat(
			[]byte{9, 0, 0, 0}, f(2), []byte{0xff, 0xff, 2, 0}, []byte{0, 0, 0, 0, 0, 1, 0, 0})},
		{"struct then number", []any{struct{ A, B uint16 }{1, 2}, float32(-0)}, cat(
			[]byte{1, 0, 2, 0}, f(0))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := algorithm.Push(tt.values...)
			require.NoError(t, err)
			assert.Equal(t, len(tt.want), len(got))
			if len(tt.want) > 0 {
				assert.Equal(t, tt.want, got)
			}
		})
	}

	bad := []struct {
		name   string
		values []any
	}{
		{"map", []any{map[string]float32{"a": 1}}},
		{"int (no fixed size)", []any{int(1)}},
		{"string", []any{"abc"}},
		{"nil", []any{nil}},
		{"struct with a slice", []any{struct{ A []float32 }{[]float32{1}}}},
	}
	for _, tt := range bad {
		t.Run("invalid "+tt.name, func(t *testing.T) {
			_, err := algorithm.Push(tt.values...)
			assert.ErrorIs(t, err, vkflow.ErrInvalid)
		})
	}
}

// Push constants reach the shader: saxpy with alpha given as a float32 and
// as a struct wrapping one.
func TestPushDispatch(t *testing.T) {
	m, _ := testutil.Manager(t)
	x := newTensor(t, m, []float32{1, 2, 3, 4, 5})
	y := newTensor(t, m, []float32{10, 20, 30, 40, 50})
	saxpy, err := kernels.Saxpy(m, x, y)
	require.NoError(t, err)
	assert.Equal(t, 4, saxpy.PushSize())
	seq, err := sequence.New(m, 0)
	require.NoError(t, err)
	require.NoError(t, seq.Dispatch(saxpy, float32(2)).
		Dispatch(saxpy, struct{ Alpha float32 }{-0.5}).
		Dispatch(saxpy, [1]float32{4}).
		SyncLocal(y).Eval(context.Background()))
	equal(t, []float32{15.5, 31, 46.5, 62, 77.5}, floats(t, y)) // y + 5.5x
	closeAll(t, seq, saxpy, x, y)
}

// Push documents numbers, fixed-size arrays and structs of them; a slice is
// none of these (its size is not part of its type), but binary.Size accepts
// slices of fixed-size elements, so Push encodes them.
func TestPushRejectsSlices(t *testing.T) {
	for _, tt := range []struct {
		name   string
		values []any
	}{
		{"slice", []any{[]float32{1, 2}}},
		{"empty slice", []any{[]uint32{}}},
		{"slice after a number", []any{float32(1), []float32{1}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := algorithm.Push(tt.values...)
			assert.ErrorIs(t, err, vkflow.ErrInvalid)
		})
	}
	t.Run("Dispatch", func(t *testing.T) {
		m, _ := testutil.Manager(t)
		x := newTensor(t, m, []float32{1, 2})
		saxpy, err := kernels.Saxpy(m, x, x)
		require.NoError(t, err)
		seq, err := sequence.New(m, 0)
		require.NoError(t, err)
		assert.ErrorIs(t, seq.Dispatch(saxpy, []float32{2}).Err(), vkflow.ErrInvalid)
		closeAll(t, seq, saxpy, x)
	})
}

// Bind's doc: "Dispatches recorded afterwards use them; recordings made
// before keep theirs", and Sequence.Dispatch "records the algorithm with its
// current bindings". The code snapshots the bindings when the sequence is
// built (its first submit after a change), not when Dispatch is called.
func TestBindAfterRecording(t *testing.T) {
	m, _ := testutil.Manager(t)
	ctx := context.Background()
	a1v, a2v := inputs(100), inputs(40)
	for i := range a2v {
		a2v[i] = -a2v[i]
	}
	want1, want2 := wantSpec(a1v, 2, 1, 100, 0), wantSpec(a2v, 2, 1, 40, 0)
	a1, a2 := newTensor(t, m, a1v), newTensor(t, m, a2v)
	o1, o2 := newTensor(t, m, filled(100, sentinel)), newTensor(t, m, filled(40, sentinel))
	algo, err := algorithm.New(m, specSPV, []*tensor.Tensor{a1, o1},
		algorithm.Spec(1, float32(2)), algorithm.Spec(2, uint32(1)))
	require.NoError(t, err)

	t.Run("recorded, not yet submitted", func(t *testing.T) {
		require.NoError(t, tensor.Write(o1, filled(100, sentinel)))
		require.NoError(t, tensor.Write(o2, filled(40, sentinel)))
		require.NoError(t, algo.Bind(a1, o1))
		seq, err := sequence.New(m, 0)
		require.NoError(t, err)
		defer seq.Close()
		seq.Dispatch(algo)
		require.NoError(t, algo.Bind(a2, o2))
		seq.Dispatch(algo).SyncLocal(o1, o2)
		require.NoError(t, seq.Eval(ctx))
		equal(t, want1, floats(t, o1), "the first dispatch was recorded bound to a1, o1")
		equal(t, want2, floats(t, o2), "the second dispatch was recorded bound to a2, o2")
	})

	t.Run("submitted, then appended to", func(t *testing.T) {
		require.NoError(t, tensor.Write(o1, filled(100, sentinel)))
		require.NoError(t, tensor.Write(o2, filled(40, sentinel)))
		require.NoError(t, algo.Bind(a1, o1))
		seq, err := sequence.New(m, 0)
		require.NoError(t, err)
		defer seq.Close()
		require.NoError(t, seq.Dispatch(algo).SyncLocal(o1, o2).Eval(ctx))
		equal(t, want1, floats(t, o1))
		require.NoError(t, tensor.Write(o1, filled(100, sentinel)))
		require.NoError(t, algo.Bind(a2, o2))
		// Appending an op rebuilds the sequence; the earlier dispatch
		// should keep a1, o1 (no Rerecord was asked for).
		require.NoError(t, seq.SyncLocal(o1).Eval(ctx))
		equal(t, want1, floats(t, o1), "the recording made before Bind keeps its tensors")
		equal(t, filled(40, sentinel), floats(t, o2))
	})
	closeAll(t, algo, a1, a2, o1, o2)
}

func TestBind(t *testing.T) {
	m, _ := testutil.Manager(t)
	other, _ := testutil.Manager(t)
	ctx := context.Background()
	const n1, n2 = 1000, 100
	a1v, a2v := inputs(n1), inputs(n2)
	for i := range a2v {
		a2v[i] = -a2v[i]
	}
	a1 := newTensor(t, m, a1v)
	o1 := newTensor(t, m, filled(n1, sentinel))
	a2 := newTensor(t, m, a2v)
	o2 := newTensor(t, m, filled(n2, sentinel))
	algo, err := algorithm.New(m, specSPV, []*tensor.Tensor{a1, o1},
		algorithm.Spec(0, uint32(32)), algorithm.Spec(1, float32(2)), algorithm.Spec(2, uint32(1)))
	require.NoError(t, err)
	pipe, layout := algo.Pipeline()
	require.NotZero(t, pipe)

	old, err := sequence.New(m, 0)
	require.NoError(t, err)
	old.Dispatch(algo).SyncLocal(o1, o2)
	require.NoError(t, old.Eval(ctx))
	want1 := wantSpec(a1v, 2, 1, n1, 0)
	want2 := wantSpec(a2v, 2, 1, n2, 0)
	equal(t, want1, floats(t, o1))

	require.NoError(t, tensor.Write(o1, filled(n1, sentinel)))
	require.NoError(t, algo.Bind(a2, o2))
	p2, l2 := algo.Pipeline()
	assert.Equal(t, pipe, p2, "Bind keeps the pipeline")
	assert.Equal(t, layout, l2)
	assert.Equal(t, []*tensor.Tensor{a2, o2}, algo.Tensors())
	assert.Equal(t, [3]uint32{32, 1, 1}, algo.LocalSize())
	assert.Equal(t, [3]uint32{4, 1, 1}, algo.Workgroups())

	// The old recording keeps a1 and o1 until Rerecord.
	require.NoError(t, old.Eval(ctx))
	equal(t, want1, floats(t, o1))
	equal(t, filled(n2, sentinel), floats(t, o2))

	// A new recording uses the new bindings.
	run(t, m, algo, o2)
	equal(t, want2, floats(t, o2))

	// Rerecord picks up the new bindings and the new workgroup count.
	require.NoError(t, tensor.Write(o1, filled(n1, sentinel)))
	require.NoError(t, tensor.Write(o2, filled(n2, sentinel)))
	require.NoError(t, old.Rerecord())
	require.NoError(t, old.Eval(ctx))
	equal(t, filled(n1, sentinel), floats(t, o1))
	equal(t, want2, floats(t, o2))

	// The same tensor may be bound twice.
	twice := newTensor(t, m, []float32{1, 2, 3})
	require.NoError(t, algo.Bind(twice, twice))
	run(t, m, algo, twice)
	equal(t, []float32{3, 5, 7}, floats(t, twice))

	closedT := newTensor(t, m, a2v)
	require.NoError(t, closedT.Close())
	foreign, err := tensor.FromSlice(other, a2v)
	require.NoError(t, err)
	errs := []struct {
		name string
		ts   []*tensor.Tensor
		is   error
	}{
		{"closed tensor", []*tensor.Tensor{closedT, o2}, vkflow.ErrClosed},
		{"closed output", []*tensor.Tensor{a2, closedT}, vkflow.ErrClosed},
		{"tensor of another manager", []*tensor.Tensor{a2, foreign}, vkflow.ErrInvalid},
		{"nil tensor", []*tensor.Tensor{a2, nil}, vkflow.ErrInvalid},
		{"too few", []*tensor.Tensor{a2}, vkflow.ErrInvalid},
		{"too many", []*tensor.Tensor{a2, o2, o2}, vkflow.ErrInvalid},
		{"none", nil, vkflow.ErrInvalid},
	}
	for _, tt := range errs {
		t.Run(tt.name, func(t *testing.T) {
			assert.ErrorIs(t, algo.Bind(tt.ts...), tt.is)
			assert.Equal(t, []*tensor.Tensor{twice, twice}, algo.Tensors(), "a failed Bind changes nothing")
		})
	}

	_, err = algorithm.New(m, specSPV, []*tensor.Tensor{a1, foreign})
	assert.ErrorIs(t, err, vkflow.ErrInvalid, "New with a tensor of another manager")
	_, err = algorithm.New(m, specSPV, []*tensor.Tensor{closedT, o1})
	assert.ErrorIs(t, err, vkflow.ErrClosed, "New with a closed tensor")
	_, err = algorithm.New(other, specSPV, []*tensor.Tensor{a1, o1})
	assert.ErrorIs(t, err, vkflow.ErrInvalid, "New on a manager the tensors do not belong to")

	require.NoError(t, algo.Close())
	require.NoError(t, algo.Close(), "idempotent")
	assert.ErrorIs(t, algo.Bind(a1, o1), vkflow.ErrClosed)
	assert.ErrorIs(t, algo.Bind(foreign), vkflow.ErrClosed, "closed is checked first")
	_, _, err = algo.Snapshot()
	assert.ErrorIs(t, err, vkflow.ErrClosed)
	assert.Empty(t, algo.Tensors(), "Close lets go of the tensors")

	// Recordings of the closed algorithm no longer submit.
	assert.ErrorIs(t, old.Eval(ctx), vkflow.ErrClosed)
	assert.ErrorIs(t, old.Dispatch(algo).Err(), vkflow.ErrClosed)
	closeAll(t, old, a1, o1, a2, o2, twice, foreign)
}

// An algorithm holds a reference on each bound tensor: closing one does not
// free its memory until the algorithm lets go of it (Bind or Close), and a
// dispatch recorded with it fails with ErrClosed at build time.
func TestBoundTensorClosed(t *testing.T) {
	m, _ := testutil.Manager(t)
	ctx := context.Background()
	a := newTensor(t, m, inputs(64))
	o := newTensor(t, m, filled(64, sentinel))
	a2 := newTensor(t, m, inputs(64))
	algo, err := algorithm.New(m, specSPV, []*tensor.Tensor{a, o})
	require.NoError(t, err)

	before := m.MemStats().Allocations
	require.NoError(t, a.Close())
	assert.True(t, a.Closed())
	assert.Equal(t, before, m.MemStats().Allocations, "the algorithm keeps the closed tensor's memory")
	assert.Equal(t, []*tensor.Tensor{a, o}, algo.Tensors())

	_, _, err = algo.Snapshot()
	assert.ErrorIs(t, err, vkflow.ErrClosed)

	seq, err := sequence.New(m, 0)
	require.NoError(t, err)
	assert.ErrorIs(t, seq.Dispatch(algo).Err(), vkflow.ErrClosed, "recording the dispatch finds the closed bound tensor")
	assert.ErrorIs(t, seq.Eval(ctx), vkflow.ErrClosed, "the error sticks")
	assert.ErrorIs(t, algo.Bind(a, o), vkflow.ErrClosed)

	require.NoError(t, algo.Bind(a2, o))
	assert.Equal(t, before-1, m.MemStats().Allocations, "re-binding lets go of the closed tensor")
	require.NoError(t, seq.Clear())
	require.NoError(t, seq.Dispatch(algo).SyncLocal(o).Eval(ctx))
	equal(t, wantSpec(inputs(64), 1, 0, 64, 0), floats(t, o))

	// Closing the tensors first and the algorithm last frees them at the
	// algorithm's Close (and the sequence's, which holds o and the build).
	require.NoError(t, a2.Close())
	require.NoError(t, o.Close())
	assert.Equal(t, before-1, m.MemStats().Allocations)
	require.NoError(t, algo.Close())
	require.NoError(t, seq.Close())
	assert.Equal(t, before-3, m.MemStats().Allocations)
	assert.Zero(t, live(m, core.KindAlgorithm))
}

// A sequence built before a bound tensor was closed: its recorded dispatch
// still names the closed tensor, so submitting it again is a use after
// Close and fails with ErrClosed, as does re-recording.
func TestBuiltDispatchOfClosedTensor(t *testing.T) {
	m, _ := testutil.Manager(t)
	ctx := context.Background()
	a := newTensor(t, m, inputs(64))
	o := newTensor(t, m, filled(64, sentinel))
	algo, err := algorithm.New(m, specSPV, []*tensor.Tensor{a, o})
	require.NoError(t, err)
	seq, err := sequence.New(m, 0)
	require.NoError(t, err)
	require.NoError(t, seq.Dispatch(algo).SyncLocal(o).Eval(ctx))
	require.NoError(t, a.Close())

	err = seq.Eval(ctx)
	assert.ErrorIs(t, err, vkflow.ErrClosed, "re-submitting a dispatch that reads a closed tensor")

	assert.ErrorIs(t, seq.Rerecord(), vkflow.ErrClosed, "re-recording finds the closed tensor")
	closeAll(t, seq, algo, o)
}

func TestInvalidSPIRV(t *testing.T) {
	m, _ := testutil.Manager(t)
	f := newTensor(t, m, inputs(4))
	g := newTensor(t, m, inputs(4))
	word := func(code []byte, i int, v uint32) []byte {
		c := append([]byte(nil), code...)
		binary.LittleEndian.PutUint32(c[4*i:], v)
		return c
	}
	bigEndian := make([]byte, len(specSPV))
	for i := 0; i < len(specSPV); i += 4 {
		binary.BigEndian.PutUint32(bigEndian[i:], binary.LittleEndian.Uint32(specSPV[i:]))
	}
	tests := []struct {
		name string
		code []byte
		ts   []*tensor.Tensor
	}{
		{"nil", nil, []*tensor.Tensor{f, g}},
		{"empty", []byte{}, []*tensor.Tensor{f, g}},
		{"3 bytes", specSPV[:3], []*tensor.Tensor{f, g}},
		{"header only", specSPV[:20], []*tensor.Tensor{f, g}},
		{"fewer words than the header", specSPV[:16], []*tensor.Tensor{f, g}},
		{"wrong magic", word(specSPV, 0, 0xdeadbeef), []*tensor.Tensor{f, g}},
		{"big-endian", bigEndian, []*tensor.Tensor{f, g}},
		{"unaligned", specSPV[:len(specSPV)-1], []*tensor.Tensor{f, g}},
		{"truncated at an instruction boundary", specSPV[:len(specSPV)-4], []*tensor.Tensor{f, g}},
		{"truncated inside an instruction", specSPV[:len(specSPV)-8], []*tensor.Tensor{f, g}},
		{"zero word count", word(specSPV, 5, 0), []*tensor.Tensor{f, g}},
		{"storage buffer in set 1", set1SPV, []*tensor.Tensor{f}},
		{"uniform block", uniformSPV, []*tensor.Tensor{f, g}},
		{"binding gap", gapSPV, []*tensor.Tensor{f, g}},
		{"binding gap, three tensors", gapSPV, []*tensor.Tensor{f, g, f}},
		{"binding count mismatch", specSPV, []*tensor.Tensor{f}},
		{"no tensors", specSPV, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			algo, err := algorithm.New(m, tt.code, tt.ts)
			assert.Nil(t, algo)
			assert.ErrorIs(t, err, vkflow.ErrInvalid)
		})
	}
	// The shader files are fine otherwise.
	require.Equal(t, uint32(0x07230203), binary.LittleEndian.Uint32(specSPV))
	assert.Zero(t, live(m, core.KindAlgorithm), "failed constructors register nothing")
	_, err := algorithm.New(nil, specSPV, []*tensor.Tensor{f, g})
	assert.ErrorIs(t, err, vkflow.ErrInvalid, "nil owner")
	var nilMgr *vkflow.Manager
	_, err = algorithm.New(nilMgr, specSPV, []*tensor.Tensor{f, g})
	assert.Error(t, err, "nil *Manager")
}

// Many algorithms from the same and different SPIR-V share the device's
// pipeline cache; they run together in one sequence and close in any order.
func TestManyAlgorithms(t *testing.T) {
	m, _ := testutil.Manager(t)
	ctx := context.Background()
	rt := m.Runtime()
	require.NotZero(t, rt.Cache)
	const n, count = 300, 24
	av := inputs(n)
	a := newTensor(t, m, av)
	type inst struct {
		algo  *algorithm.Algorithm
		out   *tensor.Tensor
		want  []float32
		local uint32
	}
	var all []inst
	for i := range count {
		out := newTensor(t, m, filled(n, sentinel))
		var in inst
		switch i % 3 {
		case 0, 1: // same module, different constants: different pipelines
			local := uint32(1) << (i % 8)
			scale, offset := float32(i%5)-2, uint32(i)
			algo, err := algorithm.New(m, specSPV, []*tensor.Tensor{a, out},
				algorithm.Spec(0, local), algorithm.Spec(1, scale), algorithm.Spec(2, offset))
			require.NoError(t, err)
			in = inst{algo, out, wantSpec(av, scale, offset, n, 0), local}
		case 2:
			algo, err := kernels.Add(m, a, a, out)
			require.NoError(t, err)
			want := make([]float32, n)
			for k := range want {
				want[k] = av[k] + av[k]
			}
			in = inst{algo, out, want, 256}
		}
		assert.Equal(t, [3]uint32{in.local, 1, 1}, in.algo.LocalSize())
		all = append(all, in)
	}
	assert.Equal(t, count, live(m, core.KindAlgorithm))
	data, err := rt.VK.PipelineCacheData(rt.Cache)
	require.NoError(t, err)
	// VkPipelineCacheHeaderVersionOne: length 32, version 1, vendor,
	// device, the device's pipeline cache UUID.
	require.GreaterOrEqual(t, len(data), 32, "the cache has at least its header")
	assert.Equal(t, uint32(32), binary.LittleEndian.Uint32(data))
	assert.Equal(t, uint32(1), binary.LittleEndian.Uint32(data[4:]))

	seq, err := sequence.New(m, 0)
	require.NoError(t, err)
	for _, in := range all {
		seq.Dispatch(in.algo).SyncLocal(in.out)
	}
	require.NoError(t, seq.Eval(ctx))
	for i, in := range all {
		equal(t, in.want, floats(t, in.out), "algorithm %d", i)
	}
	require.NoError(t, seq.Close())

	// Close in a shuffled order, running the rest after each close.
	rng := rand.New(rand.NewPCG(1, 2))
	rng.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	for len(all) > 0 {
		require.NoError(t, all[0].algo.Close())
		require.NoError(t, all[0].out.Close())
		all = all[1:]
		if len(all)%6 != 0 {
			continue
		}
		seq, err := sequence.New(m, 0)
		require.NoError(t, err)
		for _, in := range all {
			require.NoError(t, tensor.Write(in.out, filled(n, sentinel)))
			seq.Dispatch(in.algo).SyncLocal(in.out)
		}
		require.NoError(t, seq.Eval(ctx))
		for _, in := range all {
			equal(t, in.want, floats(t, in.out))
		}
		require.NoError(t, seq.Close())
	}
	assert.Zero(t, live(m, core.KindAlgorithm))
	require.NoError(t, a.Close())
}

// More dispatches of one algorithm in one recording than one descriptor
// pool holds; sets are reused after Clear.
func TestManyDispatches(t *testing.T) {
	m, _ := testutil.Manager(t)
	ctx := context.Background()
	x := newTensor(t, m, []float32{1, 2, 3, 4, 5, 6, 7})
	y := newTensor(t, m, make([]float32, 7))
	saxpy, err := kernels.Saxpy(m, x, y)
	require.NoError(t, err)
	seq, err := sequence.New(m, 0)
	require.NoError(t, err)
	for round := range 3 {
		const k = 150
		for range k {
			seq.Dispatch(saxpy, float32(1))
		}
		require.NoError(t, seq.SyncLocal(y).Eval(ctx))
		got := floats(t, y)
		for i, v := range got {
			require.Equal(t, float32((round+1)*k*(i+1)), v, "y[%d] after round %d", i, round)
		}
		require.NoError(t, seq.Clear())
	}
	closeAll(t, seq, saxpy, x, y)
}

// Algorithm methods are safe for concurrent use: goroutines record and
// submit dispatches while another re-binds between two equivalent pairs.
func TestConcurrentBindAndDispatch(t *testing.T) {
	m, _ := testutil.Manager(t)
	ctx := context.Background()
	const n = 256
	av := inputs(n)
	a1, a2 := newTensor(t, m, av), newTensor(t, m, av)
	o1, o2 := newTensor(t, m, make([]float32, n)), newTensor(t, m, make([]float32, n))
	algo, err := algorithm.New(m, specSPV, []*tensor.Tensor{a1, o1},
		algorithm.Spec(0, uint32(64)), algorithm.Spec(1, float32(3)), algorithm.Spec(2, uint32(5)))
	require.NoError(t, err)

	var wg sync.WaitGroup
	errc := make(chan error, 16)
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			var err error
			if i%2 == 0 {
				err = algo.Bind(a2, o2)
			} else {
				err = algo.Bind(a1, o1)
			}
			if err != nil {
				errc <- err
				return
			}
			_ = algo.Workgroups()
			_ = algo.Tensors()
		}
	}()
	var workers sync.WaitGroup
	for range 4 {
		workers.Add(1)
		go func() {
			defer workers.Done()
			seq, err := sequence.New(m, 0)
			if err != nil {
				errc <- err
				return
			}
			defer seq.Close()
			for range 20 {
				if err := seq.Clear(); err != nil {
					errc <- err
					return
				}
				if err := seq.Dispatch(algo).Dispatch(algo).Eval(ctx); err != nil {
					errc <- err
					return
				}
			}
		}()
	}
	workers.Wait()
	close(stop)
	wg.Wait()
	close(errc)
	for err := range errc {
		require.NoError(t, err)
	}
	require.NoError(t, algo.Bind(a1, o1))
	seq, err := sequence.New(m, 0)
	require.NoError(t, err)
	require.NoError(t, seq.Dispatch(algo).Dispatch(mustBound(t, algo, a2, o2)).SyncLocal(o1, o2).Eval(ctx))
	want := wantSpec(av, 3, 5, n, 0)
	equal(t, want, floats(t, o1))
	equal(t, want, floats(t, o2))
	closeAll(t, seq, algo, a1, a2, o1, o2)
}

func mustBound(t *testing.T, a *algorithm.Algorithm, ts ...*tensor.Tensor) *algorithm.Algorithm {
	t.Helper()
	require.NoError(t, a.Bind(ts...))
	return a
}

// Manager.Close closes every algorithm; using one afterwards is ErrClosed.
func TestManagerCloseClosesAlgorithms(t *testing.T) {
	m, _ := testutil.Manager(t)
	av := inputs(100)
	a := newTensor(t, m, av)
	o := newTensor(t, m, filled(100, sentinel))
	algos := make([]*algorithm.Algorithm, 5)
	var err error
	for i := range algos {
		algos[i], err = algorithm.New(m, specSPV, []*tensor.Tensor{a, o}, algorithm.Spec(2, uint32(i)))
		require.NoError(t, err)
	}
	require.NoError(t, algos[1].Close(), "one closed before the Manager")
	seq, err := sequence.New(m, 0)
	require.NoError(t, err)
	seq.Dispatch(algos[4]).SyncLocal(o)
	require.NoError(t, seq.Eval(context.Background()))
	equal(t, wantSpec(av, 1, 4, 100, 0), floats(t, o))
	assert.Equal(t, 4, live(m, core.KindAlgorithm))

	require.NoError(t, m.Close())
	for i, algo := range algos {
		assert.ErrorIs(t, algo.Bind(a, o), vkflow.ErrClosed, "algorithm %d", i)
		_, _, err := algo.Snapshot()
		assert.ErrorIs(t, err, vkflow.ErrClosed, "algorithm %d", i)
		assert.NoError(t, algo.Close(), "Close after the Manager's is a no-op")
		assert.Equal(t, [3]uint32{1, 1, 1}, algo.LocalSize())
	}
	_, err = algorithm.New(m, specSPV, []*tensor.Tensor{a, o})
	assert.ErrorIs(t, err, vkflow.ErrClosed)
	assert.True(t, errors.Is(seq.Eval(context.Background()), vkflow.ErrClosed))
}
