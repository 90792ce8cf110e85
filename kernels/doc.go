// Package kernels is the former home of vkflow's built-in algorithms. It
// remains so that programs written against it build and run unchanged:
// every identifier forwards to its new home.
//
//   - Multiply, MultiplyScalar, Add and Saxpy build the same fixed float32
//     algorithms as before (vec4 shaders for Multiply and Add when the
//     length is a multiple of 4) and return an *algorithm.Algorithm to
//     dispatch with a sequence or a graph.
//   - LogRegStep is ops.LogRegStep, and LogReg is ops.LogReg: Record
//     appends a training step (two dispatches) to a sequence.
//
// New code should use the operator library, package ops: ops.Mul and
// ops.Add (any dtype, with broadcasting), ops.LogRegStep, and the
// registry for kernels of one's own.
//
// Imports: algorithm, tensor, ops and internal/kernels.
//
// Deprecated: use package ops. Multiply and MultiplyScalar become ops.Mul,
// Add becomes ops.Add, Saxpy becomes ops.Mul then ops.Add (or
// algorithm.New with shaders.Saxpy), and LogRegStep becomes
// ops.LogRegStep.
package kernels
