package core

import (
	"context"
	"fmt"
	"sync"

	"github.com/vkflow/vkflow/vk"
)

// foreignWaits tracks what vkflow shares with code outside it: the
// goroutines that wait for points signalled by such code (a DLPack
// consumer's released point), so that no such wait outlives Close
// unbounded, and the live zero-copy imports of its host memory
// (hostshare.go). The zero value is ready to use.
type foreignWaits struct {
	hosts hostImports

	mu      sync.Mutex
	ctx     context.Context // cancelled when Close gives up on them
	cancel  context.CancelFunc
	n       int           // waits counted by Close
	idle    chan struct{} // closed when n drops to 0 while Close waits
	stopped bool          // Close has finished waiting for them
}

// AwaitForeign runs done on a new goroutine once sem reaches v, or with an
// error once the wait is given up. Before Close the wait lasts as long as
// the foreign code needs; Close waits for it within its timeout and then
// gives up (done gets an error wrapping context.Canceled). A wait that
// starts after Close has finished is bounded by WaitTimeout. sem must stay
// valid until done runs.
func (d *Device) AwaitForeign(sem vk.Semaphore, v uint64, done func(error)) {
	f := &d.foreign
	f.mu.Lock()
	if f.ctx == nil {
		f.ctx, f.cancel = context.WithCancel(context.Background())
	}
	ctx, cancel := f.ctx, context.CancelFunc(func() {})
	counted := !f.stopped
	if counted {
		f.n++
	} else {
		ctx, cancel = context.WithTimeout(context.Background(), d.WaitTimeout)
	}
	f.mu.Unlock()
	go func() {
		defer cancel()
		err := d.WaitPinned(ctx, sem, v) // the caller's Pin keeps the device alive
		if err != nil {
			why := "the wait failed"
			if ctx.Err() != nil && counted {
				why = "Close gave up after its timeout"
			} else if ctx.Err() != nil {
				why = "not reached within the close timeout after Close"
			}
			err = fmt.Errorf("vkflow: waiting for semaphore %#x to reach %d: %s: %w", uint64(sem), v, why, err)
		}
		done(err)
		if counted {
			f.mu.Lock()
			if f.n--; f.n == 0 && f.idle != nil {
				close(f.idle)
				f.idle = nil
			}
			f.mu.Unlock()
		}
	}()
}

// stopForeign waits for the foreign waits until ctx ends, then makes the
// rest give up, and returns once every counted wait has ended (within one
// wait slice of the cancellation). Called by Close, before it destroys the
// objects (semaphores among them) those waits may use.
func (d *Device) stopForeign(ctx context.Context) {
	f := &d.foreign
	f.mu.Lock()
	f.stopped = true
	if f.n == 0 {
		f.mu.Unlock()
		return
	}
	idle := make(chan struct{})
	f.idle = idle
	f.mu.Unlock()
	select {
	case <-idle:
	case <-ctx.Done():
		f.cancel()
		<-idle
	}
}
