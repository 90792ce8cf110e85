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
// (read-after-write, write-after-read, write-after-write). Across submits
// the queue remembers each buffer's last write and the reads since, and a
// submit whose first accesses conflict with them gets, in the same batch, a
// small prelude with barriers on exactly those buffer ranges; reads after
// reads, and buffers nothing touched before, get none (the preludes are
// cached, so resubmitting a pattern records nothing). The command buffer
// itself begins with the barriers its own resubmission needs (on the
// buffers it writes, from the stages it uses them in), so a sequence
// submitted again, with nothing else touching its buffers in between, needs
// no prelude: the batch holds its command buffer alone. Between queues the
// order comes from timeline waits alone, as between CUDA streams: a tensor
// written on one queue and used on another needs a Wait on a value
// signalled after the write, or the two race.
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
// Submit adds GPU-side timeline waits and signals (package timeline):
//
//	seq.Submit(ctx, sequence.Wait(a, 2), sequence.Wait(b, 2), sequence.Signal(c, 3))
//
// Independent submits run concurrently where the device has several queues;
// dependent ones are ordered on the GPU; the host blocks only in Wait.
//
// The scheduling guarantee: vkflow never hands the driver a wait whose
// signal has not already been submitted or signalled from the host. Such a
// submit is held on the host and released the moment its waits are
// promised, so no order of Submit calls, from any goroutines, onto any
// number of queues, can deadlock — not even on a single queue, where the
// driver itself would. Submit never blocks. A submit waiting on a point
// nobody signals stays held: Pending.Wait returns the context's error, and
// Manager.Close reports it (a *StuckError) and frees its resources, which
// the GPU never saw. Signal values must increase on each timeline, across
// host and GPU signals, and are checked before anything reaches the driver.
// Buffers are shared concurrently between queue families when the Manager
// uses more than one, so tensors need no ownership transfers.
//
// A submitted sequence can be submitted again without re-recording. Clear
// drops its operations; Rerecord rebuilds it with the algorithms' current
// bindings. Both need the last submit to have completed (ErrPending
// otherwise). Detach keeps a completed recording without holding its
// tensors (their buffers stay pinned), and Attach gives it tensors over
// the same buffers to submit it again as recorded (package ops' streams
// keep their recorded ops so). A Sequence is safe for concurrent use, but
// operations on one sequence are serialized.
//
// Ownership: the Manager owns every Sequence; a sequence holds a reference
// on each tensor and algorithm it records until Clear, Close or Detach, taken
// before the recording reads them, so a Close racing the recording either
// comes first (the recording fails with ErrClosed) or leaves them alive
// for the sequence (which then refuses to submit them, with ErrClosed).
//
// Imports: vk, internal/core, tensor, algorithm and timeline.
package sequence
