package opcore_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/ops"
	"github.com/vkflow/vkflow/tensor"
)

// References mirror NumPy 1.24's bitwise and shift loops (checked once by
// hand against numpy.left_shift and numpy.right_shift on every dtype):
// a shift count is compared with the width as unsigned, so one at or past
// the width, or negative, gives 0, or -1 for a right shift of a negative
// signed value.

// bitsOf is dt's width in bits.
func bitsOf(dt tensor.Dtype) uint64 { return uint64(dt.Size()) * 8 }

func lshift(dt tensor.Dtype, a, b int64) int64 {
	if uint64(b) >= bitsOf(dt) {
		return 0
	}
	return a << uint64(b)
}

func rshift(dt tensor.Dtype, a, b int64) int64 {
	switch {
	case uint64(b) >= bitsOf(dt) && a < 0 && !isUnsignedDt(dt):
		return -1
	case uint64(b) >= bitsOf(dt):
		return 0
	case dt == tensor.Uint64:
		return int64(uint64(a) >> uint64(b))
	}
	return a >> uint64(b)
}

// maskedShift is what x86 does with a count past the width (it masks
// the count): the mutation the shift tests must catch.
func maskedShift(dt tensor.Dtype, a, b int64) int64 {
	return a << (uint64(b) & (bitsOf(dt) - 1))
}

type intBinOp struct {
	name string
	fn   binFn
	g    func(dt tensor.Dtype, a, b int64) int64
}

var bitOps = []intBinOp{
	{"bitwise_and", ops.BitwiseAnd, func(_ tensor.Dtype, a, b int64) int64 { return a & b }},
	{"bitwise_or", ops.BitwiseOr, func(_ tensor.Dtype, a, b int64) int64 { return a | b }},
	{"bitwise_xor", ops.BitwiseXor, func(_ tensor.Dtype, a, b int64) int64 { return a ^ b }},
}

var shiftOps = []intBinOp{
	{"bitwise_left_shift", ops.BitwiseLeftShift, lshift},
	{"bitwise_right_shift", ops.BitwiseRightShift, rshift},
}

var logicalOps = []intBinOp{
	{"logical_and", ops.LogicalAnd, func(_ tensor.Dtype, a, b int64) int64 { return a & b }},
	{"logical_or", ops.LogicalOr, func(_ tensor.Dtype, a, b int64) int64 { return a | b }},
	{"logical_xor", ops.LogicalXor, func(_ tensor.Dtype, a, b int64) int64 { return a ^ b }},
}

// invertRef is NumPy's invert: ~x, logical not for bool.
func invertRef(dt tensor.Dtype, x int64) int64 {
	if dt == tensor.Bool {
		return 1 - x
	}
	return ^x
}

func intDtypes() []tensor.Dtype {
	var dts []tensor.Dtype
	for _, dt := range tensor.Dtypes() {
		if !isFloatDt(dt) && dt != tensor.Bool {
			dts = append(dts, dt)
		}
	}
	return dts
}

// intOperand makes n random values of dt; bools are 0 or 1 evenly.
func intOperand(r *rand.Rand, dt tensor.Dtype, shape []int) arr {
	if dt != tensor.Bool {
		return random(r, dt, shape, 0)
	}
	v := make([]int64, numelOf(shape))
	for i := range v {
		v[i] = int64(r.IntN(2))
	}
	return ints(dt, shape, v...)
}

// cross returns every pair (x, y), x from xs and y from ys, as two flat
// arrays.
func cross(xs, ys arr) (arr, arr) {
	a, b := arr{dt: xs.dt}, arr{dt: ys.dt}
	for _, x := range xs.i {
		for _, y := range ys.i {
			a.i, b.i = append(a.i, x), append(b.i, y)
		}
	}
	a.shape, b.shape = []int{len(a.i)}, []int{len(b.i)}
	return a, b
}

func checkIntBinary(t *testing.T, m *vkflow.Manager, op intBinOp, a0, a1 arr) {
	t.Helper()
	want := ref(0, nil, func(v ...int64) int64 { return op.g(a0.dt, v[0], v[1]) }, a0, a1)
	if op.name[:8] == "logical_" {
		want.dt = tensor.Bool
	}
	o, err := op.fn(m, a0.upload(t, m), a1.upload(t, m), nil)
	got := run(t, o, err)
	closeOut(t, o)
	sameBits(t, want, got, fmt.Sprintf("%s %v %v x %v", op.name, a0.dt, a0.shape, a1.shape))
}

