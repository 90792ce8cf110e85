// Package shaders owns the GLSL compute shaders of vkflow and their compiled
// SPIR-V.
//
// Each shader lives here twice: as GLSL source (X.comp) and as the SPIR-V
// that glslc produces from it (X.spv). Both are committed, so building the
// module needs no shader compiler; the SPIR-V is embedded in the binary and
// exposed as the byte slices Mul, MulVec4, Add, AddVec4, Saxpy, LogRegGrad,
// LogRegUpdate, Raster and Blend (the last two for examples/rasterblend),
// and through FS for code that wants to look shaders up by file name.
//
// After editing a .comp file, rebuild the SPIR-V with
//
//	make shaders
//
// which runs tools/glslc.sh (glslc --target-env=vulkan1.2 -O, no debug
// information, so the output is reproducible). tools/glslc.sh --check
// recompiles into a temporary folder and fails if any committed .spv differs
// from what its source compiles to.
//
// All shaders use descriptor set 0 and std430 storage buffers of float data;
// all but Raster (16x16) have a one-dimensional workgroup. The interface of each one (bindings, access,
// push constants, workgroup size) is described at the top of its .comp file
// and in the comments of the variables below. Host code relies on those
// interfaces; change them only together with the code that dispatches them.
//
// The package imports nothing from the rest of the module, so any package may
// depend on it.
package shaders
