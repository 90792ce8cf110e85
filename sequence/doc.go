// Package sequence records GPU operations on one queue and submits them.
//
// A Sequence is bound to one logical queue of a Manager. Its recording
// methods (SyncDevice, SyncLocal, Copy, Fill, Barrier, Dispatch) check
// their arguments at once and append an operation; the first error sticks
// and is returned by Err and by the next Eval, so calls chain:
//
//	err := seq.SyncDevice(a, b).Dispatch(mul).SyncLocal(out).Eval(ctx)
//
// The command buffer is built at the first submit after a change. Barriers
// between operations are inferred from each buffer's last recorded access
// (read-after-write, write-after-read, write-after-write); a leading barrier
// orders the sequence after everything submitted earlier to its queue.
// SyncLocal makes GPU writes visible to the host. SyncDevice needs no GPU
// command: queue submission makes earlier host writes visible, and memory
// that is not host-visible is written through the staging ring at once.
//
// Completion is tracked with the queue's timeline semaphore: each submit
// signals the queue's next value. Eval submits and waits; EvalAsync returns
// a Pending that can be waited with a context. A wait that times out or is
// cancelled returns the context's error and frees nothing: every tensor,
// algorithm and the command buffer stay alive until the GPU has passed the
// submit's timeline value, even if they are closed.
//
// A submitted sequence can be submitted again without re-recording. Clear
// drops its operations; Rerecord rebuilds it with the algorithms' current
// bindings. Both need the last submit to have completed (ErrPending
// otherwise). A Sequence is safe for concurrent use, but operations on one
// sequence are serialized.
//
// Ownership: the Manager owns every Sequence; a sequence holds a reference
// on each tensor and algorithm it records until Clear or Close.
//
// Imports: vk, internal/core, tensor and algorithm.
package sequence
