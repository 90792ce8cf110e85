package linalg_test

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
	"github.com/vkflow/vkflow/ops/linalg"
	"github.com/vkflow/vkflow/tensor"
)

// linTol is the tolerance of the spectral tests, relative to the largest
// singular value (or |eigenvalue|): a few hundred eps of the dtype.
func linTol(dt tensor.Dtype) float64 {
	switch dt {
	case tensor.Float64:
		return 1e-12
	case tensor.Float16:
		return 3e-3
	}
	return 2e-5
}

// specMatrix makes a stack of b m×n matrices of a kind: "random" (entries
// in [-1, 1)), "rank1" (outer products: rank-deficient), "repeated"
// (orthogonal columns of equal norm: every singular value the same),
// "zero", "scaled" (random times 1e30: the scale must not overflow) or
// "sym" (random symmetric; m == n).
func specMatrix(rng *rand.Rand, dt tensor.Dtype, kind string, b, m, n int) []float64 {
	out := make([]float64, 0, b*m*n)
	for range b {
		a := make([]float64, m*n)
		switch kind {
		case "random", "scaled", "sym":
			for i := range a {
				a[i] = rng.Float64()*2 - 1
			}
			if kind == "scaled" {
				for i := range a {
					a[i] *= 1e30
				}
			}
			if kind == "sym" {
				for i := range m {
					for j := range i {
						a[j*n+i] = a[i*n+j]
					}
				}
			}
		case "rank1":
			u, v := linRandom(rng, dt, m), linRandom(rng, dt, n)
			for i := range m {
				for j := range n {
					a[i*n+j] = u[i] * v[j]
				}
			}
		case "repeated":
			// ±2 at distinct rows and columns: every singular value is 2.
			rows, cols := rng.Perm(m), rng.Perm(n)
			for i := range min(m, n) {
				a[rows[i]*n+cols[i]] = float64(2 - 4*(i%2))
			}
		case "zero":
		}
		for i := range a {
			a[i] = roundTo(dt, a[i])
		}
		out = append(out, a...)
	}
	return out
}

func callOp(t *testing.T, m *vkflow.Manager, name string, x *tensor.Tensor, at ops.Attrs, extra ...*tensor.Tensor) []*tensor.Tensor {
	t.Helper()
	outs, err := ops.Call(context.Background(), m, name, append([]*tensor.Tensor{x}, extra...), nil, at)
	require.NoError(t, err)
	for _, o := range outs {
		t.Cleanup(func() { _ = o.Close() })
	}
	return outs
}

func TestSVD(t *testing.T) {
	m, _ := testutil.Manager(t)
	rng := rand.New(rand.NewPCG(7, 8))
	for _, tc := range []struct {
		kind  string
		batch []int
		M, N  int
		dts   []tensor.Dtype
	}{
		{"random", nil, 1, 1, nil},
		{"random", nil, 5, 3, nil},
		{"random", nil, 3, 5, nil},
		{"random", []int{2, 3}, 4, 4, nil},
		{"random", []int{7}, 8, 8, nil},
		{"random", nil, 40, 33, nil},
		{"random", nil, 1, 9, nil},
		{"random", nil, 9, 1, nil},
		{"rank1", []int{3}, 6, 4, nil},
		{"rank1", nil, 4, 6, nil},
		{"repeated", []int{2}, 5, 5, nil},
		{"repeated", nil, 6, 4, nil},
		{"zero", []int{2}, 3, 4, nil},
		{"scaled", nil, 6, 5, []tensor.Dtype{tensor.Float64}},
		{"random", nil, 300, 3, []tensor.Dtype{tensor.Float32}}, // R > 1 lanes per pair
		{"random", nil, 6, 5, []tensor.Dtype{tensor.Float16}},
	} {
		dts := tc.dts
		if dts == nil {
			dts = []tensor.Dtype{tensor.Float32, tensor.Float64}
		}
		for _, dt := range dts {
			for _, full := range []bool{true, false} {
				name := fmt.Sprintf("%s/%v/%v%dx%d/full=%v", tc.kind, dt, tc.batch, tc.M, tc.N, full)
				t.Run(name, func(t *testing.T) {
					checkSVD(t, m, rng, dt, tc.kind, tc.batch, tc.M, tc.N, full)
				})
			}
		}
	}
}

