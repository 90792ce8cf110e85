// The ops API over its core, ops/internal/opcore: types are aliases, functions forward.

package ops

import (
	"github.com/vkflow/vkflow/ops/internal/opcore"
	"github.com/vkflow/vkflow/tensor"
)

// Argsort returns the int64 indices that sort x along axis ("argsort";
// Attrs as Sort's): out[..., i, ...] is the position in its row of the
// element Sort puts at i, so ties are in increasing index order, for
// descending too. out is int64 of x's shape (allocated when nil).
func Argsort(o Owner, x *tensor.Tensor, axis int, descending bool, out *tensor.Tensor) (*Op, error) {
	return opcore.Argsort(o, x, axis, descending, out)
}

// BroadcastTo copies x broadcast to shape ("broadcast_to"; Attrs.Shape)
// by NumPy's rules: x's dimensions, aligned at the end, are 1 or equal to
// shape's. One copy (source stride 0 along broadcast axes).
func BroadcastTo(o Owner, x *tensor.Tensor, shape []int, out *tensor.Tensor) (*Op, error) {
	return opcore.BroadcastTo(o, x, shape, out)
}

// Compact queues on s the flat (C-order) indices of the nonzero elements
// of flags, of any shape and dtype, as an int64 tensor [count]: the
// stream compaction under nonzero, for ops that gather by a predicate (a
// mask, the first element of each run of a sorted array). Otherwise as
// Nonzero.
func Compact(s *Stream, flags *tensor.Tensor) (*tensor.Tensor, error) {
	return opcore.Compact(s, flags)
}

// Concat joins xs along axis ("concat"; Attrs.Axes: one axis, nil 0): the
// xs share dtype and rank, and their shapes agree but along axis. A
// negative axis counts from the end. One copy per input.
func Concat(o Owner, xs []*tensor.Tensor, axis int, out *tensor.Tensor) (*Op, error) {
	return opcore.Concat(o, xs, axis, out)
}

// Flip reverses x along axes ("flip"; Attrs.Axes, nil: every axis). One
// copy with negative source strides.
func Flip(o Owner, x *tensor.Tensor, axes []int, out *tensor.Tensor) (*Op, error) {
	return opcore.Flip(o, x, axes, out)
}

// Gather is NumPy's integer-array indexing of k consecutive axes ("gather";
// Attrs.Axes: the first of them, default 0): the index arrays idx (k of
// them, any integer dtypes) broadcast together to a shape B, and
// result[p..., b..., q...] = x[p..., idx0[b], ..., idx(k-1)[b], q...], of
// shape x.shape[:axis] + B + x.shape[axis+k:]. Negative indices count from
// the end; indices still out of range are clamped to the axis.
func Gather(o Owner, x *tensor.Tensor, idx []*tensor.Tensor, axis int, out *tensor.Tensor) (*Op, error) {
	return opcore.Gather(o, x, idx, axis, out)
}

// Nonzero queues on s the indices of x's nonzero elements ("nonzero"): an
// int64 tensor [ndim, count], row d holding the coordinates along axis d
// of the count nonzero elements, in C (row-major) order. Nonzero means x
// != 0: true for bool, NaN counts, -0.0 does not. Every dtype; x must have
// at least one dimension. The count is read back to the host (Nonzero
// waits for the work before it on s); the flags, the scan and the scatter
// run on the GPU. The caller owns the result.
func Nonzero(s *Stream, x *tensor.Tensor) (*tensor.Tensor, error) {
	return opcore.Nonzero(s, x)
}

// Repeat repeats each element of x repeats times along axis ("repeat";
// Attrs.Repeats, Attrs.Axes: one axis, or nil for the flattened x). One
// copy. (Per-element counts, which give a data-dependent shape, are the
// Python layer's: it reads the counts.)
func Repeat(o Owner, x *tensor.Tensor, repeats int, axes []int, out *tensor.Tensor) (*Op, error) {
	return opcore.Repeat(o, x, repeats, axes, out)
}

// Roll shifts x's elements along axes by shift, wrapping around ("roll";
// Attrs.Shift and Attrs.Axes): with no axes, x is rolled as if flattened
// (one shift); else shift has one entry per axis, or one for all of them,
// and repeated axes add their shifts, as in NumPy. Up to 2^len(axes)
// copies (the blocks that wrap).
func Roll(o Owner, x *tensor.Tensor, shift []int, axes []int, out *tensor.Tensor) (*Op, error) {
	return opcore.Roll(o, x, shift, axes, out)
}

// Scatter writes values into dst at integer-array indices, the inverse of
// Gather ("scatter"; the output is the destination, given and written in
// place): dst[p..., idx0[b], ..., idx(k-1)[b], q...] = values[p..., b...,
// q...], values broadcast to dst.shape[:axis] + B + dst.shape[axis+k:]
// and of dst's dtype. Negative indices count from the end; a write whose
// index is still out of range is dropped. Where indices repeat, one of the
// writes wins, unspecified which.
func Scatter(o Owner, values *tensor.Tensor, idx []*tensor.Tensor, axis int, dst *tensor.Tensor) (*Op, error) {
	return opcore.Scatter(o, values, idx, axis, dst)
}

