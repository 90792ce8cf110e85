package tensor

import (
	"fmt"
	"math"
)

// Dtype is an element type.
type Dtype uint8

// Element types.
const (
	Float16 Dtype = iota + 1
	Float32
	Float64
	Int8
	Int16
	Int32
	Int64
	Uint8
	Uint16
	Uint32
	Uint64
	Bool       // one byte, 0 or 1
	Complex64  // a pair of float32: real, then imaginary (as C's float complex)
	Complex128 // a pair of float64: real, then imaginary
)

var dtypeInfo = [...]struct {
	name string
	size int
}{
	Float16: {"float16", 2}, Float32: {"float32", 4}, Float64: {"float64", 8},
	Int8: {"int8", 1}, Int16: {"int16", 2}, Int32: {"int32", 4}, Int64: {"int64", 8},
	Uint8: {"uint8", 1}, Uint16: {"uint16", 2}, Uint32: {"uint32", 4}, Uint64: {"uint64", 8},
	Bool: {"bool", 1}, Complex64: {"complex64", 8}, Complex128: {"complex128", 16},
}

// Valid reports whether d is a known dtype.
func (d Dtype) Valid() bool { return d >= Float16 && d <= Complex128 }

// IsComplex reports whether d is Complex64 or Complex128.
func (d Dtype) IsComplex() bool { return d == Complex64 || d == Complex128 }

// Real returns the dtype of one component of a complex dtype (Float32 for
// Complex64, Float64 for Complex128), and d itself for any other dtype.
func (d Dtype) Real() Dtype {
	switch d {
	case Complex64:
		return Float32
	case Complex128:
		return Float64
	}
	return d
}

// Size returns the size of one element in bytes.
func (d Dtype) Size() int {
	if !d.Valid() {
		return 0
	}
	return dtypeInfo[d].size
}

func (d Dtype) String() string {
	if !d.Valid() {
		return fmt.Sprintf("Dtype(%d)", uint8(d))
	}
	return dtypeInfo[d].name
}

// Dtypes lists every dtype but the complex ones (Complex64, Complex128):
// the real dtypes, which every op over "each dtype" (casts, comparisons,
// reductions) takes alike. ComplexDtypes lists the others.
func Dtypes() []Dtype {
	return []Dtype{Float16, Float32, Float64, Int8, Int16, Int32, Int64, Uint8, Uint16, Uint32, Uint64, Bool}
}

// ComplexDtypes lists the complex dtypes; with Dtypes, every dtype.
func ComplexDtypes() []Dtype { return []Dtype{Complex64, Complex128} }

// DtypeByName returns the dtype whose String is name ("float32",
// "complex64", ...), complex dtypes included.
func DtypeByName(name string) (Dtype, bool) {
	for d := Float16; d.Valid(); d++ {
		if d.String() == name {
			return d, true
		}
	}
	return 0, false
}

// Half is an IEEE 754 binary16 value, stored as its bits.
type Half uint16

// HalfFrom converts f to the nearest binary16 value (round to nearest
// even), with overflow to infinity and NaN kept NaN.
func HalfFrom(f float32) Half {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23) & 0xff
	mant := b & 0x7fffff
	switch {
	case exp == 0xff: // Inf or NaN
		if mant != 0 {
			return Half(sign | 0x7e00)
		}
		return Half(sign | 0x7c00)
	case exp-127 > 15: // overflow
		return Half(sign | 0x7c00)
	case exp-127 >= -14: // normal
		e := uint32(exp-127+15) << 10
		m := mant >> 13
		h := uint32(sign) | e | m
		// round to nearest even on the 13 dropped bits
		rest := mant & 0x1fff
		if rest > 0x1000 || (rest == 0x1000 && m&1 == 1) {
			h++ // may carry into the exponent, which is correct
		}
		return Half(h)
	case exp-127 >= -25: // subnormal
		mant |= 0x800000
		shift := uint32(-(exp - 127) - 14 + 13)
		m := mant >> shift
		rest := mant & (1<<shift - 1)
		half := uint32(1) << (shift - 1)
		if rest > half || (rest == half && m&1 == 1) {
			m++
		}
		return Half(uint32(sign) | m)
	default:
		return Half(sign)
	}
}

// Float32 converts h to float32 exactly.
func (h Half) Float32() float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	case exp != 0:
		return math.Float32frombits(sign | (exp+127-15)<<23 | mant<<13)
	case mant == 0:
		return math.Float32frombits(sign)
	default: // subnormal: normalize
		e := uint32(127 - 15 + 1)
		for mant&0x400 == 0 {
			mant <<= 1
			e--
		}
		mant &= 0x3ff
		return math.Float32frombits(sign | e<<23 | mant<<13)
	}
}

// Elem is the set of Go element types a tensor can hold.
type Elem interface {
	Half | float32 | float64 | int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64 | bool |
		complex64 | complex128
}

// DtypeOf returns the dtype of Go element type T.
func DtypeOf[T Elem]() Dtype {
	var z T
	switch any(z).(type) {
	case Half:
		return Float16
	case float32:
		return Float32
	case float64:
		return Float64
	case int8:
		return Int8
	case int16:
		return Int16
	case int32:
		return Int32
	case int64:
		return Int64
	case uint8:
		return Uint8
	case uint16:
		return Uint16
	case uint32:
		return Uint32
	case uint64:
		return Uint64
	case bool:
		return Bool
	case complex64:
		return Complex64
	case complex128:
		return Complex128
	}
	return 0
}