// elementwiseShapes are the shape pairs each op runs on: flat (odd, and a
// multiple of 4 for the vec4 kernels), broadcast (strided, strided vec4),
// 0-d and empty.
var elementwiseShapes = [][2][]int{
	{{1023}, {1023}}, {{4096}, {4096}}, {{3, 1}, {1, 4}}, {{2, 3, 4}, {4}}, {{6, 8}, {8}},
	{{}, {5}}, {{5}, {}}, {{}, {}}, {{0, 3}, {3}}, {{2, 0}, {}},
}

func TestBitwiseAndOrXor(t *testing.T) {
	m, _ := testutil.Manager(t)
	r := rand.New(rand.NewPCG(6, 1))
	for _, op := range bitOps {
		for _, dt := range append(intDtypes(), tensor.Bool) {
			t.Run(fmt.Sprintf("%s/%v", op.name, dt), func(t *testing.T) {
				for _, s := range elementwiseShapes {
					checkIntBinary(t, m, op, intOperand(r, dt, s[0]), intOperand(r, dt, s[1]))
				}
			})
		}
	}
}

func TestBitwiseInvert(t *testing.T) {
	m, _ := testutil.Manager(t)
	r := rand.New(rand.NewPCG(6, 2))
	for _, dt := range append(intDtypes(), tensor.Bool) {
		t.Run(dt.String(), func(t *testing.T) {
			lo, hi := intLimits(dt)
			edge := ints(dt, []int{6}, lo, hi, 0, -1, 1, 5)
			if dt == tensor.Bool {
				edge = ints(dt, []int{2}, 0, 1)
			}
			for _, x := range []arr{edge, intOperand(r, dt, []int{1023}), intOperand(r, dt, []int{4096}),
				intOperand(r, dt, []int{}), intOperand(r, dt, []int{0, 2})} {
				want := ref(0, nil, func(v ...int64) int64 { return invertRef(dt, v[0]) }, x)
				o, err := ops.BitwiseInvert(m, x.upload(t, m), nil)
				got := run(t, o, err)
				closeOut(t, o)
				sameBits(t, want, got, fmt.Sprintf("bitwise_invert %v %v", dt, x.shape))
			}
		})
	}
}

// shiftOperands are values and counts, every pair of which is tested:
// the extremes, -1, counts just below, at and past the width, negative.
func shiftOperands(dt tensor.Dtype) (arr, arr) {
	lo, hi := intLimits(dt)
	w := int64(bitsOf(dt))
	x := ints(dt, []int{9}, lo, lo+1, -8, -1, 0, 1, 5, hi-1, hi)
	c := ints(dt, []int{12}, 0, 1, 3, w-1, w, w+1, 2*w, 100, -1, -w, lo, hi)
	return cross(x, c)
}

func TestBitwiseShifts(t *testing.T) {
	m, _ := testutil.Manager(t)
	r := rand.New(rand.NewPCG(6, 3))
	for _, op := range shiftOps {
		for _, dt := range intDtypes() {
			t.Run(fmt.Sprintf("%s/%v", op.name, dt), func(t *testing.T) {
				a0, a1 := shiftOperands(dt)
				checkIntBinary(t, m, op, a0, a1)
				for _, s := range elementwiseShapes {
					a0, a1 := intOperand(r, dt, s[0]), intOperand(r, dt, s[1])
					for i := range a1.i { // mostly counts around the width
						if i%4 != 3 {
							a1.i[i] = wrapTo(dt, int64(r.IntN(int(bitsOf(dt))+9))-3)
						}
					}
					checkIntBinary(t, m, op, a0, a1)
				}
			})
		}
	}
}

// A mutation check: a reference that masks the count, as x86 shifts do,
// differs from the kernel's results for counts at or past the width.
func TestBitwiseShiftNotMasked(t *testing.T) {
	m, _ := testutil.Manager(t)
	a := ints(tensor.Int32, []int{4}, 1, 1, 1, 3)
	b := ints(tensor.Int32, []int{4}, 31, 32, 33, -1)
	o, err := ops.BitwiseLeftShift(m, a.upload(t, m), b.upload(t, m), nil)
	got := run(t, o, err)
	closeOut(t, o)
	sameBits(t, ints(tensor.Int32, []int{4}, -1<<31, 0, 0, 0), got, "left shift")
	masked := ref(0, nil, func(v ...int64) int64 { return maskedShift(tensor.Int32, v[0], v[1]) }, a, b)
	assert.Equal(t, 3, mismatches(masked, got), "a masked count must differ past the width")
}

