package opcore

import (
	"math/bits"

	"github.com/vkflow/vkflow/algorithm"
	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/tensor"
)

func init() {
	Builtin("sort", sortBuilder("sort", func(o Owner, x *tensor.Tensor, axis int, desc bool, out *tensor.Tensor) (*Op, error) {
		return Sort(o, x, axis, desc, out)
	}))
	Builtin("argsort", sortBuilder("argsort", func(o Owner, x *tensor.Tensor, axis int, desc bool, out *tensor.Tensor) (*Op, error) {
		return Argsort(o, x, axis, desc, out)
	}))
}

func sortBuilder(name string, f func(Owner, *tensor.Tensor, int, bool, *tensor.Tensor) (*Op, error)) Builder {
	return func(o Owner, in, out []*tensor.Tensor, at Attrs) (*Op, error) {
		if err := Inputs(name, in, 1); err != nil {
			return nil, err
		}
		if err := TooMany(name, out, 1); err != nil {
			return nil, err
		}
		axis := -1
		switch len(at.Axes) {
		case 0:
		case 1:
			axis = at.Axes[0]
		default:
			return nil, core.Invalid("ops.%s: takes one axis, not %v", name, at.Axes)
		}
		return f(o, in[0], axis, at.Descending, OutAt(out, 0))
	}
}

// sortDtypes are the dtypes sort, argsort and searchsorted take.
const sortDtypes = "bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float16, float32, float64"

// Sort sorts x along axis ("sort"; Attrs.Axes: nil is the last axis, else
// one axis; Attrs.Descending), each row on its own, into out (allocated
// when nil): x's dtype and shape. A negative axis counts from the end.
// Every real dtype: bool, the integers, float16, float32 and float64.
//
// The sort is stable, ascending and descending: equal elements keep their
// input order (so descending is not a reversed ascending sort). Order of
// floats: -Inf < ... < -0 == +0 < ... < +Inf < NaN: -0 and +0 are equal
// (they keep their input order, and their signs), and every NaN sorts
// last, after +Inf ascending and after -Inf descending, in input order,
// as NumPy sorts them (NumPy has no descending sort).
//
// It is a least-significant-digit radix sort on keys that order as the
// values do: 4-bit digits, each pass a histogram per tile of 2048
// elements, a scan of the histograms and a stable scatter; then, for a
// tensor of several rows, the passes of the rows' digits, and a gather.
// Its cost is (bits of the dtype + bits of the row count) / 4 passes.
// A row of any length; x holds fewer than 2^32 elements.
func Sort(o Owner, x *tensor.Tensor, axis int, descending bool, out *tensor.Tensor) (*Op, error) {
	return sortOp(o, "sort", x, axis, descending, true, false, out, nil)
}

// Argsort returns the int64 indices that sort x along axis ("argsort";
// Attrs as Sort's): out[..., i, ...] is the position in its row of the
// element Sort puts at i, so ties are in increasing index order, for
// descending too. out is int64 of x's shape (allocated when nil).
func Argsort(o Owner, x *tensor.Tensor, axis int, descending bool, out *tensor.Tensor) (*Op, error) {
	return sortOp(o, "argsort", x, axis, descending, false, true, nil, out)
}

// SortWithIndices is Sort and Argsort in one op, over one radix sort: its
// outputs are the sorted values, then their int64 indices (each allocated
// when nil). Ops built on a sort (unique values with their inverse
// indices, say) start from it.
func SortWithIndices(o Owner, x *tensor.Tensor, axis int, descending bool, values, indices *tensor.Tensor) (*Op, error) {
	return sortOp(o, "sort", x, axis, descending, true, true, values, indices)
}

