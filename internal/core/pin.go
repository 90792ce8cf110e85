package core

import "sync"

// Pins: a recorded command buffer kept for reuse without references on its
// tensors (sequence.Detach, the op streams' recordings) still names their
// buffers, in its descriptor sets and barriers. Destroying such a buffer
// invalidates the command buffer, and destroying it while another thread
// rewrites the sets and re-records can make the validation layer
// invalidate the new recording too (see placeholder.go). So the keeper
// pins every buffer it names: Free of a pinned allocation only marks it,
// and the last UnpinBuffer frees it. The keeper rewrites its sets (to the
// placeholder, or to new buffers) before it unpins.

// pinState is an allocation's pins; pinMu guards every allocation's.
type pinState struct {
	n     int
	freed bool // Free was called while pinned
}

var pinMu sync.Mutex

// Pinnable reports whether PinBuffer can keep a's buffer alive: a is vkflow's
// own buffer in its own memory (not a view, an import or shared memory,
// whose owner may free it whatever vkflow does), not freed.
func (a *Allocation) Pinnable() bool {
	return a != nil && !a.view && a.block != nil && a.block.ext == nil && !a.block.hostMem
}

// PinBuffer keeps a's buffer alive until the matching Unpin, even if Free is
// called meanwhile. It reports false, pinning nothing, when a is not
// Pinnable or already freed.
func (a *Allocation) PinBuffer() bool {
	pinMu.Lock()
	defer pinMu.Unlock()
	if !a.Pinnable() || a.pin.freed {
		return false
	}
	a.pin.n++
	return true
}

// UnpinBuffer drops a pin PinBuffer took; the last one frees the allocation when Free
// was called while it was pinned.
func (d *Device) UnpinBuffer(a *Allocation) {
	pinMu.Lock()
	a.pin.n--
	free := a.pin.n == 0 && a.pin.freed
	if free {
		a.pin.freed = false
	}
	pinMu.Unlock()
	if free {
		d.Free(a)
	}
}

// pinned reports whether Free must leave a to its last UnpinBuffer, and marks it
// so.
func (a *Allocation) pinned() bool {
	pinMu.Lock()
	defer pinMu.Unlock()
	if a.pin.n == 0 {
		return false
	}
	a.pin.freed = true
	return true
}
