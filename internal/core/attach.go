package core

import (
	"sync"
	"sync/atomic"
)

// attachments hold per-device state that other packages keep for a
// Manager (package ops: the Manager's eager op stream and its cache of
// prepared ops). Everything such state creates is an Object of the
// device, so Manager.Close closes it in the usual order; the attachment
// itself only becomes unusable (every call into the device then returns
// ErrClosed).
type attachments struct {
	mu sync.Mutex
	m  map[any]any
}

// Attached returns the value attached to d under key, making it with mk
// the first time. mk runs once per key and device, under a lock: it must
// not call Attached. An error from mk attaches nothing.
func (d *Device) Attached(key any, mk func() (any, error)) (any, error) {
	a := &d.attach
	a.mu.Lock()
	defer a.mu.Unlock()
	if v, ok := a.m[key]; ok {
		return v, nil
	}
	v, err := mk()
	if err != nil {
		return nil, err
	}
	if a.m == nil {
		a.m = map[any]any{}
	}
	a.m[key] = v
	return v, nil
}

// OpCacheStats are the counters of the prepared-op caches of a Manager's
// eager op streams (package ops), summed over its streams.
type OpCacheStats struct {
	Hits      uint64 // calls that reused a prepared op
	Misses    uint64 // calls that prepared one (pipelines built or taken from the pipeline cache)
	Evictions uint64 // prepared ops dropped to stay within the bound
	Entries   int64  // prepared ops held now
	Submits   uint64 // eager op submits
	HostWaits uint64 // waits of the host inside eager calls (back-pressure on a full ring), not reads
}

// opCacheCounters are OpCacheStats as atomics.
type opCacheCounters struct {
	hits, misses, evictions, submits, hostWaits atomic.Uint64
	entries                                     atomic.Int64
}

// CountOpCall counts one eager call as a cache hit or miss.
func (d *Device) CountOpCall(hit bool) {
	if hit {
		d.opStats.hits.Add(1)
	} else {
		d.opStats.misses.Add(1)
	}
}

// CountOpCacheChange adds to the entry count and the evictions.
func (d *Device) CountOpCacheChange(entries int64, evictions uint64) {
	d.opStats.entries.Add(entries)
	d.opStats.evictions.Add(evictions)
}

// CountEagerSubmit counts an eager submit, and a host wait inside an eager
// call when waited.
func (d *Device) CountEagerSubmit(waited bool) {
	d.opStats.submits.Add(1)
	if waited {
		d.opStats.hostWaits.Add(1)
	}
}

// OpCacheStats returns the op cache counters.
func (d *Device) OpCacheStats() OpCacheStats {
	c := &d.opStats
	return OpCacheStats{Hits: c.hits.Load(), Misses: c.misses.Load(), Evictions: c.evictions.Load(),
		Entries: c.entries.Load(), Submits: c.submits.Load(), HostWaits: c.hostWaits.Load()}
}
