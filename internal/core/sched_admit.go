package core

import "fmt"

// ScheduleAll accepts ss as one unit, in order: either every submit is
// accepted (each then released as Schedule's are) or, when the checks
// refuse one of them (a non-increasing signal, a closed Manager or
// timeline, the bound on held submits), none is and nothing reached the
// driver. Later submits may wait on earlier ones' signals. Schedule is
// ScheduleAll of one submit.
func (d *Device) ScheduleAll(ss []*Submission) error {
	for _, s := range ss {
		for _, ps := range [2][]Point{s.Waits, s.Signals} {
			for _, p := range ps {
				if p.TL == nil {
					return Invalid("nil timeline")
				}
				if p.TL.dev != d {
					return Invalid("timeline belongs to another Manager")
				}
			}
		}
	}
	if err := d.Enter(); err != nil {
		return err
	}
	defer d.Exit()
	for i, s := range ss {
		if err := s.hold(); err != nil {
			for _, h := range ss[:i] {
				h.unhold()
			}
			return err
		}
	}
	sc := &d.sched
	sc.mu.Lock()
	if err := sc.check(d, ss); err != nil {
		sc.mu.Unlock()
		for _, s := range ss {
			s.unhold()
		}
		return err
	}
	var done []*Submission
	for _, s := range ss {
		sc.accept(s, &done)
		// Release what is ready before the next one is accepted, so that
		// it sees the promises of the earlier ones.
		done = append(done, sc.drain(d)...)
	}
	sc.mu.Unlock()
	finish(done)
	return nil
}

// check decides whether ss, accepted in order, would all be admitted:
// signal values increase, the device is open, and the submits that would
// be held fit under the bound. It changes nothing. Called with mu held.
func (sc *scheduler) check(d *Device, ss []*Submission) error {
	// Checked under the lock that Close's dropHeld takes, so no submit is
	// accepted after the held ones were dropped.
	if d.closed.Load() {
		return Closed("Manager")
	}
	// What the earlier submits of ss would reserve, promise (released at
	// once) and hold (a held signaller orders later signals behind it).
	type sim struct {
		reserved, promised uint64
		held               bool
	}
	// One submit (Schedule) needs no map: what it sees is the timelines'
	// own state, and nothing of ss comes before it.
	var st map[*Timeline]*sim
	var scratch sim
	get := func(t *Timeline) *sim {
		if len(ss) == 1 {
			scratch = sim{reserved: t.reserved, promised: t.promised, held: t.head < len(t.signallers)}
			return &scratch
		}
		if st == nil {
			st = map[*Timeline]*sim{}
		}
		x := st[t]
		if x == nil {
			x = &sim{reserved: t.reserved, promised: t.promised, held: t.head < len(t.signallers)}
			st[t] = x
		}
		return x
	}
	held := 0
	for _, s := range ss {
		for i, p := range s.Signals {
			if err := signalAfter(s.Signals, i, get(p.TL).reserved); err != nil {
				return err
			}
		}
		blocked := false
		for _, w := range s.Waits {
			if !w.TL.shared && get(w.TL).promised < w.Value {
				blocked = true
			}
		}
		for _, p := range s.Signals {
			if get(p.TL).held {
				blocked = true
			}
		}
		for _, p := range s.Signals {
			x := get(p.TL)
			x.reserved = max(x.reserved, p.Value)
			if blocked {
				x.held = true
			} else {
				x.promised = max(x.promised, p.Value)
			}
		}
		if blocked {
			held++
		}
	}
	if held > 0 && sc.held+held > sc.max {
		return fmt.Errorf("%w: %d submits are already held back, waiting for timeline points that nobody has signalled or submitted a signal for, and %d more would be (the Manager's WithMaxHeldSubmits bound of %d); nothing was submitted: signal what they wait for, then submit again",
			ErrBusy, sc.held, held, sc.max)
	}
	return nil
}