func checkSVD(t *testing.T, m *vkflow.Manager, rng *rand.Rand, dt tensor.Dtype, kind string, batch []int, M, N int, full bool) {
	B := numelOf(batch)
	a := specMatrix(rng, dt, kind, B, M, N)
	x := linTensor(t, m, dt, a, append(append([]int{}, batch...), M, N))
	outs := callOp(t, m, "svd", x, ops.Attrs{FullMatrices: &full})
	require.Len(t, outs, 3)
	K := min(M, N)
	uc, vr := K, K
	if full {
		uc, vr = M, N
	}
	assert.Equal(t, append(append([]int{}, batch...), M, uc), outs[0].Shape())
	assert.Equal(t, append(append([]int{}, batch...), K), outs[1].Shape())
	assert.Equal(t, append(append([]int{}, batch...), vr, N), outs[2].Shape())
	U, S, Vh := linRead(t, outs[0]), linRead(t, outs[1]), linRead(t, outs[2])
	vals := callOp(t, m, "svdvals", x, ops.Attrs{})
	SV := linRead(t, vals[0])
	tol := linTol(dt) * math.Sqrt(float64(max(M, N)))
	for b := range B {
		am := matAt(a, b, M, N)
		ref := refSingular(am, M, N)
		s := S[b*K : (b+1)*K]
		scale := math.Max(ref[0], 1e-300)
		if ref[0] == 0 {
			scale = 1
		}
		for i := range K {
			require.InDelta(t, ref[i], s[i], tol*scale, "matrix %d: S[%d] of %v (want %v)", b, i, s, ref)
			require.InDelta(t, ref[i], SV[b*K+i], tol*scale, "matrix %d: svdvals[%d]", b, i)
			if i > 0 {
				require.GreaterOrEqual(t, s[i-1], s[i], "S descending")
			}
		}
		u := matAt(U, b, M, uc)
		vh := matAt(Vh, b, vr, N)
		require.Less(t, orthoErr(u, M, uc, false), tol, "UᵀU = I (matrix %d)", b)
		require.Less(t, orthoErr(vh, vr, N, true), tol, "Vh Vhᵀ = I (matrix %d)", b)
		// U[:, :K] diag(S) Vh[:K, :]
		us := make([]float64, M*K)
		for i := range M {
			for j := range K {
				us[i*K+j] = u[i*uc+j] * s[j]
			}
		}
		rec := mulRef(us, vh[:K*N], M, K, N)
		for i := range rec {
			require.InDelta(t, am[i], rec[i], tol*scale, "U S Vh = A (matrix %d, element %d)", b, i)
		}
	}
}

// The path of N > 512 (several workgroups per matrix, a step per
// dispatch), taken by small matrices through a hook.
func TestSVDStepPerDispatch(t *testing.T) {
	m, _ := testutil.Manager(t)
	defer linalg.SetJacobiHooks(2, false)()
	rng := rand.New(rand.NewPCG(9, 10))
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		checkSVD(t, m, rng, dt, "random", []int{3}, 12, 11, false)
	}
}

// A stack with no matrices, and matrices with no elements.
func TestSVDEmpty(t *testing.T) {
	m, _ := testutil.Manager(t)
	for _, tc := range []struct {
		shape       []int
		u, s, vh    []int
		uEye, vhEye bool
	}{
		{[]int{0, 3, 2}, []int{0, 3, 3}, []int{0, 2}, []int{0, 2, 2}, false, false},
		{[]int{2, 3, 0}, []int{2, 3, 3}, []int{2, 0}, []int{2, 0, 0}, true, false},
		{[]int{0, 4}, []int{0, 0}, []int{0}, []int{4, 4}, false, true},
	} {
		x := linTensor(t, m, tensor.Float32, make([]float64, numelOf(tc.shape)), tc.shape)
		outs := callOp(t, m, "svd", x, ops.Attrs{})
		assert.Equal(t, tc.u, outs[0].Shape())
		assert.Equal(t, tc.s, outs[1].Shape())
		assert.Equal(t, tc.vh, outs[2].Shape())
		for i, eye := range []bool{tc.uEye, false, tc.vhEye} {
			if !eye {
				continue
			}
			got := linRead(t, outs[i])
			n := outs[i].Shape()[len(outs[i].Shape())-1]
			for e, v := range got {
				want := 0.0
				if r := e % (n * n); r/n == r%n {
					want = 1
				}
				assert.Equal(t, want, v)
			}
		}
	}
}

func TestSVDRefuses(t *testing.T) {
	m, _ := testutil.Manager(t)
	i32 := linTensor(t, m, tensor.Int32, []float64{1, 2, 3, 4}, []int{2, 2})
	vec := linTensor(t, m, tensor.Float32, []float64{1, 2}, []int{2})
	for _, name := range []string{"svd", "svdvals"} {
		_, err := ops.Call(context.Background(), m, name, []*tensor.Tensor{i32}, nil, ops.Attrs{})
		assert.ErrorIs(t, err, vkflow.ErrInvalid, name)
		_, err = ops.Call(context.Background(), m, name, []*tensor.Tensor{vec}, nil, ops.Attrs{})
		assert.ErrorContains(t, err, "at least 2 dimensions", name)
	}
}
