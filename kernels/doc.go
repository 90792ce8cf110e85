// Package kernels builds vkflow's built-in algorithms from the SPIR-V in
// package shaders: elementwise multiply and add (vec4 variants when the
// length is a multiple of 4), saxpy, and a logistic-regression training
// step.
//
// Each constructor checks dtypes and sizes. The elementwise ones and Saxpy
// return an *algorithm.Algorithm: dispatch it with a sequence, passing the
// push constants the constructor documents. LogRegStep returns a *LogReg
// whose Record appends a step (two dispatches) to a sequence.
//
// Imports: algorithm, sequence, tensor, shaders and internal/core.
package kernels
