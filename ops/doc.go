// Package ops is vkflow's operator library: element-wise arithmetic with
// NumPy broadcasting, casts, reductions along axes, matmul, softmax,
// permutes, stable sorts (Sort, Argsort) and SearchSorted over tensors of
// every dtype the op makes sense for, the gradient rules of every
// differentiable op (GradientOf, Stream.VJP, Tape), and a registry where
// users add their own kernels by name, as GLSL compiled at run time or as
// SPIR-V.
//
// The domains have packages of their own, as CuPy's: ops/linalg (the
// array API's linalg extension: solve, inv, det, cholesky, qr, eigh, svd,
// pinv, norms, products), ops/fft (the discrete Fourier transforms) and
// ops/render (the differentiable soft rasterizer), each op with its
// schema and its VJP beside it. They register their ops in this registry, so Call, Stream.Call, graphs, the C API and Python
// reach them by name; importing ops links them. Their Go functions here
// (ops.Solve, ops.FFT, ...) are deprecated forwards to those packages.
//
// This package is a facade over ops/internal/opcore, where the core is
// built (the kernel building the op packages share, the registry, the
// element-wise, reduction, manipulation and matmul ops, streams and the
// gradient tape): its types are aliases, so the methods of Op, Stream,
// Tape and GradBuilder are documented there.
//
// An op is prepared once over its tensors (Prepare, or the typed
// functions such as Add and Matmul) and gives an *Op: its pipelines and
// dispatches. An Op records into a sequence (Record), into a graph as
// nodes (AddTo), or runs on its own (Run). Call does prepare, run and
// close in one step, for code that computes now:
//
//	outs, err := ops.Call(ctx, mgr, "add", []*tensor.Tensor{a, b}, nil, ops.Attrs{})
//
// Eager calls, as NumPy, CuPy or PyTorch users make them, go to a Stream
// (DefaultStream: the Manager's own on queue 0, which the C API and Python
// use). A call returns once it is submitted; the GPU orders it after the
// calls that wrote its inputs, and the host waits only when it reads
// (Tensor.Wait, Stream.Synchronize). Prepared ops are cached by op,
// attributes, dtypes, shapes and aliasing, so a repeated call costs a bind
// and a submit:
//
//	s, err := ops.DefaultStream(mgr)
//	outs, err := s.Call("add", []*tensor.Tensor{a, b}, nil, ops.Attrs{})
//	err = outs[0].Wait(ctx) // then read it on the host
//
// Outputs are given, or allocated when nil (the caller owns them). The
// inputs of a binary element-wise op (and Where's a and b) of different
// dtypes compute in their promoted dtype, by the array API standard's
// table (ResultType: within a kind only, int8 with uint8 is int16); other
// mixed dtypes are an error naming the dtypes, never a silent conversion:
// cast first (Cast). A dtype an op does not take is an error
// naming it; a dtype the device cannot compute in (float64 without
// shaderFloat64, say) is ErrUnsupported naming the feature.
//
// An op whose output shape depends on its input's values (nonzero, and
// Compact, the stream compaction under it) runs on a Stream as several
// queued steps and reads only a count back to the host in between;
// Stream.Call and Call run it by name, Prepare refuses it.
//
// Kernels are GLSL generated per op, dtype and layout, compiled through
// package glsl (libshaderc, loaded at run time) and cached by source hash
// in memory and on disk.
//
// Ownership: an Op owns its pipelines, scratch buffers and the sequence
// Run uses; its inputs and outputs belong to the caller. A Stream owns its
// prepared ops and sequences. Close is idempotent.
package ops
