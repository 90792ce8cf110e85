package kernels_test

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/algorithm"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/kernels"
	"github.com/vkflow/vkflow/ops"
	"github.com/vkflow/vkflow/sequence"
	"github.com/vkflow/vkflow/tensor"
)

// The signatures of the old package: ternary is Multiply's, MultiplyScalar's
// and Add's.
type (
	ternary = func(kernels.Owner, *tensor.Tensor, *tensor.Tensor, *tensor.Tensor) (*algorithm.Algorithm, error)
	binary  = func(kernels.Owner, *tensor.Tensor, *tensor.Tensor) (*algorithm.Algorithm, error)
	logReg5 = func(kernels.Owner, *tensor.Tensor, *tensor.Tensor, *tensor.Tensor, *tensor.Tensor, *tensor.Tensor) (*kernels.LogReg, error)
)

// The old API, identifier for identifier and signature for signature:
// this file does not compile if one of them goes or changes.
var (
	_ ternary = kernels.Multiply
	_ ternary = kernels.MultiplyScalar
	_ ternary = kernels.Add
	_ binary  = kernels.Saxpy
	_ logReg5 = kernels.LogRegStep
	_ interface {
		Record(*sequence.Sequence, float32) *sequence.Sequence
		Groups() int
		Close() error
	} = (*kernels.LogReg)(nil)
	_ *ops.LogReg   = (*kernels.LogReg)(nil) // an alias, not a new type
	_ kernels.Owner = (*vkflow.Manager)(nil)
	_ int           = kernels.LogRegMaxFeatures
)

// result is what one entry point computed and what it should have: got
// within tol of want, relative to max(1, |want|); tol 0 is exact.
type result struct {
	got  []float32
	want []float64
	tol  float64
}

func floats(t *testing.T, x *tensor.Tensor) []float32 {
	t.Helper()
	v, err := x.Float32s()
	require.NoError(t, err)
	return append([]float32(nil), v...)
}

func newTensor(t *testing.T, m *vkflow.Manager, data []float32) *tensor.Tensor {
	t.Helper()
	x, err := tensor.FromSlice(m, data)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, x.Close()) })
	return x
}

// quarters returns n multiples of 1/4 in [-128, 128): products and sums of
// two of them, and alpha*x + y for alpha a multiple of 1/4, are exact in
// float32, fused or not.
func quarters(rng *rand.Rand, n int) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = float32(rng.IntN(1024)-512) / 4
	}
	return out
}

// eval records f's dispatches into a new sequence, evaluates it and reads
// out back.
func eval(t *testing.T, m *vkflow.Manager, out *tensor.Tensor, f func(*sequence.Sequence) *sequence.Sequence) []float32 {
	t.Helper()
	seq, err := sequence.New(m, 0)
	require.NoError(t, err)
	defer func() { assert.NoError(t, seq.Close()) }()
	require.NoError(t, f(seq).SyncLocal(out).Eval(context.Background()))
	return floats(t, out)
}

// elementwise runs ctor over two random tensors of n elements.
func elementwise(ctor ternary, op func(a, b float32) float32, n int) func(*testing.T, *vkflow.Manager) result {
	return func(t *testing.T, m *vkflow.Manager) result {
		rng := rand.New(rand.NewPCG(uint64(n), 1))
		av, bv := quarters(rng, n), quarters(rng, n)
		a, b := newTensor(t, m, av), newTensor(t, m, bv)
		out := newTensor(t, m, make([]float32, n))
		alg, err := ctor(m, a, b, out)
		require.NoError(t, err)
		defer func() { assert.NoError(t, alg.Close()) }()
		got := eval(t, m, out, func(s *sequence.Sequence) *sequence.Sequence { return s.Dispatch(alg) })
		want := make([]float64, n)
		for i := range want {
			want[i] = float64(op(av[i], bv[i]))
		}
		return result{got: got, want: want}
	}
}

