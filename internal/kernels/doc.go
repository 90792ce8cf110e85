// Package kernels builds fixed algorithms from the SPIR-V in package
// shaders: element-wise multiply and add over float32 (vec4 variants when
// the length is a multiple of 4) and saxpy. They are the test fixtures of
// vkflow's own packages and the kernels the C API's sequences name; the
// operator library for users is package ops.
//
// Each constructor checks dtypes and sizes and returns an
// *algorithm.Algorithm: dispatch it with a sequence or a graph, passing
// the push constants the constructor documents.
//
// Imports: algorithm, tensor, shaders and internal/core.
package kernels
