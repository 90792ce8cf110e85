package ops

import "github.com/vkflow/vkflow/tensor"

// complexMathFns names, for each element-wise op that computes on complex
// dtypes through a function of complexMathGLSL, that GLSL function. The
// functions take and return vec2 (complex64: real, imaginary) or dvec2
// (complex128); "pow" takes two arguments.
var complexMathFns = map[string]string{}

// complexMathGLSL returns the GLSL that defines the functions of
// complexMathFns for complex dtype dt.
func complexMathGLSL(dt tensor.Dtype) string { return "" }
