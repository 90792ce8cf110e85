package opcore_test

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/ops"
	"github.com/vkflow/vkflow/tensor"
)

// uniqueRef is the standard's unique_all of xs on the CPU: distinct values
// ascending (-0 == +0, every NaN distinct and last), first indices,
// inverse indices and counts.
func uniqueRef(xs []float64) (vals []float64, idx, inv, cnt []int64) {
	order := make([]int, len(xs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		x, y := xs[order[a]], xs[order[b]]
		if math.IsNaN(y) {
			return !math.IsNaN(x)
		}
		return x < y
	})
	inv = make([]int64, len(xs))
	for k, i := range order {
		v := xs[i]
		if k == 0 || !(v == xs[order[k-1]]) {
			vals = append(vals, v)
			idx = append(idx, int64(i))
			cnt = append(cnt, 0)
		}
		cnt[len(cnt)-1]++
		inv[i] = int64(len(vals) - 1)
	}
	return
}

func TestUnique(t *testing.T) {
	m, _ := testutil.Manager(t)
	s, err := ops.DefaultStream(m)
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(3, 4))
	nan := math.NaN()
	cases := []struct {
		name  string
		shape []int
		data  []float64
	}{
		{"small", []int{7}, []float64{3, 1, 3, 2, 1, 1, 5}},
		{"signed zeros and NaNs", []int{2, 4}, []float64{0, math.Copysign(0, -1), nan, 1, nan, -1, 0, math.Inf(-1)}},
		{"one", []int{}, []float64{4}},
		{"empty", []int{0, 3}, nil},
	}
	big := make([]float64, 5000)
	for i := range big {
		big[i] = float64(rng.IntN(300)) - 150
	}
	cases = append(cases, struct {
		name  string
		shape []int
		data  []float64
	}{"5000 of 300 values", []int{50, 100}, big})
	for _, c := range cases {
		for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64, tensor.Int32} {
			if dt == tensor.Int32 && c.name == "signed zeros and NaNs" {
				continue
			}
			t.Run(c.name+" "+dt.String(), func(t *testing.T) {
				x, err := tensor.New(m, dt, c.shape)
				require.NoError(t, err)
				defer x.Close()
				switch dt {
				case tensor.Float32:
					v := make([]float32, len(c.data))
					for i, f := range c.data {
						v[i] = float32(f)
					}
					require.NoError(t, tensor.Write(x, v))
				case tensor.Float64:
					require.NoError(t, tensor.Write(x, c.data))
				case tensor.Int32:
					v := make([]int32, len(c.data))
					for i, f := range c.data {
						v[i] = int32(f)
					}
					require.NoError(t, tensor.Write(x, v))
				}
				vals, idx, inv, cnt, err := ops.Unique(s, x)
				require.NoError(t, err)
				for _, r := range []*tensor.Tensor{vals, idx, inv, cnt} {
					defer r.Close()
					require.NoError(t, r.Wait(ctxT(t)))
				}
				wv, wi, winv, wc := uniqueRef(c.data)
				assert.Equal(t, c.shape, inv.Shape())
				got := make([]float64, vals.Len())
				switch dt {
				case tensor.Float32:
					v, _ := vals.Float32s()
					for i := range v {
						got[i] = float64(v[i])
					}
				case tensor.Float64:
					v, _ := vals.Float64s()
					copy(got, v)
				case tensor.Int32:
					v, _ := vals.Int32s()
					for i := range v {
						got[i] = float64(v[i])
					}
				}
				require.Equal(t, len(wv), len(got))
				for i := range wv {
					if math.IsNaN(wv[i]) {
						assert.True(t, math.IsNaN(got[i]), "value %d", i)
					} else {
						assert.Equal(t, wv[i], got[i], "value %d", i)
					}
				}
				gi, _ := idx.Int64s()
				ginv, _ := inv.Int64s()
				gc, _ := cnt.Int64s()
				assert.Equal(t, wi, nilIfEmpty(gi))
				assert.Equal(t, winv, append([]int64{}, ginv...))
				assert.Equal(t, wc, nilIfEmpty(gc))
			})
		}
	}
}

func nilIfEmpty(v []int64) []int64 {
	if len(v) == 0 {
		return nil
	}
	return append([]int64(nil), v...)
}

func TestUniqueByName(t *testing.T) {
	m, _ := testutil.Manager(t)
	s, err := ops.DefaultStream(m)
	require.NoError(t, err)
	x, err := tensor.FromSlice(m, []int64{5, 5, 2, 9, 2, 5})
	require.NoError(t, err)
	defer x.Close()
	for name, n := range map[string]int{"unique_values": 1, "unique_counts": 2, "unique_inverse": 2, "unique_all": 4} {
		outs, err := s.Call(name, []*tensor.Tensor{x}, nil, ops.Attrs{})
		require.NoError(t, err, name)
		require.Len(t, outs, n, name)
		require.NoError(t, outs[0].Wait(ctxT(t)))
		v, _ := outs[0].Int64s()
		assert.Equal(t, []int64{2, 5, 9}, v, name)
		for _, o := range outs {
			o.Close()
		}
	}
	_, err = ops.Prepare(m, "unique_values", []*tensor.Tensor{x}, nil, ops.Attrs{})
	assert.ErrorContains(t, err, "cannot be prepared")
}