// SearchSorted finds, for each element v of x2, where it goes in the
// sorted 1-d x1 ("searchsorted"; inputs x1, x2 and optionally sorter;
// Attrs.Side "left", the default, or "right"): out (int64, x2's shape,
// allocated when nil) is the first i with v <= x1[i] (left) or v < x1[i]
// (right), len(x1) when there is none. x1 and x2 have the same dtype, any
// real one.
//
// sorter, when not nil, holds the indices (any integer dtype, x1's shape)
// that sort x1 ascending, as Argsort gives them; x1 is then read through
// them. Indices out of [0, len(x1)) are clamped into it (the result is
// then meaningless, but no memory outside x1 is read).
//
// The order is Sort's: -0 equals +0 and NaN is after +Inf, so a NaN goes
// before x1's first NaN (left) or at its end (right), and inserting each
// v at its index keeps x1 as Sort sorts it. Each element is one binary
// search of at most 33 steps.
func SearchSorted(o Owner, x1 *tensor.Tensor, x2 *tensor.Tensor, right bool, sorter *tensor.Tensor, out *tensor.Tensor) (*Op, error) {
	return opcore.SearchSorted(o, x1, x2, right, sorter, out)
}

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
	return opcore.Sort(o, x, axis, descending, out)
}

// SortWithIndices is Sort and Argsort in one op, over one radix sort: its
// outputs are the sorted values, then their int64 indices (each allocated
// when nil). Ops built on a sort (unique values with their inverse
// indices, say) start from it.
func SortWithIndices(o Owner, x *tensor.Tensor, axis int, descending bool, values *tensor.Tensor, indices *tensor.Tensor) (*Op, error) {
	return opcore.SortWithIndices(o, x, axis, descending, values, indices)
}

// Stack joins xs, all of one dtype and shape, along a new axis ("stack";
// Attrs.Axes: one axis, nil 0, in [-(rank+1), rank]).
func Stack(o Owner, xs []*tensor.Tensor, axis int, out *tensor.Tensor) (*Op, error) {
	return opcore.Stack(o, xs, axis, out)
}

// StridedCopy builds strided_copy (see above) from at's Shape, SrcOffset,
// SrcStrides, DstOffset and DstStrides.
func StridedCopy(o Owner, src *tensor.Tensor, dst *tensor.Tensor, at Attrs) (*Op, error) {
	return opcore.StridedCopy(o, src, dst, at)
}

// Take gathers x's elements along axis at the integer indices idx
// ("take"; Attrs.Axes: one axis, nil only for a 1-d x): the result has
// shape x.shape[:axis] + idx.shape + x.shape[axis+1:]. Negative indices
// count from the end; indices still out of range are clamped.
func Take(o Owner, x *tensor.Tensor, idx *tensor.Tensor, axis *int, out *tensor.Tensor) (*Op, error) {
	return opcore.Take(o, x, idx, axis, out)
}

// Tile repeats x reps times along each axis ("tile"; Attrs.Reps): reps
// shorter than x's rank is padded with leading 1s, longer pads x's shape
// with leading 1s, as in NumPy. One copy, where each tiled axis of size
// over 1 takes one more dimension (at most 8 in all).
func Tile(o Owner, x *tensor.Tensor, reps []int, out *tensor.Tensor) (*Op, error) {
	return opcore.Tile(o, x, reps, out)
}

// Transpose prepares out = x with its dimensions permuted, as NumPy's
// transpose: dimension i of out is dimension perm[i] of x; negative
// entries count from the end; perm nil reverses the dimensions. Any
// dtype; elements are moved bit for bit. out nil allocates it; it must not
// share memory with x.
//
// Dimensions that stay neighbours are merged first. A transpose of the
// last two (merged) dimensions, batched or not, goes through 32×32 tiles
// in shared memory, so reads and writes both walk memory in order (in
// 4-vectors for 4-byte elements when both sides are multiples of 4);
// other permutations gather, one invocation per output element.
func Transpose(o Owner, x *tensor.Tensor, perm []int, out *tensor.Tensor) (*Op, error) {
	return opcore.Transpose(o, x, perm, out)
}

// Tril keeps the lower triangle of each matrix of x (its last two
// dimensions; leading ones are a batch) and zeroes the rest ("tril";
// Attrs.K): element (i, j) stays where j - i <= k. k = 0 is the main
// diagonal, k > 0 diagonals above it, k < 0 below. Every dtype.
func Tril(o Owner, x *tensor.Tensor, k int, out *tensor.Tensor) (*Op, error) {
	return opcore.Tril(o, x, k, out)
}

// Triu keeps the upper triangle, j - i >= k ("triu"); otherwise as Tril.
func Triu(o Owner, x *tensor.Tensor, k int, out *tensor.Tensor) (*Op, error) {
	return opcore.Triu(o, x, k, out)
}

// Unique queues on s the set functions' four results of x: its distinct
// values, the index of each one's first occurrence, the inverse indices
// (x's shape: where each element of x is in values) and the counts (see
// above). The caller owns them. The number of distinct values is read
// back to the host (Unique waits for the work before it on s).
func Unique(s *Stream, x *tensor.Tensor) (values *tensor.Tensor, indices *tensor.Tensor, inverse *tensor.Tensor, counts *tensor.Tensor, err error) {
	return opcore.Unique(s, x)
}
