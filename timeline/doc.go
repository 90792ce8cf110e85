// Package timeline provides user-facing timeline semaphores: a 64-bit
// counter on the device that GPU submits and the host signal, and that the
// host waits on.
//
// A Timeline belongs to one Manager's device. Values only increase: a host
// Signal that does not increase the value is an error before anything
// reaches the driver. Wait, WaitAll and WaitAny honour context cancellation
// and deadlines by waiting in bounded slices, and allocate nothing on the
// single-point path.
//
// Sequences track their own completion with one timeline per physical
// queue (see package sequence); GPU-side waits and signals on Timelines in
// submits, and the scheduler that keeps a single queue deadlock-free, build
// on this package.
//
// Ownership: the Manager owns every Timeline and closes timelines last.
//
// Imports: vk and internal/core.
package timeline