// saxpy runs kernels.Saxpy over n elements, once per alpha.
func saxpy(n int, alphas ...float32) func(*testing.T, *vkflow.Manager) result {
	return func(t *testing.T, m *vkflow.Manager) result {
		rng := rand.New(rand.NewPCG(uint64(n), 2))
		xv, yv := quarters(rng, n), quarters(rng, n)
		x, y := newTensor(t, m, xv), newTensor(t, m, yv)
		alg, err := kernels.Saxpy(m, x, y)
		require.NoError(t, err)
		defer func() { assert.NoError(t, alg.Close()) }()
		got := eval(t, m, y, func(s *sequence.Sequence) *sequence.Sequence {
			for _, a := range alphas {
				s.Dispatch(alg, a)
			}
			return s
		})
		want := make([]float64, n)
		for i := range want {
			v := yv[i]
			for _, a := range alphas {
				v = a*xv[i] + v
			}
			want[i] = float64(v)
		}
		return result{got: got, want: want}
	}
}

// cpuLogRegStep is one gradient-descent step in float64: the new weights
// and bias, and the mean cross-entropy under the old ones, with p clamped
// to [1e-7, 1-1e-7] inside the logarithms only.
func cpuLogRegStep(x, y, w []float64, b float64, lr float64) (nw []float64, nb, loss float64) {
	m, d := len(y), len(w)
	gw := make([]float64, d)
	var gb float64
	for i := range m {
		z := b
		for k := range d {
			z += w[k] * x[i*d+k]
		}
		p := 1 / (1 + math.Exp(-z))
		diff := p - y[i]
		for k := range d {
			gw[k] += diff * x[i*d+k]
		}
		gb += diff
		pl := min(max(p, 1e-7), 1-1e-7)
		loss -= y[i]*math.Log(pl) + (1-y[i])*math.Log(1-pl)
	}
	nw = make([]float64, d)
	for k := range d {
		nw[k] = w[k] - lr*gw[k]/float64(m)
	}
	return nw, b - lr*gb/float64(m), loss / float64(m)
}

// logReg runs one kernels.LogRegStep step over n samples of d features
// and returns the new weights, bias and the loss, in that order.
func logReg(n, d int, lr float32) func(*testing.T, *vkflow.Manager) result {
	return func(t *testing.T, m *vkflow.Manager) result {
		rng := rand.New(rand.NewPCG(uint64(n), uint64(d)))
		xv, yv, wv := make([]float32, n*d), make([]float32, n), make([]float32, d)
		for i := range xv {
			xv[i] = rng.Float32()*3 - 1.5
		}
		for i := range yv {
			if rng.Float64() < 0.5 {
				yv[i] = 1
			}
		}
		for k := range wv {
			wv[k] = rng.Float32() - 0.5
		}
		const bias = 0.25
		x, y, w := newTensor(t, m, xv), newTensor(t, m, yv), newTensor(t, m, wv)
		b, loss := newTensor(t, m, []float32{bias}), newTensor(t, m, []float32{-1})
		// The packed result: w, then b, then loss.
		out := newTensor(t, m, make([]float32, d+2))
		step, err := kernels.LogRegStep(m, x, y, w, b, loss)
		require.NoError(t, err)
		defer func() { assert.NoError(t, step.Close()) }()
		assert.Positive(t, step.Groups())
		got := eval(t, m, out, func(s *sequence.Sequence) *sequence.Sequence {
			return step.Record(s, lr).
				Copy(w, out, sequence.Region{Src: 0, Dst: 0, Len: d}).
				Copy(b, out, sequence.Region{Src: 0, Dst: d, Len: 1}).
				Copy(loss, out, sequence.Region{Src: 0, Dst: d + 1, Len: 1})
		})
		f64 := func(v []float32) []float64 {
			out := make([]float64, len(v))
			for i := range v {
				out[i] = float64(v[i])
			}
			return out
		}
		nw, nb, l := cpuLogRegStep(f64(xv), f64(yv), f64(wv), bias, float64(lr))
		// float32 sums over a few thousand samples in trees: a relative
		// error of a few 1e-6 of the sum of magnitudes, plus a few ulps
		// from exp and log on the GPU.
		return result{got: got, want: append(nw, nb, l), tol: 1e-4}
	}
}

