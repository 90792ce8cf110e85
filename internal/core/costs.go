package core

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/vkflow/vkflow/vk"
)

// Costs is what work costs on a device, for deciding where work goes
// (package graph's placement): the hand-offs between queues against the
// GPU time of the work itself.
type Costs struct {
	// SubmitNs is a hand-off on one physical queue: a command buffer of
	// its own that follows the previous one, per link of a chain of them.
	SubmitNs float64 `json:"submit_ns"`
	// HandoffNs is a hand-off between two physical queues: a command
	// buffer that waits on the timeline of the other queue's last one,
	// per link of a chain alternating between them (0 with one physical
	// queue).
	HandoffNs float64 `json:"handoff_ns"`
	// ByteNs is the GPU time per byte a transfer writes (vkCmdFillBuffer
	// of 32 MiB). An invocation of a simple kernel counts as 4 bytes.
	ByteNs float64 `json:"byte_ns"`
	// Source says where the figures come from: "measured", "cache"
	// (measured earlier, read from Path) or "injected".
	Source string `json:"-"`
	Path   string `json:"-"` // the cache file, when there is one
}

// InvocationNs is the estimated GPU time of one invocation of a simple
// kernel.
func (c Costs) InvocationNs() float64 { return 4 * c.ByteNs }

func (c Costs) String() string {
	between := fmtNs(c.HandoffNs) + " between queues"
	if c.HandoffNs == 0 {
		between = "none between queues measured"
	}
	s := fmt.Sprintf("hand-off %s on one queue, %s, %.4g ns per invocation (%s",
		fmtNs(c.SubmitNs), between, c.InvocationNs(), c.Source)
	if c.Path != "" {
		s += " " + c.Path
	}
	return s + ")"
}

func fmtNs(ns float64) string { return time.Duration(ns).Round(100 * time.Nanosecond).String() }

// Valid reports whether the figures can drive placement: all finite and
// non-negative, the work's cost positive.
func (c Costs) Valid() bool {
	ok := func(v float64) bool { return v >= 0 && v < 1e15 }
	return ok(c.SubmitNs) && ok(c.HandoffNs) && ok(c.ByteNs) && c.ByteNs > 0
}

// costsVersion changes when the measurement does, so that older cache
// files are measured again.
const costsVersion = 1

// Costs returns the device's costs: measured the first time, then kept,
// and cached per device, driver and queue count in the user's cache folder
// (os.UserCacheDir()/vkflow), so that later Managers read them back. A
// failed measurement is not kept: the next call measures again.
func (d *Device) Costs(ctx context.Context) (Costs, error) {
	d.costMu.Lock()
	defer d.costMu.Unlock()
	if d.costs != nil {
		return *d.costs, nil
	}
	path := d.costsPath()
	if c, ok := readCosts(path); ok {
		c.Source, c.Path = "cache", path
		d.costs = &c
		return c, nil
	}
	c, err := d.measureCosts(ctx)
	if err != nil {
		return Costs{}, err
	}
	c.Source = "measured"
	if path != "" {
		if err := writeCosts(path, c); err != nil {
			d.Log.Debug("vkflow: the measured costs could not be cached", "path", path, "err", err)
		} else {
			c.Path = path
		}
	}
	d.costs = &c
	return c, nil
}

// costsPath is the cache file for this device, driver and physical queue
// count; "" without a user cache folder.
func (d *Device) costsPath() string {
	dir, err := os.UserCacheDir()
	if err != nil || dir == "" {
		return ""
	}
	i := d.Info
	name := fmt.Sprintf("costs-v%d-%04x-%04x-%08x-%s-%dq.json", costsVersion, i.VendorID, i.DeviceID, i.DriverVersion,
		hex.EncodeToString(i.DriverUUID[:4]), len(d.queues))
	return filepath.Join(dir, "vkflow", name)
}

func readCosts(path string) (Costs, bool) {
	if path == "" {
		return Costs{}, false
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return Costs{}, false
	}
	var c Costs
	if json.Unmarshal(b, &c) != nil || !c.Valid() {
		return Costs{}, false
	}
	return c, true
}

func writeCosts(path string, c Costs) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + fmt.Sprintf(".%d.tmp", os.Getpid())
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// costLinks is the length of each measured chain; the median of
// costRounds rounds counts.
const (
	costLinks  = 24
	costRounds = 3
)

