package core

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vkflow/vkflow/vk"
)

// Config says how to open a Device on a chosen physical device.
type Config struct {
	Physical vk.PhysicalDevice
	Info     vk.PhysicalDeviceInfo
	// APIVersion is the instance's requested version; the effective version
	// is the lower of it and the device's.
	APIVersion    uint32
	ComputeQueues int  // logical compute queues wanted (at least 1)
	TransferQueue bool // a logical transfer queue, on a transfer-only family when there is one
	Features      vk.Features
	// StagedDeviceMemory never maps device-local memory for Device tensors,
	// as on a discrete GPU without resizable BAR.
	StagedDeviceMemory bool
	// ReadPath and WritePath choose how host reads and writes of mapped
	// memory go (hostpath.go); the zero value is PathAuto.
	ReadPath, WritePath HostPath
	Log                 *slog.Logger
	// Index is the physical device's position in enumeration order (the
	// device_id of a kDLVulkan DLPack export).
	Index int
	// MaxHeld bounds the submits the scheduler holds back (0: DefaultMaxHeld).
	MaxHeld int
	// WaitTimeout bounds waits that have no caller's context (0: 30s).
	WaitTimeout time.Duration
	// WaitSpin is how long a host wait on a timeline polls its value
	// before it sleeps in vkWaitSemaphores (0: it sleeps at once).
	WaitSpin time.Duration
	// Trace, when not empty, is the file a Chrome trace of the device's
	// work is written to at Close (trace.go).
	Trace string
	// CalibratedClock: the device can read its timestamp counter together
	// with CLOCK_MONOTONIC (vk.Instance.MonotonicCalibrateable). With a
	// Trace, VK_EXT_calibrated_timestamps is enabled and puts the GPU spans
	// on the host clock.
	CalibratedClock bool
}

// Device is the runtime state of one VkDevice. The Manager owns it.
type Device struct {
	VK       *vk.Device
	Info     vk.PhysicalDeviceInfo
	Features vk.Features // the features enabled on the device
	Log      *slog.Logger
	Cache    vk.PipelineCache
	Staged   bool // Device tensors go through the staging ring
	// ReadPath and WritePath are Config's (hostpath.go).
	ReadPath, WritePath HostPath
	Index               int // the physical device's enumeration index
	// HostImport reports whether VK_EXT_external_memory_host is enabled:
	// host memory can be wrapped in buffers without a copy.
	HostImport bool
	// ExternalMemoryFD and ExternalSemaphoreFD report whether
	// VK_KHR_external_memory_fd and VK_KHR_external_semaphore_fd are
	// enabled: memory and timelines can be shared as opaque fds
	// (exportmem.go).
	ExternalMemoryFD    bool
	ExternalSemaphoreFD bool
	// OnDestroyed runs once after the VkDevice is destroyed (the Manager
	// destroys its instance there). Set before the device is used.
	OnDestroyed func()
	// WaitTimeout bounds waits that have no caller's context (staging
	// transfers): the Manager's close timeout.
	WaitTimeout time.Duration
	// WaitSpin is how long a host wait on a timeline polls before it
	// blocks (Config.WaitSpin).
	WaitSpin time.Duration

	queues []*Queue // physical queues
	// families lists the distinct queue families in use. With more than one,
	// buffers are created VK_SHARING_MODE_CONCURRENT across them, so a tensor
	// moves between compute and transfer queues without ownership transfers.
	families []uint32
	logical  []QueueInfo // logical index -> physical queue

	waits   waitCounters
	tracer  *tracer     // nil: no trace (trace.go)
	closed  atomic.Bool // Close has started: no new objects or submits
	closing atomic.Bool // the device is being destroyed: no Vulkan calls
	lost    atomic.Bool // a call returned VK_ERROR_DEVICE_LOST
	gate
	reg     registry
	mem     allocator
	stage   staging
	costMu  sync.Mutex
	costs   *Costs // measured or read from the cache once (costs.go)
	sched   scheduler
	foreign foreignWaits
	attach  attachments
	holder  placeholder
	opStats opCacheCounters
	watch   watcher // frees deferred objects as the GPU finishes (watcher.go)

	gcMu    sync.Mutex
	garbage []*Object
	gcLen   atomic.Int32
	// collectMu makes collections one at a time, and collecting says one
	// is under way, so that a host wait can wait for the collection the
	// completion watcher is running (collectSync).
	collectMu  sync.Mutex
	collecting atomic.Int32

	// pins keep the VkDevice alive past Close while foreign code holds
	// memory of it (DLPack exports); the last Unpin after Close destroys it.
	pinMu     sync.Mutex
	pins      int
	closeDone bool // Close has closed every object; destroy when unpinned
	finalOnce sync.Once
}

