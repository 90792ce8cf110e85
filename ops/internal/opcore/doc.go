// Package opcore is the core of vkflow's operator library, which users
// import as package ops (a facade of aliases over it): an Op and the
// kernel building every op package shares (NewOp, Output, Temp, Dispatch,
// Done, GLSL code generation, reduction layouts, matmul tiles), the
// registry of ops with their schemas and gradient rules (Builtin,
// DefSchema, DefVJP), the element-wise, reduction, manipulation, sort and
// matmul ops, eager streams, and the gradient tape.
//
// The op packages ops/linalg and ops/fft are built on it and register
// their ops here from their init functions. The package documentation of
// ops describes the library as users see it.
package opcore
