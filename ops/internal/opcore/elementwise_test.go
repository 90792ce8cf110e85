package opcore_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/ops"
	"github.com/vkflow/vkflow/tensor"
)

// Tolerances (ULPs of the output dtype) against a float64 reference
// rounded to the dtype:
//   - float32 and float64: + - * / minimum maximum exact (0); pow 1
//     (float64 against exp(y*log x) in big.Float: math.Pow is off by up
//     to 20 ULPs);
//   - float16: 1 (the op computes in float32 and rounds once; the
//     reference rounds float64 through float32 to float16, which may be
//     one float16 ULP off the correctly rounded value);
//   - integers and bools: bit-exact.
const (
	tolExact = 0
	tolPow   = 1
	tolHalf  = 1
)

type binFn func(o ops.Owner, a, b, out *tensor.Tensor) (*ops.Op, error)

// binOp is a binary op and its references.
type binOp struct {
	name string
	fn   binFn
	f    func(x, y float64) float64 // floats
	g    func(dt tensor.Dtype, x, y int64) int64
	tol  float64 // float32 and float64 tolerance
}

func ltInt(dt tensor.Dtype, x, y int64) bool {
	if dt == tensor.Uint64 {
		return uint64(x) < uint64(y)
	}
	return x < y
}

// ipow is Pow's documented integer semantics.
func ipow(dt tensor.Dtype, b, e int64) int64 {
	if e < 0 && dt != tensor.Uint64 {
		switch b {
		case 1:
			return 1
		case -1:
			if e&1 != 0 {
				return -1
			}
			return 1
		}
		return 0
	}
	r := int64(1)
	for u := uint64(e); u != 0; u >>= 1 {
		if u&1 != 0 {
			r *= b
		}
		b *= b
	}
	return r
}

var binOps = []binOp{
	{"add", ops.Add, func(x, y float64) float64 { return x + y }, func(_ tensor.Dtype, x, y int64) int64 { return x + y }, tolExact},
	{"sub", ops.Sub, func(x, y float64) float64 { return x - y }, func(_ tensor.Dtype, x, y int64) int64 { return x - y }, tolExact},
	{"mul", ops.Mul, func(x, y float64) float64 { return x * y }, func(_ tensor.Dtype, x, y int64) int64 { return x * y }, tolExact},
	{"div", ops.Div, func(x, y float64) float64 { return x / y }, nil, tolExact},
	{"pow", ops.Pow, math.Pow, ipow, tolPow},
	{"minimum", ops.Minimum, math.Min, func(dt tensor.Dtype, x, y int64) int64 {
		if ltInt(dt, y, x) {
			return y
		}
		return x
	}, tolExact},
	{"maximum", ops.Maximum, math.Max, func(dt tensor.Dtype, x, y int64) int64 {
		if ltInt(dt, x, y) {
			return y
		}
		return x
	}, tolExact},
}

func binOpNamed(name string) binOp {
	for _, b := range binOps {
		if b.name == name {
			return b
		}
	}
	panic(name)
}

// operands makes test inputs for op over dt: random values with NaN,
// ±Inf and signed zeros among the floats; pow gets small bases and
// exponents (integral ones too, for negative bases).
func operands(r *rand.Rand, op string, dt tensor.Dtype, sa, sb []int) (arr, arr) {
	lim := 100.0
	if op == "pow" {
		lim = 4
	}
	a, b := random(r, dt, sa, lim), random(r, dt, sb, lim)
	if isFloatDt(dt) {
		specials := []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1), 1, -1, 2.5}
		for i := range b.f {
			if op == "pow" && i%3 == 0 {
				b.f[i] = math.Round(b.f[i] * 2) // integral exponents for negative bases
			}
		}
		for i, s := range specials {
			if i < len(a.f) && len(a.f) > 16 {
				a.f[i*3] = s
				b.f[(i*5+1)%len(b.f)] = s
			}
		}
		if len(a.f) > 64 && len(b.f) > 64 {
			for i := 40; i < 64; i++ { // every pair of specials
				a.f[i] = specials[i%len(specials)]
				b.f[i] = specials[(i/len(specials))%len(specials)]
			}
		}
		return a, b
	}
	if op == "pow" {
		for i := range a.i {
			a.i[i] = wrapTo(dt, int64(r.IntN(21))-10)
		}
		for i := range b.i {
			b.i[i] = wrapTo(dt, int64(r.IntN(75))-3)
		}
	}
	return a, b
}

// run runs op (built with err), and returns its output, read back. Ops
// and allocated outputs are closed when the test ends.
func run(t *testing.T, op *ops.Op, err error) arr {
	t.Helper()
	require.NoError(t, err)
	t.Cleanup(func() {
		assert.NoError(t, op.Close())
	})
	require.NoError(t, op.Run(context.Background()))
	return download(t, op.Out())
}

// closeOut closes an output an op allocated, at the end of the test.
func closeOut(t *testing.T, op *ops.Op) {
	t.Cleanup(func() { _ = op.Out().Close() })
}