// Open creates the VkDevice with the requested queues and features, the
// queue timelines and the pipeline cache.
func Open(cfg Config) (*Device, error) {
	info := cfg.Info
	if cfg.ComputeQueues < 1 {
		cfg.ComputeQueues = 1
	}
	log := cfg.Log
	if log == nil {
		log = slog.Default()
	}
	if missing := info.Features.Missing(cfg.Features); len(missing) > 0 {
		return nil, Unsupported("%s lacks %s", info.Name, strings.Join(missing, ", "))
	}

	// Pick the compute family with the most queues, and a transfer-only
	// family when one exists.
	compute, transfer := -1, -1
	for i, f := range info.QueueFamilies {
		if f.Flags&vk.QueueCompute != 0 && (compute < 0 || f.Count > info.QueueFamilies[compute].Count) {
			compute = i
		}
		if f.Flags&vk.QueueTransfer != 0 && f.Flags&(vk.QueueCompute|vk.QueueGraphics) == 0 && transfer < 0 {
			transfer = i
		}
	}
	if compute < 0 {
		return nil, Unsupported("%s has no compute queue family", info.Name)
	}
	nCompute := min(uint32(cfg.ComputeQueues), info.QueueFamilies[compute].Count)
	reqs := []vk.QueueRequest{{Family: uint32(compute), Count: nCompute}}
	if cfg.TransferQueue && transfer >= 0 {
		reqs = append(reqs, vk.QueueRequest{Family: uint32(transfer), Count: 1})
	}

	api := min(cfg.APIVersion, info.APIVersion)
	var exts []string
	hostImport := info.HasExtension(vk.HostImportExtension) && info.Limits.MinImportedHostPointerAlignment != 0
	if hostImport {
		exts = append(exts, vk.HostImportExtension)
	}
	extMem := info.HasExtension(vk.ExternalMemoryFDExtension)
	extSem := info.HasExtension(vk.ExternalSemaphoreFDExtension)
	if extMem {
		exts = append(exts, vk.ExternalMemoryFDExtension)
	}
	if extSem {
		exts = append(exts, vk.ExternalSemaphoreFDExtension)
	}
	calibrated := cfg.Trace != "" && cfg.CalibratedClock
	if calibrated {
		exts = append(exts, vk.CalibratedTimestampsExtension)
	}
	dev, err := vk.CreateDevice(cfg.Physical, vk.DeviceConfig{Queues: reqs, Features: cfg.Features, Extensions: exts, APIVersion: api})
	if err != nil {
		return nil, err
	}
	d := &Device{VK: dev, Info: info, Features: cfg.Features, Log: log, Index: cfg.Index, HostImport: hostImport,
		ExternalMemoryFD: extMem && dev.ExternalMemoryFD(), ExternalSemaphoreFD: extSem && dev.ExternalSemaphoreFD()}
	d.Staged = cfg.StagedDeviceMemory
	d.ReadPath, d.WritePath = cfg.ReadPath, cfg.WritePath
	d.sched.max = cmp.Or(cfg.MaxHeld, DefaultMaxHeld)
	d.WaitTimeout = cmp.Or(cfg.WaitTimeout, 30*time.Second)
	d.WaitSpin = cfg.WaitSpin
	for _, r := range reqs {
		for k := uint32(0); k < r.Count; k++ {
			sem, err := dev.CreateTimeline(0)
			if err != nil {
				d.destroy()
				return nil, err
			}
			d.queues = append(d.queues, &Queue{dev: d, Index: len(d.queues), Family: r.Family, InFam: k, handle: dev.Queue(r.Family, k), sem: sem, hazards: map[vk.Buffer]*hazardState{}})
		}
	}
	for _, r := range reqs {
		d.families = append(d.families, r.Family)
	}
	for i := 0; i < cfg.ComputeQueues; i++ {
		p := i % int(nCompute)
		d.logical = append(d.logical, QueueInfo{Logical: i, Physical: p, Family: uint32(compute), Index: uint32(p)})
	}
	if cfg.TransferQueue {
		qi := QueueInfo{Logical: len(d.logical), Physical: 0, Family: uint32(compute), Index: 0, Transfer: true}
		if transfer >= 0 {
			qi.Physical, qi.Family = int(nCompute), uint32(transfer)
		}
		d.logical = append(d.logical, qi)
	}
	if d.Cache, err = dev.CreatePipelineCache(nil); err != nil {
		d.destroy()
		return nil, err
	}
	d.mem.init(d)
	d.stage.init(d)
	if cfg.Trace != "" {
		if err := d.startTrace(cfg.Trace, calibrated); err != nil {
			d.destroy()
			return nil, err
		}
	}
	d.startWatcher()
	return d, nil
}

