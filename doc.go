// Package vkflow is a Vulkan compute runtime for Go, built around timeline
// semaphores.
//
// A Manager opens one Vulkan device and its queues. Tensors (package tensor)
// are typed N-d buffers; Algorithms (package algorithm) are SPIR-V compute
// pipelines with push and specialization constants; Sequences (package
// sequence) record operations on one queue and submit them, tracking
// completion with the queue's timeline semaphore; Submit adds GPU-side
// waits and signals on user timelines (package timeline) across queues,
// with a scheduler that makes any submission order deadlock-free. Graphs
// (package graph) record nodes whose dependencies, queues, command buffers
// and barriers are inferred, and replay them. Package ops is the
// operator library.
//
//	mgr, err := vkflow.New()
//	...
//	defer mgr.Close()
//
// Ownership: the Manager owns everything created from it. Manager.Close
// waits for submitted work, then closes sequences and graph Execs,
// algorithms, tensors and timelines, in that order, then the device and the instance. Every Close is
// idempotent; any other use of a closed object returns an error matching
// ErrClosed.
//
// Imports: vk and internal/core only. The packages tensor, timeline,
// algorithm and sequence import core and take the Manager through the
// core.Owner interface, so data flows one way: vk → core → tensor, timeline
// → algorithm → sequence → graph, and the Manager sits on top.
package vkflow
