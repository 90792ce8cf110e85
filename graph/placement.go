package graph

import (
	"context"
	"fmt"
	"strings"

	"github.com/vkflow/vkflow/internal/core"
)

// Placement is how Compile spreads the nodes that are not pinned to a
// queue (Node.OnQueue) over the logical queues it may use.
type Placement int

// Placements.
const (
	// PlaceByCost, the default, spreads work over physical queues only
	// where it pays: list scheduling with the device's measured costs (a
	// hand-off between two physical queues, one between command buffers on
	// the same queue, and the GPU time of an invocation: Costs). Logical
	// queues that share a physical queue are one resource, so that work
	// does not spread over them at all. The first Compile that needs the
	// costs measures them (about 10-50 ms) unless an earlier run cached
	// them for this device and driver in the user cache folder.
	PlaceByCost Placement = iota
	// PlaceSpread treats every logical queue as a queue of its own, with a
	// hand-off of a fixed 16,384 invocations: independent branches spread
	// over all of them, whatever they cost (vkflow before v0.31).
	PlaceSpread
	// PlaceOneQueue puts every node that is not pinned on the first
	// compute queue Compile may use (transfers, with no compute queue, on
	// the first queue).
	PlaceOneQueue
)

func (p Placement) String() string {
	switch p {
	case PlaceByCost:
		return "by cost"
	case PlaceSpread:
		return "spread"
	case PlaceOneQueue:
		return "one queue"
	}
	return fmt.Sprintf("Placement(%d)", int(p))
}

// Costs are the figures PlaceByCost decides with (see core.Costs: the
// hand-offs and the GPU time per byte; an invocation counts 4 bytes).
type Costs = core.Costs

// Place sets how nodes are placed (default PlaceByCost).
func Place(p Placement) Option {
	return func(o *options) error {
		if p < PlaceByCost || p > PlaceOneQueue {
			return core.Invalid("Place(%v): unknown placement", p)
		}
		o.place = p
		return nil
	}
}

// WithCosts makes PlaceByCost decide with c instead of the device's
// measured costs: to try a device's figures elsewhere, or to test a
// decision. c must have a positive ByteNs and no negative figure.
func WithCosts(c Costs) Option {
	return func(o *options) error {
		if !c.Valid() {
			return core.Invalid("WithCosts(%+v): each figure must be non-negative and finite, ByteNs positive", c)
		}
		c.Source, c.Path = "injected", ""
		o.costs = &c
		return nil
	}
}

// costsFor returns the costs placement by cost uses on d for the slots
// (logical queues) given: the injected ones, none needed when the slots
// share one physical queue (a hand-off between them is then never worth
// it, whatever it costs), or the device's, measured once.
func costsFor(d *core.Device, o options, infos []core.QueueInfo) (*core.Costs, error) {
	if o.place != PlaceByCost {
		return nil, nil
	}
	if o.costs != nil {
		return o.costs, nil
	}
	phys := map[int]bool{}
	for _, q := range o.queues {
		if q >= 0 && q < len(infos) {
			phys[infos[q].Physical] = true
		}
	}
	if len(phys) < 2 {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), d.WaitTimeout)
	defer cancel()
	c, err := d.Costs(ctx)
	if err != nil {
		return nil, fmt.Errorf("measuring the device's costs for placement (Place(PlaceSpread) or WithCosts skip it): %w", err)
	}
	return &c, nil
}

// model is what assign decides with: per slot, the resource it runs on
// (slots that share one can run only one node at a time), and the
// hand-off between two slots, in invocations.
type model struct {
	res     []int
	sameRes uint64 // a hand-off between slots on one resource
	cross   uint64 // between resources
	invNs   float64
}

func (p *plan) model(infos []core.QueueInfo) model {
	m := model{res: make([]int, len(p.slots)), sameRes: waitCost, cross: waitCost}
	for s, q := range p.slots {
		m.res[s] = s
		if p.place == PlaceByCost {
			m.res[s] = infos[q].Physical
		}
	}
	if p.place == PlaceByCost {
		c := p.costs
		if c == nil { // one physical queue: any hand-off only costs
			m.sameRes, m.cross = waitCost, waitCost
		} else {
			m.invNs = c.InvocationNs()
			inv := func(ns float64) uint64 { return uint64(min(ns/m.invNs, 1<<60)) }
			m.sameRes, m.cross = inv(c.SubmitNs), inv(c.HandoffNs)
		}
	}
	return m
}

// hand is the hand-off from slot a to slot b.
func (m model) hand(a, b int) uint64 {
	switch {
	case a == b:
		return 0
	case m.res[a] == m.res[b]:
		return m.sameRes
	}
	return m.cross
}

// describePlacement is the schedule's placement line: the decision, the
// costs it used and the estimated GPU work per queue.
func (p *plan) describePlacement() string {
	var b strings.Builder
	fmt.Fprintf(&b, "placement: %v", p.place)
	switch {
	case len(p.slots) == 1:
		b.WriteString(", one queue")
	case p.costs != nil:
		fmt.Fprintf(&b, ", %v", *p.costs)
	case p.place == PlaceByCost:
		b.WriteString(", the queues share one physical queue: no hand-off pays")
	}
	b.WriteString("; estimated work:")
	work := make([]uint64, len(p.slots))
	for i, s := range p.slotOf {
		work[s] += p.cost[i]
	}
	for s, q := range p.slots {
		if s > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, " queue %d %s", q, p.fmtWork(work[s]))
	}
	return b.String()
}

// fmtWork gives an estimate in time where the costs are known, else in
// invocations.
func (p *plan) fmtWork(inv uint64) string {
	if p.costs != nil {
		return fmtDur(float64(inv) * p.costs.InvocationNs())
	}
	return fmt.Sprintf("%d inv", inv)
}

func fmtDur(ns float64) string {
	switch {
	case ns >= 1e6:
		return fmt.Sprintf("%.3gms", ns/1e6)
	case ns >= 1e3:
		return fmt.Sprintf("%.3gµs", ns/1e3)
	}
	return fmt.Sprintf("%.3gns", ns)
}