// Closed reports whether Close has started.
func (d *Device) Closed() bool { return d.closed.Load() }

// Queues returns the logical queues.
func (d *Device) Queues() []QueueInfo { return append([]QueueInfo(nil), d.logical...) }

// PhysicalQueues returns the number of physical queues.
func (d *Device) PhysicalQueues() int { return len(d.queues) }

// Queue returns the physical queue behind logical queue i.
func (d *Device) Queue(i int) (*Queue, error) {
	if d.closed.Load() {
		return nil, Closed("Manager")
	}
	if i < 0 || i >= len(d.logical) {
		return nil, Invalid("queue index %d out of range: the Manager has %d logical queues", i, len(d.logical))
	}
	return d.queues[d.logical[i].Physical], nil
}

// deferDestroy destroys o now if the GPU is done with it, else later.
// Once Close has started, the object waits for Close's (or the last
// Unpin's) collect, which runs when no other call can touch the device.
// After device loss the recorded uses say nothing about what the GPU still
// runs (an aborted wait records none), so everything waits for Close,
// which idles the device first.
func (d *Device) deferDestroy(o *Object) {
	if !d.enter() {
		d.addGarbage(o)
		return
	}
	defer d.Exit()
	if d.lost.Load() {
		d.addGarbage(o)
		return
	}
	if o.idle() {
		o.destroy()
		return
	}
	d.addGarbage(o)
	o.retire()
	d.watch.notify(d, o)
}

func (d *Device) addGarbage(o *Object) {
	d.gcMu.Lock()
	d.garbage = append(d.garbage, o)
	d.gcLen.Store(int32(len(d.garbage)))
	d.gcMu.Unlock()
}

// collect destroys deferred objects the GPU is done with. It is cheap when
// nothing is deferred. Destroying an object can release others (a sequence
// releases its tensors), which may be deferred in turn: it repeats until a
// pass destroys nothing. When another goroutine is collecting (the
// completion watcher, or a call that a destruction made: a timeline's
// retiring submit), it returns at once: that collection goes on until
// nothing more is ready.
func (d *Device) collect() {
	if d.gcLen.Load() == 0 || !d.collectMu.TryLock() {
		return
	}
	defer d.collectMu.Unlock()
	d.collectLocked()
}