// measureCosts times a chain of submits on physical queue 0, a chain
// alternating between queue 0 and a second physical queue (each waiting on
// the other's last value), and a fill of 32 MiB. About 10-50 ms.
func (d *Device) measureCosts(ctx context.Context) (Costs, error) {
	if err := d.Enter(); err != nil {
		return Costs{}, err
	}
	defer d.Exit()
	var c Costs
	med := func(f func() (float64, error)) (float64, error) {
		var v [costRounds]float64
		for r := range v {
			x, err := f()
			if err != nil {
				return 0, err
			}
			v[r] = x
		}
		slices.Sort(v[:])
		return v[len(v)/2], nil
	}
	var err error
	if c.SubmitNs, err = med(func() (float64, error) { return d.chain(ctx, d.queues[0], d.queues[0]) }); err != nil {
		return Costs{}, err
	}
	if other := d.secondQueue(); other != nil {
		if c.HandoffNs, err = med(func() (float64, error) { return d.chain(ctx, d.queues[0], other) }); err != nil {
			return Costs{}, err
		}
	}
	if c.ByteNs, err = med(func() (float64, error) { return d.fillCost(ctx) }); err != nil {
		return Costs{}, err
	}
	return c, nil
}

// secondQueue is the physical queue a hand-off from queue 0 is measured
// to: another of its family (the compute queues graphs spread over), else
// any other; nil with one physical queue.
func (d *Device) secondQueue() *Queue {
	for _, q := range d.queues[1:] {
		if q.Family == d.queues[0].Family {
			return q
		}
	}
	if len(d.queues) > 1 {
		return d.queues[1]
	}
	return nil
}

// chain submits costLinks empty batches alternating between a and b, each
// waiting on the previous one's timeline value, and returns the time per
// link from the first submit to the last completion.
func (d *Device) chain(ctx context.Context, a, b *Queue) (float64, error) {
	start := time.Now()
	var last *Queue
	var v uint64
	for k := range costLinks {
		q := a
		if k%2 == 1 {
			q = b
		}
		s := &vk.Submit{}
		if last != nil && last != q {
			s.WaitSems, s.WaitValues, s.WaitStages = []vk.Semaphore{last.sem}, []uint64{v}, []uint32{vk.StageAllCommands}
		}
		q.Lock()
		nv, err := q.SubmitLocked(s, nil)
		q.Unlock()
		if err != nil {
			return 0, err
		}
		last, v = q, nv
	}
	if err := last.Wait(ctx, v); err != nil {
		return 0, err
	}
	return float64(time.Since(start).Nanoseconds()) / costLinks, nil
}

// fillCost times vkCmdFillBuffer over 32 MiB of Storage memory on queue 0,
// net of an empty command buffer's round trip, per byte. It uses the
// staging ring's command buffer and its handling of a copy that times out:
// the buffer is then freed only once the fill has completed.
func (d *Device) fillCost(ctx context.Context) (float64, error) {
	const size = 32 << 20
	s := &d.stage
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.settle(ctx); err != nil {
		return 0, err
	}
	if err := s.ensurePool(); err != nil {
		return 0, err
	}
	buf, err := d.Alloc(MemStorage, size, vk.BufferUsageTransferDst|vk.BufferUsageStorage)
	if err != nil {
		return 0, err
	}
	defer d.Free(buf) // deferred by the ring while a timed-out fill may run
	cmd, q := s.cmds[0], d.queues[0]
	round := func(fill bool) (time.Duration, error) {
		if err := vk.ResetCommandBuffer(cmd); err != nil {
			return 0, err
		}
		if err := vk.BeginCommandBuffer(cmd, vk.CommandBufferOneTimeSubmit); err != nil {
			return 0, err
		}
		vk.CmdPipelineBarrier(cmd, vk.StageAllCommands, vk.StageTransfer, vk.AccessMemoryWrite|vk.AccessMemoryRead, vk.AccessTransferWrite, nil)
		if fill {
			vk.CmdFillBuffer(cmd, buf.Buffer, 0, size, 0)
		}
		if err := vk.EndCommandBuffer(cmd); err != nil {
			return 0, err
		}
		start := time.Now()
		v, err := q.Submit(cmd)
		if err != nil {
			return 0, err
		}
		if err := q.Wait(ctx, v); err != nil {
			s.stuckMu.Lock()
			s.stuck = &stuckCopy{alloc: buf, value: v}
			s.stuckMu.Unlock()
			return 0, fmt.Errorf("vkflow: measuring the device's costs: waiting for a fill (queue 0 value %d): %w", v, err)
		}
		return time.Since(start), nil
	}
	empty, err := round(false)
	if err != nil {
		return 0, err
	}
	full, err := round(true)
	if err != nil {
		return 0, err
	}
	return max(float64((full-empty).Nanoseconds()), 1) / size, nil
}
