package opcore

import (
	"fmt"

	"github.com/vkflow/vkflow/tensor"
)

// Bitwise ops (integers, and bool where NumPy takes it) and logical ops
// (bool only). 8- and 16-bit integers compute in 32 bits and wrap on
// store, so ~x and x << n keep the dtype's low bits, as in NumPy.

func init() {
	for name, f := range map[string]func(Owner, *tensor.Tensor, *tensor.Tensor, *tensor.Tensor) (*Op, error){
		"bitwise_and": BitwiseAnd, "bitwise_or": BitwiseOr, "bitwise_xor": BitwiseXor,
		"bitwise_left_shift": BitwiseLeftShift, "bitwise_right_shift": BitwiseRightShift,
		"logical_and": LogicalAnd, "logical_or": LogicalOr, "logical_xor": LogicalXor,
	} {
		builtinBinary(name, f)
	}
	for name, f := range map[string]func(Owner, *tensor.Tensor, *tensor.Tensor) (*Op, error){
		"bitwise_invert": BitwiseInvert, "logical_not": LogicalNot,
	} {
		builtinUnary(name, f)
	}
}

// BitwiseAnd computes a & b element-wise with broadcasting. Dtypes: the
// integer dtypes and bool.
func BitwiseAnd(o Owner, a, b, out *tensor.Tensor) (*Op, error) {
	return binary(o, "bitwise_and", a, b, out)
}

// BitwiseOr computes a | b element-wise with broadcasting. Dtypes: the
// integer dtypes and bool.
func BitwiseOr(o Owner, a, b, out *tensor.Tensor) (*Op, error) {
	return binary(o, "bitwise_or", a, b, out)
}

// BitwiseXor computes a ^ b element-wise with broadcasting. Dtypes: the
// integer dtypes and bool.
func BitwiseXor(o Owner, a, b, out *tensor.Tensor) (*Op, error) {
	return binary(o, "bitwise_xor", a, b, out)
}

// BitwiseInvert computes ~x element-wise (NumPy's invert): every bit
// flipped, so -x-1 for signed integers and max-x for unsigned ones. For
// bool it is logical not. Dtypes: the integer dtypes and bool.
func BitwiseInvert(o Owner, x, out *tensor.Tensor) (*Op, error) {
	return unary(o, "bitwise_invert", x, out)
}

func invertExpr(_ *Op, dt tensor.Dtype) (string, string, error) {
	if dt == tensor.Bool {
		return "a0 ^ 1u", "", nil
	}
	return "~a0", "", nil
}

// BitwiseLeftShift computes a << b element-wise with broadcasting, as
// NumPy's left_shift: bits shifted past the dtype's width are lost (int8
// 1 << 7 is -128), and a count at or past the width, or negative, gives
// 0 (NumPy compares the count as unsigned). Dtypes: the integer dtypes,
// promoted as for every binary op (ResultType).
func BitwiseLeftShift(o Owner, a, b, out *tensor.Tensor) (*Op, error) {
	return binary(o, "bitwise_left_shift", a, b, out)
}

// BitwiseRightShift computes a >> b element-wise with broadcasting, as
// NumPy's right_shift: arithmetic for signed dtypes, logical for unsigned
// ones; a count at or past the dtype's width, or negative, gives 0, or -1
// for a negative signed a. Dtypes: the integer dtypes.
func BitwiseRightShift(o Owner, a, b, out *tensor.Tensor) (*Op, error) {
	return binary(o, "bitwise_right_shift", a, b, out)
}

// shiftExpr is a shift's expression. GLSL leaves shifts by the compute
// type's width or more undefined, so a count is compared (as unsigned)
// with the dtype's width first, and masked where it is used.
func shiftExpr(left bool) exprFunc {
	return func(_ *Op, dt tensor.Dtype) (string, string, error) {
		ct := ComputeType(dt)
		ut, mask := "uint", 31
		if dt.Size() == 8 {
			ut, mask = "uint64_t", 63
		}
		in := fmt.Sprintf("%[1]s(a1) < %[1]s(%[2]d)", ut, dt.Size()*8)
		by := fmt.Sprintf("(a1 & %s(%d))", ct, mask)
		if left {
			return fmt.Sprintf("(%s) ? (a0 << %s) : %s(0)", in, by, ct), "", nil
		}
		past := fmt.Sprintf("%s(0)", ct)
		if isSigned(dt) {
			past = fmt.Sprintf("(a0 < %[1]s(0) ? %[1]s(-1) : %[1]s(0))", ct)
		}
		return fmt.Sprintf("(%s) ? (a0 >> %s) : %s", in, by, past), "", nil
	}
}

// Logical ops take bool tensors only and give bool; another dtype is
// ErrInvalid naming it (NumPy's logical ops take any dtype as nonzero or
// zero; here, compare or Cast to bool first).

// LogicalAnd computes a AND b element-wise with broadcasting. Dtypes:
// bool.
func LogicalAnd(o Owner, a, b, out *tensor.Tensor) (*Op, error) {
	return binary(o, "logical_and", a, b, out)
}

// LogicalOr computes a OR b element-wise with broadcasting. Dtypes: bool.
func LogicalOr(o Owner, a, b, out *tensor.Tensor) (*Op, error) {
	return binary(o, "logical_or", a, b, out)
}

// LogicalXor computes a XOR b element-wise with broadcasting. Dtypes:
// bool.
func LogicalXor(o Owner, a, b, out *tensor.Tensor) (*Op, error) {
	return binary(o, "logical_xor", a, b, out)
}

// LogicalNot computes NOT x element-wise. Dtypes: bool.
func LogicalNot(o Owner, x, out *tensor.Tensor) (*Op, error) {
	return unary(o, "logical_not", x, out)
}
