package opcore_test

import (
	"fmt"
	"math/cmplx"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/ops"
	"github.com/vkflow/vkflow/tensor"
)

// TestComplexReduce checks sum, prod and mean of complex tensors along
// axes against complex128 sums and products, all and any (nonzero complex
// numbers are true), and the refusal of max, min and argmax.
func TestComplexReduce(t *testing.T) {
	m, _ := testutil.Manager(t)
	r := rand.New(rand.NewPCG(5, 4))
	for _, dt := range cxDtypes {
		for _, tc := range []struct {
			shape []int
			axes  []int
		}{{[]int{3, 5}, []int{1}}, {[]int{3, 5}, []int{0}}, {[]int{2, 3000}, nil}, {[]int{40000}, nil}, {[]int{0, 3}, []int{0}}} {
			n := numelOf(tc.shape)
			x := make([]complex128, n)
			for i := range x {
				// Values near the unit circle keep long products in range.
				x[i] = cxRound(dt, cmplx.Rect(1+0.001*(r.Float64()-0.5), r.Float64()*6.28))
				if i%17 == 0 {
					x[i] = 0
				}
			}
			xt := cxUpload(t, m, dt, x, tc.shape...)
			rows, cols := tc.shape[0], numelOf(tc.shape[1:])
			// Reference: reduce over the given axis of the 2-D view, or all.
			groups := func() [][]int {
				var g [][]int
				switch {
				case tc.axes == nil:
					all := make([]int, n)
					for i := range all {
						all[i] = i
					}
					g = append(g, all)
				case tc.axes[0] == 1:
					for i := range rows {
						var e []int
						for j := range cols {
							e = append(e, i*cols+j)
						}
						g = append(g, e)
					}
				default:
					for j := range cols {
						var e []int
						for i := range rows {
							e = append(e, i*cols+j)
						}
						g = append(g, e)
					}
				}
				return g
			}()
			for _, red := range []struct {
				name string
				fn   func(ops.Owner, *tensor.Tensor, []int, bool, *tensor.Tensor) (*ops.Op, error)
			}{{"sum", ops.Sum}, {"prod", ops.Prod}, {"mean", ops.Mean}} {
				want := make([]complex128, len(groups))
				scale := make([]float64, len(groups))
				for k, g := range groups {
					acc := complex128(0)
					if red.name == "prod" {
						acc = 1
					}
					for _, i := range g {
						if red.name == "prod" {
							acc *= x[i]
						} else {
							acc += x[i]
						}
					}
					scale[k] = float64(len(g)) * 2 // sum of |x|, about
					if red.name == "mean" {
						acc /= complex(float64(len(g)), 0)
						scale[k] = 2
					}
					if red.name == "prod" {
						scale[k] = float64(len(g)) * 2 * max(1, cmplx.Abs(acc))
					}
					want[k] = cxRound(dt, acc)
				}
				if red.name == "mean" && len(groups) > 0 && len(groups[0]) == 0 {
					continue // NaN, checked by the real tests
				}
				op, err := red.fn(m, xt, tc.axes, false, nil)
				got, y := runOp(t, op, err)
				require.Equal(t, dt, y.Dtype())
				cxSame(t, dt, want, got, scale, 30, fmt.Sprintf("%s %v %v axes %v", red.name, dt, tc.shape, tc.axes))
			}
		}
		// all and any: a number is true unless both parts are zero.
		x := cxUpload(t, m, dt, []complex128{complex(0, 1), complex(1, 0), complex(0, 0), complex(0, -0.0)}, 2, 2)
		op, err := ops.All(m, x, []int{1}, false, nil)
		got, _ := runOp(t, op, err)
		require.Equal(t, []complex128{1, 0}, got, "all %v", dt)
		op, err = ops.Any(m, x, []int{1}, false, nil)
		got, _ = runOp(t, op, err)
		require.Equal(t, []complex128{1, 0}, got, "any %v", dt)
		for _, f := range []func(ops.Owner, *tensor.Tensor, []int, bool, *tensor.Tensor) (*ops.Op, error){ops.Max, ops.Min} {
			_, err := f(m, x, nil, false, nil)
			require.ErrorIs(t, err, core.ErrInvalid)
		}
		_, err = ops.Argmax(m, x, nil, false, nil)
		require.ErrorIs(t, err, core.ErrInvalid)
	}
}

// TestComplexMatmul checks complex matmul against a complex128 reference,
// on the small-tile and the blocked kernels, batched and with k cut.
func TestComplexMatmul(t *testing.T) {
	m, _ := testutil.Manager(t)
	r := rand.New(rand.NewPCG(5, 5))
	for _, dt := range cxDtypes {
		for _, s := range [][4]int{{1, 3, 4, 5}, {2, 7, 9, 6}, {1, 70, 33, 130}, {1, 5, 40, 200}} {
			batch, mm, k, n := s[0], s[1], s[2], s[3]
			a := make([]complex128, batch*mm*k)
			b := make([]complex128, batch*k*n)
			for i := range a {
				a[i] = cxRound(dt, complex(r.Float64()*2-1, r.Float64()*2-1))
			}
			for i := range b {
				b[i] = cxRound(dt, complex(r.Float64()*2-1, r.Float64()*2-1))
			}
			want := make([]complex128, batch*mm*n)
			scale := make([]float64, len(want))
			for z := range batch {
				for i := range mm {
					for j := range n {
						var acc complex128
						var mag float64
						for q := range k {
							p := a[z*mm*k+i*k+q] * b[z*k*n+q*n+j]
							acc += p
							mag += cmplx.Abs(p)
						}
						want[z*mm*n+i*n+j] = cxRound(dt, acc)
						scale[z*mm*n+i*n+j] = mag
					}
				}
			}
			op, err := ops.Matmul(m, cxUpload(t, m, dt, a, batch, mm, k), cxUpload(t, m, dt, b, batch, k, n), nil)
			got, y := runOp(t, op, err)
			require.Equal(t, dt, y.Dtype())
			cxSame(t, dt, want, got, scale, 4, fmt.Sprintf("matmul %v %v", dt, s))
		}
	}
}

// TestComplexFuse checks a fused complex expression: (a*b + 2) / a, the
// scalar taking the complex dtype (real part 2).
func TestComplexFuse(t *testing.T) {
	m, _ := testutil.Manager(t)
	for _, dt := range cxDtypes {
		av := []complex128{complex(1, 2), complex(-3, 0.5), complex(0, 1)}
		bv := []complex128{complex(0.5, -1), complex(2, 2), complex(4, 0)}
		a, b := ops.Input(cxUpload(t, m, dt, av)), ops.Input(cxUpload(t, m, dt, bv))
		e := ops.Apply("div", ops.Apply("add", ops.Apply("mul", a, b), ops.Scalar(2)), a)
		op, err := ops.Fuse(m, e, nil)
		got, _ := runOp(t, op, err)
		want := make([]complex128, len(av))
		for i := range av {
			want[i] = cxRound(dt, (av[i]*bv[i]+2)/av[i])
		}
		cxSame(t, dt, want, got, nil, 8, fmt.Sprintf("fuse %v", dt))
		_, err = ops.Fuse(m, ops.AsType(a, tensor.Float32), nil)
		require.ErrorIs(t, err, core.ErrInvalid)
	}
}