func TestLogical(t *testing.T) {
	m, _ := testutil.Manager(t)
	r := rand.New(rand.NewPCG(6, 4))
	for _, op := range logicalOps {
		t.Run(op.name, func(t *testing.T) {
			a0, a1 := cross(ints(tensor.Bool, []int{2}, 0, 1), ints(tensor.Bool, []int{2}, 0, 1))
			checkIntBinary(t, m, op, a0, a1)
			for _, s := range elementwiseShapes {
				checkIntBinary(t, m, op, intOperand(r, tensor.Bool, s[0]), intOperand(r, tensor.Bool, s[1]))
			}
		})
	}
	t.Run("logical_not", func(t *testing.T) {
		for _, shape := range [][]int{{2}, {1023}, {}, {0}} {
			x := intOperand(r, tensor.Bool, shape)
			if len(shape) == 1 && shape[0] == 2 {
				x = ints(tensor.Bool, shape, 0, 1)
			}
			o, err := ops.LogicalNot(m, x.upload(t, m), nil)
			got := run(t, o, err)
			closeOut(t, o)
			sameBits(t, ref(0, nil, func(v ...int64) int64 { return 1 - v[0] }, x), got, fmt.Sprint("logical_not ", shape))
		}
	})
}

// Dtypes an op does not take are ErrInvalid naming the dtype.
func TestBitwiseLogicalErrors(t *testing.T) {
	m, _ := testutil.Manager(t)
	i3 := ints(tensor.Int32, []int{3}, 1, 2, 3).upload(t, m)
	u8 := ints(tensor.Uint8, []int{3}, 1, 2, 3).upload(t, m)
	f3 := floats(tensor.Float32, []int{3}, 1, 2, 3).upload(t, m)
	bl := ints(tensor.Bool, []int{3}, 1, 0, 1).upload(t, m)
	for _, tc := range []struct {
		name string
		f    func() (*ops.Op, error)
		msgs []string
	}{
		{"logical_and int32", func() (*ops.Op, error) { return ops.LogicalAnd(m, i3, i3, nil) }, []string{"int32", "cast to bool first"}},
		{"logical_or float32", func() (*ops.Op, error) { return ops.LogicalOr(m, f3, f3, nil) }, []string{"float32", "cast to bool first"}},
		{"logical_xor uint8", func() (*ops.Op, error) { return ops.LogicalXor(m, u8, u8, nil) }, []string{"uint8", "cast to bool first"}},
		{"logical_not int32", func() (*ops.Op, error) { return ops.LogicalNot(m, i3, nil) }, []string{"int32", "cast to bool first"}},
		{"logical_and mixed", func() (*ops.Op, error) { return ops.LogicalAnd(m, bl, i3, nil) }, []string{"bool and int32"}},
		{"bitwise_and float32", func() (*ops.Op, error) { return ops.BitwiseAnd(m, f3, f3, nil) }, []string{"dtype float32"}},
		{"bitwise_invert float32", func() (*ops.Op, error) { return ops.BitwiseInvert(m, f3, nil) }, []string{"dtype float32"}},
		{"left shift bool", func() (*ops.Op, error) { return ops.BitwiseLeftShift(m, bl, bl, nil) }, []string{"dtype bool"}},
		{"right shift float32", func() (*ops.Op, error) { return ops.BitwiseRightShift(m, f3, f3, nil) }, []string{"dtype float32"}},
		{"shift count dtype", func() (*ops.Op, error) { return ops.BitwiseLeftShift(m, i3, f3, nil) }, []string{"int32 and float32", "no promotion"}},
		{"registry inputs", func() (*ops.Op, error) {
			return ops.Prepare(m, "logical_not", []*tensor.Tensor{bl, bl}, nil, ops.Attrs{})
		}, []string{"2 inputs, want 1"}},
		{"fuse", func() (*ops.Op, error) {
			return ops.Fuse(m, ops.Apply("logical_and", ops.Input(i3), ops.Input(i3)), nil)
		},
			[]string{"int32", "cast to bool first"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			op, err := tc.f()
			require.ErrorIs(t, err, vkflow.ErrInvalid)
			assert.Nil(t, op)
			for _, msg := range tc.msgs {
				assert.Contains(t, err.Error(), msg)
			}
		})
	}
}