func tolFor(dt tensor.Dtype, tol float64) float64 {
	if dt == tensor.Float16 {
		return tolHalf
	}
	return tol
}

func checkBinary(t *testing.T, m *vkflow.Manager, b binOp, a0, a1 arr) {
	t.Helper()
	f := b.f
	if b.name == "pow" && a0.dt == tensor.Float64 {
		f = powRef // math.Pow is not within an ULP of float64
	}
	want := ref(0, func(v ...float64) float64 { return f(v[0], v[1]) }, func(v ...int64) int64 { return b.g(a0.dt, v[0], v[1]) }, a0, a1)
	op, err := b.fn(m, a0.upload(t, m), a1.upload(t, m), nil)
	got := run(t, op, err)
	closeOut(t, op)
	same(t, want, got, tolFor(a0.dt, b.tol), fmt.Sprintf("%s %v %v x %v", b.name, a0.dt, a0.shape, a1.shape))
}

func TestBinaryFloat32(t *testing.T) {
	m, _ := testutil.Manager(t)
	r := rand.New(rand.NewPCG(1, 1))
	for _, b := range binOps {
		t.Run(b.name, func(t *testing.T) {
			// Flat (1, 3, 1023, 4097) and vec4 (4096) kernels, then
			// broadcasting.
			for _, n := range []int{1, 3, 1023, 4096, 4097} {
				a0, a1 := operands(r, b.name, tensor.Float32, []int{n}, []int{n})
				checkBinary(t, m, b, a0, a1)
			}
			a0, a1 := operands(r, b.name, tensor.Float32, []int{3, 1}, []int{1, 4})
			checkBinary(t, m, b, a0, a1)
		})
	}
}

func TestBroadcastShapes(t *testing.T) {
	m, _ := testutil.Manager(t)
	r := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct{ a, b []int }{
		{[]int{3, 1}, []int{1, 4}},
		{[]int{2, 3, 4}, []int{4}},
		{[]int{4}, []int{2, 3, 4}},
		{[]int{}, []int{5}},
		{[]int{5}, []int{}},
		{[]int{}, []int{}},
		{[]int{1}, []int{}},
		{[]int{4, 1, 3}, []int{2, 1}},
		{[]int{2, 1, 3, 1, 2}, []int{1, 3, 1, 2, 1}},
		{[]int{3, 1024}, []int{3, 1}}, // strided vec4, b constant along rows
		{[]int{6, 8}, []int{8}},       // strided vec4, b a row
		{[]int{2, 3, 8}, []int{2, 1, 8}},
		{[]int{4, 1}, []int{1, 8}},
		{[]int{1, 1, 1}, []int{7}}, // flat after dropping 1s
		{[]int{1025, 3}, []int{3}},
	} {
		t.Run(fmt.Sprintf("%vx%v", tc.a, tc.b), func(t *testing.T) {
			a0, a1 := operands(r, "add", tensor.Float32, tc.a, tc.b)
			checkBinary(t, m, binOpNamed("add"), a0, a1)
		})
	}
	// The same kernel serves every shape of a rank (specialization
	// constants); a rank-8 shape after merging works; integers take the
	// strided vec4 kernel too.
	a0, a1 := operands(r, "sub", tensor.Int32, []int{2, 1, 2, 1, 2, 1, 2, 1}, []int{1, 2, 1, 2, 1, 2, 1, 2})
	checkBinary(t, m, binOpNamed("sub"), a0, a1)
	a0, a1 = operands(r, "sub", tensor.Uint32, []int{5, 12}, []int{5, 1})
	checkBinary(t, m, binOpNamed("sub"), a0, a1)
}

func TestBinaryDtypes(t *testing.T) {
	m, _ := testutil.Manager(t)
	r := rand.New(rand.NewPCG(1, 3))
	for _, dt := range tensor.Dtypes() {
		if dt == tensor.Bool {
			continue
		}
		t.Run(dt.String(), func(t *testing.T) {
			// add: every numeric dtype; broadcast for a few.
			a0, a1 := operands(r, "add", dt, []int{1023}, []int{1023})
			checkBinary(t, m, binOpNamed("add"), a0, a1)
			if dt == tensor.Int8 || dt == tensor.Float16 || dt == tensor.Uint64 {
				a0, a1 = operands(r, "add", dt, []int{3, 1}, []int{1, 4})
				checkBinary(t, m, binOpNamed("add"), a0, a1)
			}
		})
	}
	// The other ops on a representative subset.
	for _, tc := range []struct {
		dt  tensor.Dtype
		ops []string
	}{
		{tensor.Int8, []string{"mul", "pow", "minimum"}},
		{tensor.Uint16, []string{"sub", "maximum"}},
		{tensor.Int32, []string{"mul", "pow"}},
		{tensor.Int64, []string{"sub", "pow", "minimum"}},
		{tensor.Uint64, []string{"mul", "pow", "maximum"}},
		{tensor.Float16, []string{"div", "pow", "minimum"}},
		{tensor.Float64, []string{"div", "pow", "maximum"}},
	} {
		for _, name := range tc.ops {
			t.Run(fmt.Sprintf("%s/%v", name, tc.dt), func(t *testing.T) {
				a0, a1 := operands(r, name, tc.dt, []int{4096}, []int{4096})
				checkBinary(t, m, binOpNamed(name), a0, a1)
			})
		}
	}
}