// sortOp builds the sort: x is seen as [outer, n, inner] around the axis,
// and sorted as rows = outer*inner rows of n.
func sortOp(o Owner, name string, x *tensor.Tensor, axis int, descending, wantValues, wantIndices bool, values, indices *tensor.Tensor) (*Op, error) {
	op, err := NewOp(o, name, x)
	if err != nil {
		return nil, err
	}
	dt := x.Dtype()
	if !IsFloat(dt) && !isSigned(dt) && !isUnsigned(dt) && dt != tensor.Bool {
		return op.Fail(op.Unsupported(dt, sortDtypes))
	}
	shape := x.Shape()
	rshape := shape
	if len(shape) == 0 {
		if axis != 0 && axis != -1 {
			return op.Fail(op.Errorf("axis %d of a 0-d tensor: use 0 or -1", axis))
		}
		rshape, axis = []int{1}, 0
	}
	ax, err := NormAxes(name, []int{axis}, len(rshape))
	if err != nil {
		return op.Fail(err)
	}
	if err := op.RequireDtypes(dt); err != nil {
		return op.Fail(err)
	}
	if sortKeyBits(dt) == 64 || wantIndices {
		if err := op.RequireDtypes(tensor.Int64); err != nil {
			return op.Fail(err)
		}
	}
	var vals, inds *tensor.Tensor
	if wantValues {
		if vals, err = op.Output(values, dt, shape); err != nil {
			return op.Fail(err)
		}
	}
	if wantIndices {
		if inds, err = op.Output(indices, tensor.Int64, shape); err != nil {
			return op.Fail(err)
		}
	}
	if err := op.NoAlias(); err != nil {
		return op.Fail(err)
	}
	total := x.Len()
	if total == 0 {
		return op, nil
	}
	if uint64(total) >= 1<<32 {
		return op.Fail(op.Errorf("%d elements: the sort takes fewer than 2^32", total))
	}
	n := rshape[ax[0]]
	inner := Numel(rshape[ax[0]+1:])
	s := sorter{op: op, dt: dt, total: uint32(total), n: uint32(n), algs: map[string]*algorithm.Algorithm{}}
	idx, err := s.sort(x, descending, uint32(inner))
	if err != nil {
		return op.Fail(err)
	}
	ts := []*tensor.Tensor{idx}
	if vals != nil {
		ts = []*tensor.Tensor{x, idx, vals}
	}
	if inds != nil {
		ts = append(ts, inds)
	}
	groups, err := op.Grid(uint64(total), LocalSize)
	if err != nil {
		return op.Fail(err)
	}
	return op.Done(op.Dispatch(sortGatherSource(dt, vals != nil, inds != nil), ts, groups,
		uint32(total), uint32(n), uint32(inner)))
}

// sorter builds the radix passes of one sort. Passes reuse pipelines:
// algs holds them by role.
type sorter struct {
	op       *Op
	dt       tensor.Dtype
	total, n uint32
	algs     map[string]*algorithm.Algorithm
}

// step adds a dispatch of the pipeline named role, made by make the first
// time.
func (s *sorter) step(role string, src func() string, ts []*tensor.Tensor, groups [3]uint32, push ...any) error {
	a := s.algs[role]
	if a == nil {
		before := len(s.op.steps)
		if err := s.op.Dispatch(src(), ts, groups, push...); err != nil {
			return err
		}
		s.algs[role] = s.op.steps[before].alg
		return nil
	}
	if _, err := algorithm.Push(push...); err != nil {
		return s.op.Errorf("%v", err)
	}
	s.op.steps = append(s.op.steps, step{alg: a, push: push})
	return nil
}