// collectSync is collect for a host wait that saw its value complete: it
// also waits for a collection another goroutine is running, so that what
// the completed work held is destroyed when the wait returns (a test, or
// a program reading MemStats, sees the memory back). It must not be called
// from inside a destruction.
func (d *Device) collectSync() {
	if d.gcLen.Load() == 0 && d.collecting.Load() == 0 {
		return
	}
	d.collectMu.Lock()
	defer d.collectMu.Unlock()
	d.collectLocked()
}

// collectLocked is collect's work, with collectMu held.
func (d *Device) collectLocked() {
	if d.lost.Load() && !d.closed.Load() {
		return // see deferDestroy
	}
	d.collecting.Add(1)
	defer d.collecting.Add(-1)
	for d.gcLen.Load() != 0 {
		d.gcMu.Lock()
		keep := d.garbage[:0]
		var ready []*Object
		for _, o := range d.garbage {
			if o.idle() {
				ready = append(ready, o)
			} else {
				keep = append(keep, o)
			}
		}
		clear(d.garbage[len(keep):])
		d.garbage = keep
		d.gcLen.Store(int32(len(keep)))
		d.gcMu.Unlock()
		if len(ready) == 0 {
			return
		}
		for _, o := range ready {
			o.destroy()
		}
	}
}

// Deferred returns how many objects wait for the GPU before destruction.
func (d *Device) Deferred() int { return int(d.gcLen.Load()) }

// StuckError reports work that never completed by Close: submits held back
// because nothing signalled what they wait for (dropped; their resources
// were freed, since the GPU never saw them), or GPU work that did not finish
// in time (Leaked: nothing was freed, as the GPU may still use it).
type StuckError struct {
	Queues []string
	Leaked bool
}

func (e *StuckError) Error() string {
	if e.Leaked {
		return "vkflow: Close: GPU work did not complete; leaking device memory instead of freeing it: " + strings.Join(e.Queues, "; ")
	}
	return "vkflow: Close: submits never became ready: " + strings.Join(e.Queues, "; ")
}

// Is makes StuckError match context.DeadlineExceeded.
func (e *StuckError) Is(target error) bool { return target == context.DeadlineExceeded }

