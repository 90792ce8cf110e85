package opcore

import (
	"fmt"

	"github.com/vkflow/vkflow/tensor"
)

// Type promotion: a binary element-wise op (and Where's a and b) given two
// dtypes computes in their promoted dtype, as the array API standard's
// promotion table defines it (ResultType), and never across kinds:
//
//   - bool only with bool;
//   - signed integers: the wider (int8 with int32 is int32);
//   - unsigned integers: the wider (uint8 with uint16 is uint16);
//   - a signed and an unsigned integer: the signed one when it is wider,
//     else the signed dtype twice the unsigned one's width (uint8 with
//     int8 is int16, uint32 with int32 is int64); uint64 with any signed
//     dtype has none (no dtype holds both ranges);
//   - floats: the wider (float16 with float32 is float32);
//   - complex with complex or a float: the complex dtype whose parts hold
//     both (complex64 with float64 is complex128, complex64 with float16
//     or float32 is complex64).
//
// Integers with floats, and bool with numbers, have no promotion: the op
// is ErrInvalid, naming both dtypes (Cast one of them). The narrower input
// is converted in the kernel as it is loaded, exactly (every promotion is
// value-preserving), so the result equals computing on inputs Cast to the
// promoted dtype, in one dispatch.

// ResultType returns the dtype the array API standard promotes a and b to,
// and false when the standard defines none (see above).
func ResultType(a, b tensor.Dtype) (tensor.Dtype, bool) {
	if !a.Valid() || !b.Valid() {
		return 0, false
	}
	if a == b {
		return a, true
	}
	switch {
	case a.IsComplex() || b.IsComplex():
		return complexResult(a, b)
	case IsFloat(a) && IsFloat(b), isSigned(a) && isSigned(b), isUnsigned(a) && isUnsigned(b):
		if a.Size() >= b.Size() {
			return a, true
		}
		return b, true
	case isUnsigned(a) && isSigned(b):
		a, b = b, a
		fallthrough
	case isSigned(a) && isUnsigned(b):
		// a signed, b unsigned.
		if a.Size() > b.Size() {
			return a, true
		}
		switch b.Size() {
		case 1:
			return tensor.Int16, true
		case 2:
			return tensor.Int32, true
		case 4:
			return tensor.Int64, true
		}
	}
	return 0, false
}

// promoteErr explains why a and b (different dtypes) have no promotion.
func promoteErr(what string, a, b tensor.Dtype) string {
	why := "the array API standard promotes only within a kind (bool, integers, floats and complex)"
	if (a == tensor.Uint64 && isSigned(b)) || (b == tensor.Uint64 && isSigned(a)) {
		why = "no integer dtype holds every value of both"
	}
	return fmt.Sprintf("%s have dtypes %v and %v, which have no promotion: %s; Cast one of them", what, a, b, why)
}

// promoted returns the dtype inputs of dtypes a and b compute in, or the
// op's error naming both.
func (op *Op) promoted(what string, a, b tensor.Dtype) (tensor.Dtype, error) {
	dt, ok := ResultType(a, b)
	if !ok {
		return 0, op.Errorf("%s", promoteErr(what, a, b))
	}
	return dt, nil
}

// loadAs is the GLSL expression converting v, a value of src's compute
// type, to dst's compute type; value-preserving for every promotion.
func loadAs(src, dst tensor.Dtype, v string) string {
	cin, cout := ComputeType(src), ComputeType(dst)
	switch {
	case cin == cout:
		return v
	case dst.IsComplex() && !src.IsComplex():
		return fmt.Sprintf("%s(%s(%s), 0)", cout, ComputeType(dst.Real()), v)
	case dst == tensor.Int64 && isUnsigned(src):
		return fmt.Sprintf("int64_t(uint64_t(%s))", v)
	}
	return fmt.Sprintf("%s(%s)", cout, v)
}
