// Package algorithm builds compute pipelines from SPIR-V.
//
// An Algorithm is a SPIR-V module, its pipeline, and the tensors currently
// bound to it. New reflects the module (entry point, bindings and their
// read/write access, push constant size, local size, specialization
// constants) and checks the bound tensors and constants against it, so a
// binding count or constant of the wrong size is an error at the API
// boundary, not a driver crash.
//
// Bind re-binds tensors without rebuilding the pipeline: each dispatch a
// sequence records takes a snapshot of the current bindings in a descriptor
// set of its own, so earlier recordings keep their tensors.
//
// Push constants are given to Sequence.Dispatch as typed Go values and
// encoded with Push; specialization constants with Spec. Workgroups are
// given with Workgroups, or derived from the first tensor's length, the
// local size and ItemsPerInvocation.
//
// Ownership: the Manager owns every Algorithm; an Algorithm holds a
// reference on each bound tensor until it is re-bound or closed. All
// algorithms of a device share its pipeline cache.
//
// Imports: vk, internal/core, internal/spirv and tensor.
package algorithm