// Close waits up to timeout for all submitted work, closes every object in
// the fixed order (sequences, algorithms, tensors, timelines), destroys the
// device's own objects and the device. A second call returns nil. If the
// work does not complete in time, nothing is freed and a *StuckError is
// returned: freeing memory the GPU may still use is never an option.
//
// While the device is pinned (memory exported through DLPack and not yet
// released by its consumer), the final destruction waits for the last
// Unpin; everything else is closed now.
func (d *Device) Close(timeout time.Duration) error {
	if !d.closed.CompareAndSwap(false, true) {
		return nil
	}
	// The completion watcher's goroutines start no new round, and waits
	// made with Closing end (joined below, once the GPU has reached every
	// value the watcher may wait for).
	d.stopWatcher()
	// No call gets in now; wait for those inside to leave. From here on
	// Close is the only one making Vulkan calls on the device (but for
	// waits by DLPack exports, which pin it, and the watcher's parked
	// waits on queue timelines).
	d.drain()
	// Submits still held back never reached the driver: nothing on the GPU
	// uses their resources, so they are reported and dropped, not waited.
	stuck := d.dropHeld(Closed("Manager"))
	for i := range stuck {
		stuck[i] = "never submitted: " + stuck[i]
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	lost := d.lost.Load()
	if !lost {
		var gpuStuck bool
		for _, q := range d.queues {
			v := q.Submitted()
			if err := q.wait(ctx, v, false); err != nil {
				if d.check(err) != nil && d.lost.Load() {
					lost = true
					break
				}
				gpuStuck = true
				stuck = append(stuck, fmt.Sprintf("queue %d (family %d) at %d of %d: %v", q.Index, q.Family, q.Completed(), v, err))
			}
		}
		if gpuStuck && !lost {
			err := &StuckError{Queues: stuck, Leaked: true}
			d.Log.Error("vkflow: device not idle at Close", "err", err)
			return err
		}
	}
	// Every value the watcher waits for was submitted, so has completed
	// now (or the device is lost, and its waits fail).
	d.joinWatcher()
	// Foreign code's points (DLPack consumers' released points), within
	// the same timeout; past it they are given up and their memory leaked.
	d.stopForeign(ctx)
	// Every submit the driver saw has completed (or the device is lost, and
	// runs nothing more), so this cannot hang; it also waits for the
	// driver's own bookkeeping (lavapipe's submit thread touches a batch's
	// semaphores just after they signal). vkDeviceWaitIdle needs every
	// queue externally synchronized.
	for _, q := range d.queues {
		q.mu.Lock()
	}
	idleErr := d.VK.WaitIdle()
	for _, q := range d.queues {
		if idleErr == nil {
			q.idled.Store(q.Submitted())
		}
		q.mu.Unlock()
	}
	if lost {
		// A lost device signals nothing more: treat everything as done so
		// that it can all be freed.
		idleErr = nil
		for _, q := range d.queues {
			q.markCompleted(q.Submitted())
			q.idled.Store(q.Submitted())
		}
	}
	d.closeObjects()
	err := idleErr
	if d.tracer != nil {
		err = errors.Join(err, d.tracer.finish())
	}
	if len(stuck) > 0 {
		err = errors.Join(err, &StuckError{Queues: stuck})
	}
	d.collect()
	if n := d.Deferred(); n > 0 {
		err = errors.Join(err, fmt.Errorf("vkflow: Close: %d objects still referenced", n))
	}
	d.pinMu.Lock()
	d.closeDone = true
	last := d.pins == 0
	d.pinMu.Unlock()
	if last {
		d.finalize()
	} else {
		d.Log.Debug("vkflow: Close: exported memory still held; the device is destroyed when it is released")
	}
	return err
}

// Pin keeps the VkDevice, its memory and its queue timelines alive past
// Close until the matching Unpin. It fails once Close has finished.
func (d *Device) Pin() error {
	d.pinMu.Lock()
	defer d.pinMu.Unlock()
	if d.closeDone {
		return Closed("Manager")
	}
	d.pins++
	return nil
}

// Unpin drops a Pin; the last one after Close destroys the device.
func (d *Device) Unpin() {
	d.pinMu.Lock()
	d.pins--
	last := d.pins == 0 && d.closeDone
	d.pinMu.Unlock()
	if last {
		d.finalize()
	}
}

// finalize destroys the device once, then runs OnDestroyed.
func (d *Device) finalize() {
	d.finalOnce.Do(func() {
		d.collect()
		d.closing.Store(true)
		d.destroy()
		if d.OnDestroyed != nil {
			d.OnDestroyed()
		}
	})
}

// destroy frees the device's own objects and the device.
func (d *Device) destroy() {
	d.holder.destroy(d)
	d.stage.destroy()
	d.mem.destroy()
	if d.Cache != 0 {
		d.VK.DestroyPipelineCache(d.Cache)
	}
	for _, q := range d.queues {
		d.VK.DestroySemaphore(q.sem)
	}
	d.VK.Destroy()
}

// Owner is anything that hands out the runtime Device: the Manager, and the
// Device itself. Constructors in tensor, algorithm and sequence take one.
type Owner interface {
	Runtime() *Device
}

// Runtime returns d, so a *Device is an Owner.
func (d *Device) Runtime() *Device { return d }

// From returns o's device, or an error for a nil or closed owner.
func From(o Owner) (*Device, error) {
	if o == nil {
		return nil, Invalid("nil Manager")
	}
	d := o.Runtime()
	if d == nil {
		return nil, Closed("Manager")
	}
	if d.closed.Load() {
		return nil, Closed("Manager")
	}
	return d, nil
}
