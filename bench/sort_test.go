package bench

// BenchmarkSort times ops "sort" and "argsort" for bench/sort.sh, which
// pairs them with NumPy's sorts (bench/sort_numpy.py) in the same run:
//
//	sort_1m, argsort_1m              one row of 1Mi float32
//	sort_1000x1024, argsort_1000x1024
//	                                 a [1000, 1024] float32 batch sorted
//	                                 along the last axis
//
// As BenchmarkOps: prepared once with a preallocated output, verified after
// the first Run, 1 warm-up run, then one op.Run (submit + wait) per
// iteration, with the median ("med-ns/op").

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/ops"
	"github.com/vkflow/vkflow/tensor"
)

// newSortEnv: op ("sort" or "argsort") of random float32 values of shape
// [rows, n] along the last axis; verified: every row sorted (through the
// indices for argsort, which must be a permutation of the row).
func newSortEnv(m *vkflow.Manager, op string, rows, n int) (*opEnv, error) {
	r := rand.New(rand.NewPCG(9, 9))
	xv := make([]float32, rows*n)
	for i := range xv {
		xv[i] = float32(r.NormFloat64())
	}
	x, err := tensor.FromSlice(m, xv, rows, n)
	if err != nil {
		return nil, err
	}
	dt := tensor.Float32
	if op == "argsort" {
		dt = tensor.Int64
	}
	out, err := tensor.New(m, dt, []int{rows, n})
	if err != nil {
		_ = x.Close()
		return nil, err
	}
	e, err := prepareOp(m, op, []*tensor.Tensor{x}, []*tensor.Tensor{out}, ops.Attrs{})
	if err != nil {
		return nil, err
	}
	e.verify = func() error {
		vals := make([]float32, rows*n)
		if op == "sort" {
			got, err := out.Float32s()
			if err != nil {
				return err
			}
			copy(vals, got)
		} else {
			got, err := out.Int64s()
			if err != nil {
				return err
			}
			for k := range rows {
				seen := make([]bool, n)
				for j := range n {
					i := got[k*n+j]
					if i < 0 || int(i) >= n || seen[i] {
						return fmt.Errorf("argsort: row %d: index %d out of range or repeated", k, i)
					}
					seen[i] = true
					vals[k*n+j] = xv[k*n+int(i)]
				}
			}
		}
		for k := range rows {
			for j := 1; j < n; j++ {
				if vals[k*n+j-1] > vals[k*n+j] {
					return fmt.Errorf("%s: row %d not sorted at %d", op, k, j)
				}
			}
		}
		return nil
	}
	return e, nil
}

func BenchmarkSort(b *testing.B) {
	for _, w := range []struct {
		name, op string
		rows, n  int
	}{
		{"sort_1m", "sort", 1, 1 << 20}, {"argsort_1m", "argsort", 1, 1 << 20},
		{"sort_1000x1024", "sort", 1000, 1024}, {"argsort_1000x1024", "argsort", 1000, 1024},
	} {
		b.Run(w.name, func(b *testing.B) {
			benchOp(b, w.op, func(m *vkflow.Manager) (*opEnv, error) { return newSortEnv(m, w.op, w.rows, w.n) },
				0, 0, 1)
		})
	}
}

// TestSortBenchSmoke runs BenchmarkSort's setup and verification on small
// sizes, with validation on.
func TestSortBenchSmoke(t *testing.T) {
	for _, op := range []string{"sort", "argsort"} {
		t.Run(op, func(t *testing.T) {
			m, _ := testutil.Manager(t)
			e, err := newSortEnv(m, op, 3, 5000)
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				if err := e.close(); err != nil {
					t.Error(err)
				}
			}()
			if err := e.op.Run(context.Background()); err != nil {
				t.Fatal(err)
			}
			if err := e.verify(); err != nil {
				t.Fatal(err)
			}
		})
	}
}
