// Package timeline provides user-facing timeline semaphores: a 64-bit
// counter on the device that GPU submits and the host signal, and that the
// host waits on.
//
// A Timeline belongs to one Manager's device. Wait, WaitAll and WaitAny
// honour context cancellation and deadlines by waiting in bounded slices,
// and allocate nothing on the single-point path.
//
// # Signalling rules
//
// A timeline's value only increases, whoever signals it. Like a CUDA event
// that is recorded on a stream, a value promised to the GPU belongs to the
// GPU until it has landed:
//
//  1. A host Signal(v) must exceed the current value and every value that
//     an accepted submit signals on the timeline.
//  2. A host Signal is refused while any GPU signal on the timeline is
//     pending: held back by the scheduler (its waits are not yet signalled)
//     or submitted and not yet completed. Vulkan requires a host signal to
//     stay below every pending signal operation
//     (VUID-VkSemaphoreSignalInfo-value-03259); with rule 1 that leaves no
//     valid value, and a host value above a pending GPU signal would let
//     the timeline go backwards when the GPU signal lands. Wait for the
//     pending value (the error names it), then signal.
//  3. A submit's signal must exceed every value signalled before on the
//     timeline, by the host or by earlier submits, and every value reserved
//     by submits accepted earlier (held ones included); several signals of
//     one timeline in one submit must increase too.
//
// A violation is an error wrapping ErrInvalid, returned by the call itself
// (Signal, or sequence.Submit's Pending), before anything reaches the
// driver: the timeline and the submits already accepted are unchanged.
//
// Sequences track their own completion with one timeline per physical
// queue (see package sequence); GPU-side waits and signals on Timelines in
// submits, and the scheduler that keeps a single queue deadlock-free, build
// on this package.
//
// # Shared timelines
//
// A timeline created with Exportable(), or imported from another process
// or API (interop.ImportTimeline), is shared: its values may be signalled
// by a side vkflow cannot see. The scheduler therefore does not hold back
// a submit that waits on a shared timeline until a local signal promises
// the value; the wait goes to the driver at once, and the other side must
// signal it (on a single-queue driver, a wait that nobody signals blocks
// the queue until someone does). Signals of a shared timeline follow the
// rules above. A host Signal queries the counter first, so a value the
// other side reached already is refused with ErrInvalid naming it. The
// Khronos validation layer (1.3.239 and others) loses track of shared
// timelines' counters and may report such a Signal as overtaking a pending
// signal (VUID-VkSemaphoreSignalInfo-value-03259) whose value is at or
// below the counter Signal read first; no such signal can be pending, and
// the debug hook gets the report as information that says so
// (vk.KnownFalsePositive). Where the device cannot export timeline
// semaphores as opaque fds (no VK_KHR_external_semaphore_fd, as on
// lavapipe, or a driver that shares binary semaphores only), New with
// Exportable() returns ErrUnsupported naming the extension. Shared reports
// whether a timeline is shared.
//
// # Failures
//
// A timeline point whose producer can no longer signal it is failed, and
// failures travel along timelines the way CUDA's sticky stream errors and
// IREE's semaphore failures do. A point fails when:
//
//   - the submit that was to signal it failed after it was accepted: its
//     vkQueueSubmit returned an error, or it waited on a failed point
//     itself;
//   - the timeline was closed while no accepted submit signals that far
//     (no one can signal it any more).
//
// A timeline's failure is sticky: from the first failed value on, every
// value is failed (values below it, which earlier producers still signal,
// are not). What then happens, at once and with the same *FailedError,
// which errors.Is both vkflow.ErrFailed and the root cause (the Vulkan
// error, or ErrClosed for a closed timeline):
//
//   - every held submit that waits on a failed point, or signals the
//     failed timeline at or past the failed value, fails; it never reaches
//     the driver, and the timelines it signals fail in turn, so the failure
//     reaches everything downstream in the DAG and nothing else;
//   - a later submit that waits on a failed point, or signals a failed
//     timeline, fails the same way (its Pending reports the error);
//   - Wait and WaitAll for a failed point return the error instead of
//     waiting for their context (within one 50 ms wait slice); WaitAny
//     does once every point is failed; a host Signal of a failed timeline
//     returns it; Failed reports it without waiting;
//   - sequence.Pending.Wait, graph Pending.Wait, Tensor.Wait (for a tensor
//     whose last submitted use failed) and ops.Stream.Synchronize return it,
//     as do the C API's waits (VKFLOW_ERR_FAILED) and Python's
//     (vkflow.FailedError).
//
// A call that is refused (ErrInvalid, ErrBusy, ErrClosed from the call
// itself) is not a failure: nothing was accepted, nothing is marked, and
// the same work may be submitted again. A failed timeline cannot be
// repaired; create a new one. (A graph Exec's own timelines are the
// exception: a failure there covers only the values already accepted, so
// a failed run does not fail the runs started after it; graph/doc.go.)
//
// Ownership: the Manager owns every Timeline and closes timelines last.
// Close may be called at any time, also while submits that wait on or
// signal the timeline are held or running: every accepted submit holds a
// reference on its timelines, and the semaphore is destroyed only once the
// driver has retired the last batch that used it (a later batch on the
// same queue completed, or the device was idled). Drivers touch a
// semaphore after a batch's own completion signal; lavapipe locks it to
// release the batch's wait.
//
// Imports: vk and internal/core.
package timeline
