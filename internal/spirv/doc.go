// Package spirv reads the parts of a SPIR-V compute module that a Vulkan
// runtime needs in order to run it: the compute entry point's name, its
// workgroup size, the descriptor bindings it uses and how it accesses them,
// the size of its push constant block, and its specialization constants.
//
// Reflect is pure Go. It does not validate the module
// the way spirv-val does; it checks only what it needs to read the module
// safely, and reports everything it cannot make sense of as an error
// wrapping ErrInvalid. It is meant to be safe on arbitrary input: it never
// panics, and its work grows about linearly with the size of the input
// (type nesting is capped, struct sizes are memoized, and a struct that
// contains itself is an error).
//
// What Reflect understands:
//
//   - the header (little-endian only) and the instruction stream;
//   - OpEntryPoint with the GLCompute execution model (the first one wins);
//   - the workgroup size from OpExecutionMode LocalSize, OpExecutionModeId
//     LocalSizeId, or a constant decorated BuiltIn WorkgroupSize (which,
//     as the SPIR-V specification says, takes precedence), resolving
//     specialization constants to their default values and remembering
//     their SpecIds;
//   - descriptor-bound buffers: variables in the StorageBuffer or Uniform
//     storage class with DescriptorSet and Binding decorations, telling
//     storage buffers (StorageBuffer, or Uniform with a BufferBlock struct)
//     from uniform buffers, and read-only or write-only access from
//     NonWritable and NonReadable decorations, whether on the variable or
//     on every member of its block;
//   - the byte size of the push constant block, from member Offset,
//     ArrayStride and MatrixStride decorations and the scalar, vector,
//     matrix, array and struct types;
//   - scalar specialization constants decorated with SpecId.
//
// Images, samplers, texel buffers, decoration groups and entry points other
// than GLCompute are ignored.
package spirv