// sort records the key dispatch and the radix passes, and returns the
// tensor of sorted element numbers: position p of the sorted [rows, n]
// view holds element idx[p].
func (s *sorter) sort(x *tensor.Tensor, descending bool, inner uint32) (*tensor.Tensor, error) {
	op := s.op
	kdt := tensor.Uint32
	if sortKeyBits(s.dt) == 64 {
		kdt = tensor.Uint64
	}
	kt := sortKeyType(s.dt)
	total := int(s.total)
	var keys, idx [2]*tensor.Tensor
	for i := range 2 {
		var err error
		if keys[i], err = op.Temp(kdt, []int{total}); err != nil {
			return nil, err
		}
		if idx[i], err = op.Temp(tensor.Uint32, []int{total}); err != nil {
			return nil, err
		}
	}
	groups, err := op.Grid(uint64(total), LocalSize)
	if err != nil {
		return nil, err
	}
	if err := op.Dispatch(sortKeysSource(s.dt, descending), []*tensor.Tensor{x, keys[0], idx[0]}, groups,
		s.total, s.n, inner); err != nil {
		return nil, err
	}
	if s.n <= 1 {
		return idx[0], nil // rows of one element are sorted
	}
	rows := s.total / s.n
	keyPasses := (sortKeyBits(s.dt) + sortBits - 1) / sortBits
	rowPasses := (bits.Len32(rows-1) + sortBits - 1) / sortBits
	nblocks := (s.total + sortTile - 1) / sortTile
	bgroups, err := op.Grid(uint64(nblocks)*sortLocal, sortLocal)
	if err != nil {
		return nil, err
	}
	hist, err := op.Temp(tensor.Uint32, []int{int(nblocks) * sortRadix})
	if err != nil {
		return nil, err
	}
	scan, err := s.scanPlan(hist)
	if err != nil {
		return nil, err
	}
	cur := 0
	for pass := range keyPasses + rowPasses {
		row := pass >= keyPasses
		shift := uint32(pass * sortBits)
		if row {
			shift = uint32((pass - keyPasses) * sortBits)
		}
		var hts, sts []*tensor.Tensor
		role := "key"
		if row {
			role = "row"
			hts = []*tensor.Tensor{idx[cur], hist}
			sts = []*tensor.Tensor{idx[cur], hist, idx[1-cur]}
		} else {
			hts = []*tensor.Tensor{keys[cur], hist}
			sts = []*tensor.Tensor{keys[cur], idx[cur], hist, keys[1-cur], idx[1-cur]}
		}
		push := []any{s.total, s.n, nblocks, shift}
		parity := string(rune('0' + cur))
		if err := s.step("hist."+role+parity, func() string { return sortHistSource(kt, row) }, hts, bgroups, push...); err != nil {
			return nil, err
		}
		if err := scan(); err != nil {
			return nil, err
		}
		if err := s.step("scatter."+role+parity, func() string { return sortScatterSource(kt, row) }, sts, bgroups, push...); err != nil {
			return nil, err
		}
		cur = 1 - cur
	}
	return idx[cur], nil
}

// scanPlan makes the scratch tensors of an exclusive scan of data (uint32)
// and returns a function that records the scan: chunks of sortTile scanned
// in place, their totals scanned the same way (recursively), and added
// back.
func (s *sorter) scanPlan(data *tensor.Tensor) (func() error, error) {
	type level struct {
		data, sums *tensor.Tensor
		m, chunks  uint32
		groups     [3]uint32
		add        [3]uint32
	}
	var levels []level
	for d, m := data, uint32(data.Len()); ; {
		chunks := (m + sortTile - 1) / sortTile
		sums, err := s.op.Temp(tensor.Uint32, []int{int(chunks)})
		if err != nil {
			return nil, err
		}
		g, err := s.op.Grid(uint64(chunks)*sortLocal, sortLocal)
		if err != nil {
			return nil, err
		}
		a, err := s.op.Grid(uint64(m), LocalSize)
		if err != nil {
			return nil, err
		}
		levels = append(levels, level{data: d, sums: sums, m: m, chunks: chunks, groups: g, add: a})
		if chunks == 1 {
			break
		}
		d, m = sums, chunks
	}
	return func() error {
		for i, l := range levels {
			role := "scan" + string(rune('0'+i))
			if err := s.step(role, sortScanSource, []*tensor.Tensor{l.data, l.sums}, l.groups, l.m, l.chunks); err != nil {
				return err
			}
		}
		for i := len(levels) - 2; i >= 0; i-- {
			l := levels[i]
			role := "add" + string(rune('0'+i))
			if err := s.step(role, sortScanAddSource, []*tensor.Tensor{l.data, l.sums}, l.add, l.m); err != nil {
				return err
			}
		}
		return nil
	}, nil
}