// Every new op is reached by name through the registry, as C and Python
// call it, and gives the typed function's result.
func TestBitwiseIntDivRegistry(t *testing.T) {
	m, _ := testutil.Manager(t)
	i := ints(tensor.Int16, []int{4}, -7, 7, -32768, 5)
	j := ints(tensor.Int16, []int{4}, 2, -2, -1, 17)
	bl := ints(tensor.Bool, []int{4}, 0, 1, 1, 0)
	bm := ints(tensor.Bool, []int{4}, 0, 0, 1, 1)
	for _, tc := range []struct {
		name string
		in   []arr
		want arr
	}{
		{"floor_divide", []arr{i, j}, ints(tensor.Int16, []int{4}, -4, -4, -32768, 0)},
		{"remainder", []arr{i, j}, ints(tensor.Int16, []int{4}, 1, -1, 0, 5)},
		{"bitwise_and", []arr{i, j}, ints(tensor.Int16, []int{4}, -7&2, 7&-2, -32768, 5&17)},
		{"bitwise_or", []arr{i, j}, ints(tensor.Int16, []int{4}, -7|2, 7|-2, -1, 5|17)},
		{"bitwise_xor", []arr{i, j}, ints(tensor.Int16, []int{4}, -7^2, 7^-2, 32767, 5^17)},
		{"bitwise_invert", []arr{i}, ints(tensor.Int16, []int{4}, 6, -8, 32767, -6)},
		{"bitwise_left_shift", []arr{i, j}, ints(tensor.Int16, []int{4}, -28, 0, 0, 0)},
		{"bitwise_right_shift", []arr{i, j}, ints(tensor.Int16, []int{4}, -2, 0, -1, 0)},
		{"logical_and", []arr{bl, bm}, ints(tensor.Bool, []int{4}, 0, 0, 1, 0)},
		{"logical_or", []arr{bl, bm}, ints(tensor.Bool, []int{4}, 0, 1, 1, 1)},
		{"logical_xor", []arr{bl, bm}, ints(tensor.Bool, []int{4}, 0, 1, 0, 1)},
		{"logical_not", []arr{bl}, ints(tensor.Bool, []int{4}, 1, 0, 0, 1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Contains(t, ops.Names(), tc.name)
			var in []*tensor.Tensor
			for _, a := range tc.in {
				in = append(in, a.upload(t, m))
			}
			outs, err := ops.Call(context.Background(), m, tc.name, in, nil, ops.Attrs{})
			require.NoError(t, err)
			require.Len(t, outs, 1)
			t.Cleanup(func() { _ = outs[0].Close() })
			sameBits(t, tc.want, download(t, outs[0]), tc.name)
		})
	}
}

// Shifts and bitwise ops fuse; each step wraps to uint8 as the unfused op
// stores it ((a << b) keeps 8 bits before the and).
func TestBitwiseFuse(t *testing.T) {
	m, _ := testutil.Manager(t)
	r := rand.New(rand.NewPCG(6, 5))
	a, b, c := intOperand(r, tensor.Uint8, []int{300}), intOperand(r, tensor.Uint8, []int{300}), intOperand(r, tensor.Uint8, []int{})
	for i := range b.i {
		b.i[i] %= 12
	}
	e := ops.Apply("bitwise_invert", ops.Apply("bitwise_xor",
		ops.Apply("bitwise_right_shift", ops.Apply("bitwise_left_shift", ops.Input(a.upload(t, m)), ops.Input(b.upload(t, m))), ops.Scalar(1)),
		ops.Input(c.upload(t, m))))
	o, err := ops.Fuse(m, e, nil)
	got := run(t, o, err)
	closeOut(t, o)
	want := ref(0, nil, func(v ...int64) int64 {
		s := wrapTo(tensor.Uint8, lshift(tensor.Uint8, v[0], v[1]))
		return ^(rshift(tensor.Uint8, s, 1) ^ v[2])
	}, a, b, c)
	sameBits(t, want, got, "fused")
}
