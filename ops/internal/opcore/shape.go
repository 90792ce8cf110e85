package opcore

import (
	"slices"

	"github.com/vkflow/vkflow/internal/core"
)

// MaxRank is the most dimensions an op takes (after merging dimensions
// that can be merged).
const MaxRank = 8

// Numel returns the element count of shape (1 for a 0-d shape).
func Numel(shape []int) int {
	n := 1
	for _, s := range shape {
		n *= s
	}
	return n
}

// BroadcastShapes returns the shape NumPy broadcasting gives shapes:
// aligned at the right, each dimension equal or 1 (a 1 stretches).
func BroadcastShapes(name string, shapes ...[]int) ([]int, error) {
	rank := 0
	for _, s := range shapes {
		rank = max(rank, len(s))
	}
	out := make([]int, rank)
	for i := range out {
		out[i] = 1
	}
	for _, s := range shapes {
		off := rank - len(s)
		for i, d := range s {
			switch o := out[off+i]; {
			case d == o || d == 1:
			case o == 1:
				out[off+i] = d
			default:
				return nil, core.Invalid("ops.%s: shapes %v cannot be broadcast together (dimension %d: %d against %d)", name, shapes, i-len(s), o, d)
			}
		}
	}
	return out, nil
}

// StridesFor returns, for an input of shape in broadcast to out, the
// element stride of each of out's dimensions in the input's row-major
// layout: 0 where the input has no such dimension or stretches a 1.
func StridesFor(in, out []int) []int {
	st := make([]int, len(out))
	off := len(out) - len(in)
	stride := 1
	for i := len(in) - 1; i >= 0; i-- {
		if in[i] != 1 {
			st[off+i] = stride
		}
		stride *= in[i]
	}
	return st
}

// Contiguous returns the row-major strides of shape.
func Contiguous(shape []int) []int {
	st := make([]int, len(shape))
	stride := 1
	for i := len(shape) - 1; i >= 0; i-- {
		st[i] = stride
		stride *= shape[i]
	}
	return st
}

// Merge drops the dimensions of size 1 of shape and merges neighbouring
// dimensions that every stride list walks as one (stride[i] ==
// stride[i+1]*shape[i+1] for all lists), so kernels loop over as few
// dimensions as possible. It returns the new shape and strides.
func Merge(shape []int, strides ...[]int) ([]int, [][]int) {
	var sh []int
	st := make([][]int, len(strides))
	for i, d := range shape {
		if d == 1 {
			continue
		}
		if k := len(sh) - 1; k >= 0 {
			ok := true
			for j := range strides {
				if st[j][k] != strides[j][i]*d {
					ok = false
					break
				}
			}
			if ok {
				sh[k] *= d
				for j := range strides {
					st[j][k] = strides[j][i]
				}
				continue
			}
		}
		sh = append(sh, d)
		for j := range strides {
			st[j] = append(st[j], strides[j][i])
		}
	}
	return sh, st
}

// NormAxes checks axes against rank and returns them non-negative and
// sorted; nil means every axis. A negative axis counts from the end; a
// repeated axis is an error.
func NormAxes(name string, axes []int, rank int) ([]int, error) {
	if axes == nil {
		all := make([]int, rank)
		for i := range all {
			all[i] = i
		}
		return all, nil
	}
	out, err := OrderedAxes(name, axes, rank)
	if err != nil {
		return nil, err
	}
	slices.Sort(out)
	return out, nil
}

// OrderedAxes checks axes against rank and returns them non-negative, in
// their order: ErrInvalid for an axis out of range or repeated.
func OrderedAxes(name string, axes []int, rank int) ([]int, error) {
	out := make([]int, 0, len(axes))
	for _, a := range axes {
		if a < -rank || a >= rank {
			return nil, core.Invalid("ops.%s: axis %d is out of range for %d dimensions", name, a, rank)
		}
		if a < 0 {
			a += rank
		}
		if slices.Contains(out, a) {
			return nil, core.Invalid("ops.%s: axis %d is repeated in %v", name, a, axes)
		}
		out = append(out, a)
	}
	return out, nil
}

// AxisAttr is Attrs.Axes as the one axis of an op that takes one: def
// when nil, ErrInvalid for more than one.
func AxisAttr(name string, axes []int, def int) (int, error) {
	switch len(axes) {
	case 0:
		return def, nil
	case 1:
		return axes[0], nil
	}
	return 0, core.Invalid("ops.%s: takes one axis, not %v", name, axes)
}

// optionalAxis is Attrs.Axes as an op's optional one axis: nil when
// unset, ErrInvalid for more than one.
func optionalAxis(name string, axes []int) (*int, error) {
	if len(axes) == 0 {
		return nil, nil
	}
	a, err := AxisAttr(name, axes, 0)
	return &a, err
}

// padPush appends each of arrs to push as maxRank push constants of type T
// (0 past an array's end): the fixed-size shape and stride arrays of the
// strided, gather and compaction kernels.
func padPush[T int32 | uint32](push []any, arrs ...[]int) []any {
	for _, arr := range arrs {
		for k := range MaxRank {
			var v T
			if k < len(arr) {
				v = T(arr[k])
			}
			push = append(push, v)
		}
	}
	return push
}
