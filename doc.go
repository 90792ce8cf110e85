// Package vkflow is a Vulkan compute runtime for Go, built around timeline
// semaphores.
//
// A Manager opens one Vulkan device and its queues. Tensors (package tensor)
// are typed N-d buffers; Algorithms (package algorithm) are SPIR-V compute
// pipelines with push and specialization constants; Sequences (package
// sequence) record operations on one queue and submit them, tracking
// completion with the queue's timeline semaphore. Package kernels has the
// built-in kernels.
//
//	mgr, err := vkflow.New()
//	...
//	defer mgr.Close()
//
// Ownership: the Manager owns everything created from it. Manager.Close
// waits for submitted work, then closes sequences, algorithms, tensors and
// timelines, in that order, then the device and the instance. Every Close is
// idempotent; any other use of a closed object returns an error matching
// ErrClosed.
//
// Imports: vk, internal/core, and (for the Manager's options) nothing of
// tensor, algorithm or sequence; those import core and are imported by
// nothing here. Data flows one way: vk → tensor, timeline → sequence →
// vkflow.
package vkflow
