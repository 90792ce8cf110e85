package opcore

import (
	"fmt"
	"math"
	"strings"

	"github.com/vkflow/vkflow/tensor"
)

// GLSL functions the reduction and softmax kernels share: identities,
// combining, argmax's comparison, and exp for float64.

// identity returns a GLSL expression for the identity of kind over the
// accumulator type acc.
func identity(kind ReduceKind, acc tensor.Dtype) string {
	t := GLSLType(acc)
	switch {
	case acc.IsComplex() && kind == kindProd:
		return t + "(1, 0)"
	case acc.IsComplex():
		return t + "(0)" // complex has no max or min: never used
	}
	switch kind {
	case KindSum:
		return t + "(0)"
	case kindProd:
		return t + "(1)"
	case KindMax, kindArgmax:
		switch acc {
		case tensor.Float32:
			return "uintBitsToFloat(0xff800000u)"
		case tensor.Float64:
			return "packDouble2x32(uvec2(0u, 0xfff00000u))"
		case tensor.Int32:
			return "int(0x80000000u)"
		case tensor.Int64:
			return "int64_t(0x8000000000000000ul)"
		case tensor.Uint64:
			return "0ul"
		}
		return "0u"
	case KindMin:
		switch acc {
		case tensor.Float32:
			return "uintBitsToFloat(0x7f800000u)"
		case tensor.Float64:
			return "packDouble2x32(uvec2(0u, 0x7ff00000u))"
		case tensor.Int32:
			return "0x7fffffff"
		case tensor.Int64:
			return "int64_t(0x7ffffffffffffffful)"
		case tensor.Uint64:
			return "0xfffffffffffffffful"
		}
		return "0xffffffffu"
	}
	return "invalid"
}

// nanLiteral returns a quiet NaN of acc.
func nanLiteral(acc tensor.Dtype) string {
	if acc == tensor.Float64 {
		return "packDouble2x32(uvec2(0u, 0x7ff80000u))"
	}
	return "uintBitsToFloat(0x7fc00000u)"
}

// combineGLSL defines ident(), the identity, and comb(a, b) for the kind
// given by KIND, and, with subgroup, sgop(v) over the whole subgroup. Max
// and min propagate NaN, as NumPy's do. The branches on KIND are on a
// specialization constant: the driver's compiler keeps only one.
func combineGLSL(acc tensor.Dtype, subgroup bool) string {
	t := GLSLType(acc)
	var b strings.Builder
	kinds := []ReduceKind{KindSum, kindProd, KindMax, KindMin}
	fmt.Fprintf(&b, "%s ident() {\n", t)
	for _, k := range kinds {
		fmt.Fprintf(&b, "\tif (KIND == %du) return %s;\n", k, identity(k, acc))
	}
	fmt.Fprintf(&b, "\treturn %s(0);\n}\n", t)
	comb := map[ReduceKind]string{KindSum: "a + b", kindProd: "a * b"}
	if acc.IsComplex() {
		// Complex products; max and min are never asked of complex.
		b.WriteString(ComplexGLSL(acc))
		comb[kindProd] = Cfn("cmul", acc, "a, b")
	}
	sg := map[ReduceKind]string{KindSum: "subgroupAdd(v)", kindProd: "subgroupMul(v)"}
	for _, k := range []ReduceKind{KindMax, KindMin} {
		fn, cmp := "Max", ">"
		if k == KindMin {
			fn, cmp = "Min", "<"
		}
		if IsFloat(acc) {
			comb[k] = fmt.Sprintf("(a %s b || isnan(a)) ? a : b", cmp)
			// Subgroup min/max leave NaN undefined: reduce without
			// NaNs and put one back where any lane had one.
			sg[k] = fmt.Sprintf("subgroupOr(isnan(v) ? 1u : 0u) != 0u ? %s : subgroup%s(isnan(v) ? %s : v)", nanLiteral(acc), fn, identity(k, acc))
		} else {
			comb[k] = strings.ToLower(fn) + "(a, b)"
			sg[k] = "subgroup" + fn + "(v)"
		}
	}
	fmt.Fprintf(&b, "%[1]s comb(%[1]s a, %[1]s b) {\n", t)
	for _, k := range kinds {
		fmt.Fprintf(&b, "\tif (KIND == %du) return %s;\n", k, comb[k])
	}
	b.WriteString("\treturn a;\n}\n")
	if subgroup {
		fmt.Fprintf(&b, "%[1]s sgop(%[1]s v) {\n", t)
		for _, k := range kinds {
			fmt.Fprintf(&b, "\tif (KIND == %du) return %s;\n", k, sg[k])
		}
		b.WriteString("\treturn v;\n}\n")
	}
	return b.String()
}

// betterGLSL defines bool better(ACC a, uint ia, ACC b, uint ib): whether
// (a, ia) wins argmax over (b, ib): the larger value, NaN above all, the
// lower index among equals (NumPy's first occurrence).
func betterGLSL(acc tensor.Dtype) string {
	t := GLSLType(acc)
	if IsFloat(acc) {
		return fmt.Sprintf(`bool better(%[1]s a, uint ia, %[1]s b, uint ib) {
	if (isnan(a)) return !isnan(b) || ia < ib;
	if (isnan(b)) return false;
	return a > b || (a == b && ia < ib);
}
`, t)
	}
	return fmt.Sprintf("bool better(%[1]s a, uint ia, %[1]s b, uint ib) { return a > b || (a == b && ia < ib); }\n", t)
}

// dexpGLSL defines double dexp(double x): GLSL has no double exp. Range
// reduction x = k ln2 + r, |r| <= ln2/2 (ln2 split in a high part whose
// products with k are exact and a low part), a degree-13 Taylor
// polynomial (truncation below 1e-17 relative), then ldexp.
func dexpGLSL() string {
	var b strings.Builder
	b.WriteString(`double dexp(double x) {
	if (isnan(x)) return x;
	if (x > 709.782712893384LF) return packDouble2x32(uvec2(0u, 0x7ff00000u));
	if (x < -745.2LF) return 0.0LF;
	double k = floor(x * 1.4426950408889634LF + 0.5LF);
	double r = (x - k * 6.93147180369123816490e-01LF) - k * 1.90821492927058770002e-10LF;
`)
	fact := 1.0
	coef := make([]float64, 14)
	for i := range coef {
		if i > 0 {
			fact *= float64(i)
		}
		coef[i] = 1 / fact
	}
	fmt.Fprintf(&b, "\tdouble p = %sLF;\n", fmtDouble(coef[13]))
	for i := 12; i >= 0; i-- {
		fmt.Fprintf(&b, "\tp = p * r + %sLF;\n", fmtDouble(coef[i]))
	}
	b.WriteString("\treturn ldexp(p, int(k));\n}\n")
	return b.String()
}

func fmtDouble(v float64) string {
	s := fmt.Sprintf("%.17g", v)
	if !strings.ContainsAny(s, ".e") {
		s += ".0"
	}
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return "0.0"
	}
	return s
}

// expFn returns the GLSL exp of acc.
func expFn(acc tensor.Dtype) string {
	if acc == tensor.Float64 {
		return "dexp"
	}
	return "exp"
}
