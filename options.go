package vkflow

import (
	"log/slog"
	"time"

	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/vk"
)

// Option configures New. Options are immutable values; New applies them in
// order, so a later option overrides an earlier one.
type Option func(*config)

type config struct {
	deviceIndex   int // -1: choose
	deviceName    string
	computeQueues int
	transfer      bool
	validation    bool
	hook          func(vk.Message)
	log           *slog.Logger
	features      *vk.Features
	staged        bool
	closeTimeout  time.Duration
	appName       string
	maxHeld       int
	waitSpin      time.Duration
	trace         string
	reads, writes HostPath
}

func defaultConfig() config {
	return config{deviceIndex: -1, computeQueues: 1, closeTimeout: 30 * time.Second, appName: "vkflow", maxHeld: DefaultMaxHeldSubmits, waitSpin: DefaultWaitSpin}
}

// WithDevice selects the physical device by its index in Devices().
func WithDevice(index int) Option { return func(c *config) { c.deviceIndex, c.deviceName = index, "" } }

// WithDeviceName selects the first device whose name contains substr
// (case-insensitive).
func WithDeviceName(substr string) Option {
	return func(c *config) { c.deviceName, c.deviceIndex = substr, -1 }
}

// WithQueues asks for compute logical compute queues and, with transfer, a
// logical transfer queue. Logical queues map onto the physical queues the
// device has (lavapipe has one); Queues reports the mapping. Sequences name
// a logical queue by index: compute queues first, then the transfer queue.
func WithQueues(compute int, transfer bool) Option {
	return func(c *config) { c.computeQueues, c.transfer = compute, transfer }
}

// WithValidation loads the Khronos validation layer with synchronization
// validation, and routes its messages to the logger (and the hook).
func WithValidation(on bool) Option { return func(c *config) { c.validation = on } }

// WithDebugHook receives every debug-utils message (validation reports)
// of warning or error severity, in addition to the logger.
func WithDebugHook(f func(vk.Message)) Option { return func(c *config) { c.hook = f } }

// WithLogger sets the logger; the default is slog.Default().
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.log = l } }

// WithFeatures enables exactly these device features (timeline semaphores
// are always enabled). By default every feature in vk.Features that the
// device supports is enabled, except buffer device address (it would need
// a flag on every allocation). Asking for one the device lacks fails New
// with ErrUnsupported.
func WithFeatures(f vk.Features) Option {
	return func(c *config) { c.features = &f }
}

// WithStagedDeviceMemory never maps device-local memory for Device tensors,
// so host access goes through the staging ring, as on a discrete GPU
// without resizable BAR. Useful to test that path on any device.
func WithStagedDeviceMemory() Option { return func(c *config) { c.staged = true } }

// WithCloseTimeout bounds how long Close waits for submitted work
// (default 30s). Past it, Close returns a *StuckError and frees nothing.
// The same bound applies to waits that take no context: host reads and
// writes of tensors through the staging ring (WithStagedDeviceMemory, or a
// discrete GPU) fail with an error wrapping context.DeadlineExceeded when
// the GPU does not finish the copy in time, and the copy's memory stays
// allocated until the GPU is done with it. WithCloseTimeout(0) makes Close
// wait for nothing (it frees nothing unless the GPU is already idle); those
// other waits then keep the 30s default. A negative duration is ErrInvalid.
func WithCloseTimeout(d time.Duration) Option { return func(c *config) { c.closeTimeout = d } }

// DefaultWaitSpin is the default of WithWaitSpin.
const DefaultWaitSpin = 200 * time.Microsecond

// WithWaitSpin sets how long a host wait on the GPU (a tensor read or Wait,
// a Pending's or a stream's wait, Synchronize, a timeline's Wait) polls the
// timeline before it sleeps in vkWaitSemaphores, yielding the CPU between
// polls, as CUDA's cudaDeviceScheduleYield does: work that completes
// within the spin costs the waiting thread no sleep and no wake-up, which
// is much of a short op's round trip (on lavapipe a synchronous 1,000-float
// add took about half the time of a blocking wait). The poll lasts at most
// 50 ms, the first slice of a wait, whatever d is. 0 sleeps at once, as
// cudaDeviceScheduleBlockingSync. Default DefaultWaitSpin. The environment
// variable VKFLOW_WAIT_SPIN (a Go duration such as "50us", or "0")
// overrides it, for programs that use vkflow from C or Python. A negative
// duration is ErrInvalid; so is an unparsable VKFLOW_WAIT_SPIN.
func WithWaitSpin(d time.Duration) Option { return func(c *config) { c.waitSpin = d } }

// WithTrace writes a Chrome trace of the Manager's work to path when it
// closes (Perfetto and chrome://tracing open it): a span per batch on each
// physical queue, timed on the GPU by timestamp queries and put on the
// host clock; host spans for vkQueueSubmit, waits on timelines (polled or
// slept), submits the scheduler held back and command buffer recording;
// and a flow arrow from each batch to the batches that wait for a value it
// signals (docs/PERFORMANCE.md). Off by default, and then free: the
// submit and wait paths test one nil pointer. The environment variable
// VKFLOW_TRACE=path does the same for programs that use vkflow from C or
// Python (the second Manager of a process writes path.2.json, and so on).
func WithTrace(path string) Option { return func(c *config) { c.trace = path } }

// WithAppName sets the Vulkan application name.
func WithAppName(name string) Option { return func(c *config) { c.appName = name } }

// DefaultMaxHeldSubmits is the default of WithMaxHeldSubmits.
const DefaultMaxHeldSubmits = core.DefaultMaxHeld

// WithMaxHeldSubmits bounds how many submits the scheduler holds back at
// once, waiting for timeline points that have not been signalled or
// promised by a submitted signal (default DefaultMaxHeldSubmits). A submit
// that would be held beyond the bound is refused at once with an error
// wrapping ErrBusy; nothing is submitted and nothing blocks. A submit whose
// waits are already promised is never refused. n < 1 means the default.
func WithMaxHeldSubmits(n int) Option {
	return func(c *config) {
		if n < 1 {
			n = DefaultMaxHeldSubmits
		}
		c.maxHeld = n
	}
}