// Every entry point of the old package, run through the forwarding on a
// validated Manager, against the same computation on the CPU.
func TestForwarding(t *testing.T) {
	m, _ := testutil.Manager(t)
	mul := func(a, b float32) float32 { return a * b }
	add := func(a, b float32) float32 { return a + b }
	tests := []struct {
		name string
		run  func(*testing.T, *vkflow.Manager) result
	}{
		{"Multiply vec4", elementwise(kernels.Multiply, mul, 4096)},
		{"Multiply odd length", elementwise(kernels.Multiply, mul, 1001)},
		{"MultiplyScalar", elementwise(kernels.MultiplyScalar, mul, 4096)},
		{"Add vec4", elementwise(kernels.Add, add, 4100)},
		{"Add odd length", elementwise(kernels.Add, add, 3)},
		{"Saxpy", saxpy(4097, 2.5)},
		{"Saxpy twice", saxpy(129, 0.5, -3)},
		{"LogRegStep d=3", logReg(5000, 3, 0.5)},
		{"LogRegStep d=16", logReg(300, 16, 0.25)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.run(t, m)
			require.Len(t, r.got, len(r.want))
			for i, want := range r.want {
				got := float64(r.got[i])
				if math.Abs(got-want) > r.tol*max(1, math.Abs(want)) {
					assert.Failf(t, "wrong result", "element %d of %d is %v, want %v (tolerance %g)", i, len(r.want), got, want, r.tol)
					return
				}
			}
		})
	}
}

// The forwarding keeps the old errors: ErrInvalid for wrong dtypes,
// sizes and nil tensors, and Close on a nil *LogReg is a no-op.
func TestForwardingErrors(t *testing.T) {
	m, _ := testutil.Manager(t)
	f4 := newTensor(t, m, []float32{1, 2, 3, 4})
	f3 := newTensor(t, m, []float32{1, 2, 3})
	w, b, loss := newTensor(t, m, []float32{0}), newTensor(t, m, []float32{0}), newTensor(t, m, []float32{0})
	i4, err := tensor.FromSlice(m, []int32{1, 2, 3, 4})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, i4.Close()) })
	tests := []struct {
		name string
		call func() (any, error)
	}{
		{"Multiply dtypes", func() (any, error) { return kernels.Multiply(m, f4, i4, f4) }},
		{"MultiplyScalar sizes", func() (any, error) { return kernels.MultiplyScalar(m, f4, f3, f4) }},
		{"Add nil tensor", func() (any, error) { return kernels.Add(m, f4, nil, f4) }},
		{"Saxpy sizes", func() (any, error) { return kernels.Saxpy(m, f4, f3) }},
		{"LogRegStep nil loss", func() (any, error) { return kernels.LogRegStep(m, f4, f4, w, b, nil) }},
		{"LogRegStep x size", func() (any, error) { return kernels.LogRegStep(m, f3, f4, w, b, loss) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.call()
			assert.ErrorIs(t, err, vkflow.ErrInvalid)
		})
	}
	var step *kernels.LogReg
	assert.NoError(t, step.Close(), "Close on nil")
}

// Every exported identifier and the package clause carry a "Deprecated: "
// paragraph, which gopls and staticcheck flag at each use.
func TestDeprecated(t *testing.T) {
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	deprecated := func(g *ast.CommentGroup) bool {
		return g != nil && (strings.HasPrefix(g.Text(), "Deprecated: ") || strings.Contains(g.Text(), "\n\nDeprecated: "))
	}
	var pkgDoc bool
	exported := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		require.NoError(t, err)
		pkgDoc = pkgDoc || deprecated(f.Doc)
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if d.Name.IsExported() {
					exported++
					assert.True(t, deprecated(d.Doc), "%s: func %s has no Deprecated paragraph", name, d.Name)
				}
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					var id *ast.Ident
					doc := d.Doc
					switch s := spec.(type) {
					case *ast.TypeSpec:
						id = s.Name
						if s.Doc != nil {
							doc = s.Doc
						}
					case *ast.ValueSpec:
						id = s.Names[0]
						if s.Doc != nil {
							doc = s.Doc
						}
					default:
						continue
					}
					if id.IsExported() {
						exported++
						assert.True(t, deprecated(doc), "%s: %s has no Deprecated paragraph", name, id)
					}
				}
			}
		}
	}
	assert.True(t, pkgDoc, "the package doc has no Deprecated paragraph")
	assert.Equal(t, 8, exported, "Owner, Multiply, MultiplyScalar, Add, Saxpy, LogRegMaxFeatures, LogReg, LogRegStep")
}