// cmpOps are the comparisons and their references (false with NaN,
// except not_equal).
var cmpOps = []struct {
	name string
	fn   binFn
	f    func(x, y float64) bool
}{
	{"equal", ops.Equal, func(x, y float64) bool { return x == y }},
	{"not_equal", ops.NotEqual, func(x, y float64) bool { return x != y }},
	{"less", ops.Less, func(x, y float64) bool { return x < y }},
	{"less_equal", ops.LessEqual, func(x, y float64) bool { return x <= y }},
	{"greater", ops.Greater, func(x, y float64) bool { return x > y }},
	{"greater_equal", ops.GreaterEqual, func(x, y float64) bool { return x >= y }},
}

// cmpInt compares integers of dt (uint64 as unsigned) as f compares
// floats.
func cmpInt(dt tensor.Dtype, f func(x, y float64) bool, x, y int64) bool {
	switch {
	case x == y:
		return f(0, 0)
	case ltInt(dt, x, y):
		return f(0, 1)
	}
	return f(1, 0)
}

func TestCompare(t *testing.T) {
	m, _ := testutil.Manager(t)
	r := rand.New(rand.NewPCG(1, 4))
	b2i := func(b bool) int64 {
		if b {
			return 1
		}
		return 0
	}
	check := func(t *testing.T, name string, fn binFn, f func(x, y float64) bool, a0, a1 arr) {
		t.Helper()
		want := ref(tensor.Bool, func(v ...float64) float64 { return float64(b2i(f(v[0], v[1]))) },
			func(v ...int64) int64 { return b2i(cmpInt(a0.dt, f, v[0], v[1])) }, a0, a1)
		op, err := fn(m, a0.upload(t, m), a1.upload(t, m), nil)
		got := run(t, op, err)
		closeOut(t, op)
		same(t, want, got, 0, fmt.Sprintf("%s %v %v x %v", name, a0.dt, a0.shape, a1.shape))
	}
	// Every comparison on float32 with NaN and ±Inf, flat and broadcast;
	// a few ties so that equality happens.
	for _, c := range cmpOps {
		t.Run(c.name, func(t *testing.T) {
			a0, a1 := operands(r, c.name, tensor.Float32, []int{1023}, []int{1023})
			for i := 100; i < 200; i++ {
				a1.f[i] = a0.f[i]
			}
			check(t, c.name, c.fn, c.f, a0, a1)
			a0, a1 = operands(r, c.name, tensor.Float32, []int{3, 1}, []int{})
			a1.f[0] = a0.f[1]
			check(t, c.name, c.fn, c.f, a0, a1)
		})
	}
	// Other dtypes, bool included; uint64 compares unsigned.
	for _, tc := range []struct {
		dt tensor.Dtype
		op int
	}{
		{tensor.Bool, 0}, {tensor.Bool, 1}, {tensor.Int8, 2}, {tensor.Uint64, 4}, {tensor.Int64, 5},
		{tensor.Float16, 3}, {tensor.Float64, 5}, {tensor.Uint32, 2},
	} {
		c := cmpOps[tc.op]
		t.Run(fmt.Sprintf("%s/%v", c.name, tc.dt), func(t *testing.T) {
			a0, a1 := operands(r, c.name, tc.dt, []int{257}, []int{257})
			if a0.f == nil {
				for i := 0; i < 50; i++ {
					a1.i[i] = a0.i[i]
				}
			}
			check(t, c.name, c.fn, c.f, a0, a1)
		})
	}
}

// More than 65535 workgroups: the grid goes 2-D (uint8 runs the scalar
// kernel, one invocation per element).
func TestElementwiseLargeGrid(t *testing.T) {
	m, _ := testutil.Manager(t)
	n := 65535*256 + 5
	a := make([]uint8, n)
	for i := range a {
		a[i] = uint8(i * 7)
	}
	x, err := tensor.FromSlice(m, a)
	require.NoError(t, err)
	t.Cleanup(func() { _ = x.Close() })
	one := ints(tensor.Uint8, []int{}, 3).upload(t, m)
	op, err := ops.Add(m, x, one, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = op.Close(); _ = op.Out().Close() })
	require.NoError(t, op.Run(context.Background()))
	got, err := op.Out().Uint8s()
	require.NoError(t, err)
	bad := 0
	for i, v := range got {
		if v != a[i]+3 {
			bad++
		}
	}
	require.Zero(t, bad, "elements wrong of %d", n)
}
