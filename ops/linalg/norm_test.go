package linalg_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/ops"
	"github.com/vkflow/vkflow/tensor"
)

// vecNormRef is the ord-norm of v in float64, by the definition.
func vecNormRef(v []float64, ord float64) float64 {
	switch {
	case math.IsInf(ord, 1), math.IsInf(ord, -1):
		r := math.Abs(v[0])
		for _, x := range v {
			if math.IsInf(ord, 1) {
				r = math.Max(r, math.Abs(x))
			} else {
				r = math.Min(r, math.Abs(x))
			}
		}
		return r
	case ord == 0:
		n := 0.0
		for _, x := range v {
			if x != 0 {
				n++
			}
		}
		return n
	}
	s := 0.0
	for _, x := range v {
		s += math.Pow(math.Abs(x), ord)
	}
	return math.Pow(s, 1/ord)
}

func TestVectorNorm(t *testing.T) {
	m, _ := testutil.Manager(t)
	rng := rand.New(rand.NewPCG(13, 14))
	for _, tc := range []struct {
		shape []int
		axes  []int
	}{
		{[]int{7}, nil},
		{[]int{3, 5}, []int{1}},
		{[]int{3, 5}, []int{0}},
		{[]int{2, 3, 4}, []int{0, 2}},
		{[]int{20000}, nil},
	} {
		for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64, tensor.Float16} {
			for _, ord := range []float64{2, 1, 0, -1, -2, 3, 0.5, -0.7, math.Inf(1), math.Inf(-1)} {
				if (dt == tensor.Float16 || tc.shape[0] == 20000) && ord != 2 && ord != 0.5 && ord != -1 {
					continue // fewer cases where they add little
				}
				t.Run(fmt.Sprintf("%v/%v/axes%v/ord%v", dt, tc.shape, tc.axes, ord), func(t *testing.T) {
					n := numelOf(tc.shape)
					vals := linRandom(rng, dt, n)
					vals[0] = 0 // a zero: ord 0 counts it out, negative ords give 0
					x := linTensor(t, m, dt, vals, tc.shape)
					for _, keep := range []bool{false, true} {
						out := callOp(t, m, "vector_norm", x, ops.Attrs{Axes: tc.axes, KeepDims: keep, Ord: strconv.FormatFloat(ord, 'g', -1, 64)})[0]
						got := linRead(t, out)
						want, wshape := reduceRefAll(vals, tc.shape, tc.axes, keep, func(v []float64) float64 { return vecNormRef(v, ord) })
						require.Equal(t, wshape, out.Shape())
						for i := range want {
							if w := roundTo(dt, want[i]); math.IsInf(w, 0) {
								require.Equal(t, w, got[i], "output %d overflows %v", i, dt)
								continue
							}
							tol := 20 * linTol(dt) * math.Max(1, math.Abs(want[i]))
							require.InDelta(t, want[i], got[i], tol, "output %d", i)
						}
					}
				})
			}
		}
	}
}

// reduceRefAll applies f to the elements of each output of a reduction of
// x (shape) over axes (nil: all), and returns the outputs and their shape.
func reduceRefAll(x []float64, shape, axes []int, keep bool, f func([]float64) float64) ([]float64, []int) {
	r := len(shape)
	red := make([]bool, r)
	for i := range r {
		red[i] = axes == nil
	}
	for _, a := range axes {
		red[(a+r)%r] = true
	}
	var oshape, kdims []int
	for i, d := range shape {
		switch {
		case !red[i]:
			oshape, kdims = append(oshape, d), append(kdims, i)
		case keep:
			oshape = append(oshape, 1)
		}
	}
	if oshape == nil {
		oshape = []int{}
	}
	groups := map[int][]float64{}
	idx := make([]int, r)
	for e := range x {
		rem := e
		for i := r - 1; i >= 0; i-- {
			idx[i], rem = rem%shape[i], rem/shape[i]
		}
		o := 0
		for _, k := range kdims {
			o = o*shape[k] + idx[k]
		}
		groups[o] = append(groups[o], x[e])
	}
	out := make([]float64, numelOf(oshape))
	for o := range out {
		out[o] = f(groups[o])
	}
	return out, oshape
}

// The 2-norm of values whose squares overflow (float32 1e30s), and norms
// of inf and NaN.
func TestVectorNormScaling(t *testing.T) {
	m, _ := testutil.Manager(t)
	x := linTensor(t, m, tensor.Float32, []float64{3e30, 4e30, 0, 0, math.Inf(-1), 1, 0, math.NaN(), 1}, []int{3, 3})
	got := linRead(t, callOp(t, m, "vector_norm", x, ops.Attrs{Axes: []int{1}})[0])
	assert.InDelta(t, 5e30, got[0], 5e30*1e-6)
	assert.True(t, math.IsInf(got[1], 1))
	assert.True(t, math.IsNaN(got[2]))
}

func TestMatrixNorm(t *testing.T) {
	m, _ := testutil.Manager(t)
	rng := rand.New(rand.NewPCG(15, 16))
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		for _, sh := range [][]int{{3, 4}, {2, 5, 3}, {2, 1, 1}, {4, 6, 6}} {
			r := len(sh)
			M, N := sh[r-2], sh[r-1]
			B := numelOf(sh[:r-2])
			vals := specMatrix(rng, dt, "random", B, M, N)
			x := linTensor(t, m, dt, vals, sh)
			for _, ord := range []string{"", "fro", "nuc", "1", "-1", "2", "-2", "inf", "-inf"} {
				for _, keep := range []bool{false, true} {
					out := callOp(t, m, "matrix_norm", x, ops.Attrs{Ord: ord, KeepDims: keep})[0]
					wshape := slices.Clone(sh[:r-2])
					if keep {
						wshape = append(wshape, 1, 1)
					}
					require.Equal(t, wshape, out.Shape(), "%v %q", sh, ord)
					got := linRead(t, out)
					for b := range B {
						a := matAt(vals, b, M, N)
						s := refSingular(a, M, N)
						var want float64
						switch ord {
						case "", "fro":
							want = vecNormRef(a, 2)
						case "nuc":
							for _, v := range s {
								want += v
							}
						case "2":
							want = s[0]
						case "-2":
							want = s[len(s)-1]
						default:
							sums := []float64{}
							if ord == "1" || ord == "-1" {
								for j := range N {
									sums = append(sums, vecNormRef(transposeRef(a, M, N)[j*M:(j+1)*M], 1))
								}
							} else {
								for i := range M {
									sums = append(sums, vecNormRef(a[i*N:(i+1)*N], 1))
								}
							}
							want = slices.Max(sums)
							if ord[0] == '-' {
								want = slices.Min(sums)
							}
						}
						require.InDelta(t, want, got[b], 20*linTol(dt)*math.Max(1, want), "%v %v ord %q matrix %d", dt, sh, ord, b)
					}
				}
			}
		}
	}
	x := linTensor(t, m, tensor.Float32, make([]float64, 4), []int{2, 2})
	_, err := ops.Call(t.Context(), m, "matrix_norm", []*tensor.Tensor{x}, nil, ops.Attrs{Ord: "3"})
	assert.ErrorContains(t, err, "ord")
}
