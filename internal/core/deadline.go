package core

import (
	"context"
	"sync"
	"time"
)

// Deadline is a context.Context that ends at a fixed time, for the waits
// the library bounds itself (a host read's wait, bounded by WaitTimeout).
// context.WithTimeout starts a runtime timer for every such wait (and
// adding the earliest timer can wake a sleeping Go thread): perf put it at
// about a microsecond of a synchronous eager loop's 40 µs iteration (call,
// wait, read) on lavapipe. The host waits of this package (waitSlices)
// need only Deadline and Err, so a Deadline starts its timer only when
// something asks for its Done channel (a derived context, a select); Stop
// releases it.
type Deadline struct {
	at   time.Time
	mu   sync.Mutex
	done chan struct{} // made by Done, closed once the deadline passed
	t    *time.Timer   // closes done; nil until Done is called
	err  error         // DeadlineExceeded once done is closed, or Stop's Canceled
}

// NewDeadline returns a Deadline timeout from now. Call Stop when done
// with it, as with context.WithTimeout's cancel.
func NewDeadline(timeout time.Duration) *Deadline {
	return &Deadline{at: time.Now().Add(timeout)}
}

// Deadline returns the time the context ends.
func (c *Deadline) Deadline() (time.Time, bool) { return c.at, true }

// Done returns a channel closed when the deadline passes (or at Stop). The
// first call starts the timer.
func (c *Deadline) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done == nil {
		c.done = make(chan struct{})
		switch d := time.Until(c.at); {
		case c.err != nil:
			close(c.done)
		case d <= 0:
			c.err = context.DeadlineExceeded
			close(c.done)
		default:
			c.t = time.AfterFunc(d, c.expire)
		}
	}
	return c.done
}

// Err returns context.DeadlineExceeded once the deadline has passed,
// context.Canceled after Stop, nil before.
func (c *Deadline) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil && !time.Now().Before(c.at) {
		c.endLocked(context.DeadlineExceeded)
	}
	return c.err
}

// Value returns nil: a Deadline carries no values.
func (c *Deadline) Value(any) any { return nil }

// Stop ends the context (Err is then Canceled if the deadline had not
// passed) and releases its timer, if Done started one. It is idempotent.
func (c *Deadline) Stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.t != nil {
		c.t.Stop()
	}
	if c.err == nil {
		c.endLocked(context.Canceled)
	}
}

func (c *Deadline) expire() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		c.endLocked(context.DeadlineExceeded)
	}
}

// endLocked sets the error and closes done, if made. Called with mu held
// and err unset.
func (c *Deadline) endLocked(err error) {
	c.err = err
	if c.done != nil {
		close(c.done)
	}
}

// String names the context, as the context package's do.
func (c *Deadline) String() string { return "core.Deadline(" + c.at.String() + ")" }

var _ context.Context = (*Deadline)(nil)
