package vkflow

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/vk"
)

var errNoDevice = errors.New("vkflow: no usable Vulkan device")

// apiVersion is the Vulkan version vkflow asks for. Timeline semaphores are
// core in 1.2.
var apiVersion = vk.MakeVersion(1, 3, 0)

// Manager owns one Vulkan instance and device, and everything created from
// them. It is safe for concurrent use.
//
// Memory of an object closed while the GPU still uses it is freed once the
// GPU is done with it, without any later call: the Manager runs one
// goroutine per physical queue (one on most devices) that parks in a wait
// on the queue's timeline semaphore for the deferred objects' last uses,
// and frees them when they complete. It polls nothing, costs submits and
// waits nothing, and stops with Close.
type Manager struct {
	inst *vk.Instance
	dev  *core.Device
	info DeviceInfo
	cfg  config

	closeMu  sync.Mutex
	closed   bool
	closeErr error
}

// QueueInfo describes a logical queue and the physical queue it runs on.
type QueueInfo = core.QueueInfo

// DeviceInfo describes a physical device.
type DeviceInfo struct {
	Index int
	vk.PhysicalDeviceInfo
	// Usable reports whether vkflow can run on the device (Vulkan 1.2 and
	// timeline semaphores); Reason says why not.
	Usable bool
	Reason string
}

func (d DeviceInfo) String() string {
	return fmt.Sprintf("%d: %s (%s, Vulkan %s)", d.Index, d.Name, d.Type, vk.VersionString(d.APIVersion))
}

func describe(index int, pd vk.PhysicalDevice) (DeviceInfo, error) {
	info, err := vk.Describe(pd)
	d := DeviceInfo{Index: index, PhysicalDeviceInfo: info, Usable: true}
	switch {
	case err != nil:
		return d, err
	case info.APIVersion < vk.MakeVersion(1, 2, 0):
		d.Usable, d.Reason = false, "needs Vulkan 1.2, has "+vk.VersionString(info.APIVersion)
	case !info.Features.TimelineSemaphore:
		d.Usable, d.Reason = false, "no timeline semaphores"
	}
	return d, nil
}

func setupEnv() {
	// The loader prints errors on every start without XDG_RUNTIME_DIR.
	if os.Getenv("XDG_RUNTIME_DIR") == "" {
		if dir, err := os.MkdirTemp("", "vkflow-xdg"); err == nil {
			os.Setenv("XDG_RUNTIME_DIR", dir)
		}
	}
}

// Devices lists the physical devices without opening any.
func Devices() ([]DeviceInfo, error) {
	setupEnv()
	inst, err := vk.CreateInstance(vk.InstanceConfig{AppName: "vkflow", APIVersion: apiVersion})
	if err != nil {
		return nil, err
	}
	defer inst.Destroy()
	pds, err := inst.PhysicalDevices()
	if err != nil {
		return nil, err
	}
	out := make([]DeviceInfo, 0, len(pds))
	for i, pd := range pds {
		d, err := describe(i, pd)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

var typeRank = map[vk.DeviceType]int{
	vk.DeviceTypeDiscreteGPU:   0,
	vk.DeviceTypeIntegratedGPU: 1,
	vk.DeviceTypeVirtualGPU:    2,
	vk.DeviceTypeCPU:           3,
	vk.DeviceTypeOther:         4,
}

// choose picks a device: VKFLOW_DEVICE (an index or a name substring)
// overrides the options; then the index or name option; else the best
// usable type, discrete > integrated > virtual > CPU.
func choose(devs []DeviceInfo, cfg config) (DeviceInfo, error) {
	index, name := cfg.deviceIndex, cfg.deviceName
	if env := strings.TrimSpace(os.Getenv("VKFLOW_DEVICE")); env != "" {
		if i, err := strconv.Atoi(env); err == nil {
			index, name = i, ""
		} else {
			index, name = -1, env
		}
	}
	pick := func(d DeviceInfo) (DeviceInfo, error) {
		if !d.Usable {
			return d, fmt.Errorf("%w: device %s: %s", ErrUnsupported, d, d.Reason)
		}
		return d, nil
	}
	switch {
	case index >= 0:
		if index >= len(devs) {
			return DeviceInfo{}, fmt.Errorf("%w: device index %d out of range: %d devices", ErrInvalid, index, len(devs))
		}
		return pick(devs[index])
	case name != "":
		for _, d := range devs {
			if strings.Contains(strings.ToLower(d.Name), strings.ToLower(name)) {
				return pick(d)
			}
		}
		return DeviceInfo{}, fmt.Errorf("%w: no device name contains %q", ErrNoDevice, name)
	}
	usable := slices.DeleteFunc(slices.Clone(devs), func(d DeviceInfo) bool { return !d.Usable })
	if len(usable) == 0 {
		return DeviceInfo{}, fmt.Errorf("%w (%d devices found; install mesa-vulkan-drivers for the CPU driver)", ErrNoDevice, len(devs))
	}
	slices.SortStableFunc(usable, func(a, b DeviceInfo) int { return typeRank[a.Type] - typeRank[b.Type] })
	return usable[0], nil
}

// defaultFeatures is every feature vkflow knows that the device supports.
func defaultFeatures(have vk.Features) vk.Features {
	want := vk.Features{
		TimelineSemaphore: true, Synchronization2: true,
		ShaderFloat16: true, ShaderFloat64: true, ShaderInt8: true, ShaderInt16: true, ShaderInt64: true,
		StorageBuffer8BitAccess: true, StorageBuffer16BitAccess: true, HostQueryReset: true,
	}
	return want.And(have)
}

// envTraced counts the Managers VKFLOW_TRACE traced in this process.
var envTraced atomic.Int32

// envTracePath is the trace file VKFLOW_TRACE names for a new Manager:
// the path itself for the first, path with .2, .3, ... before its
// extension for the next ones; "" when it is not set.
func envTracePath() string {
	p := strings.TrimSpace(os.Getenv("VKFLOW_TRACE"))
	if p == "" {
		return ""
	}
	if n := envTraced.Add(1); n > 1 {
		ext := filepath.Ext(p)
		p = fmt.Sprintf("%s.%d%s", strings.TrimSuffix(p, ext), n, ext)
	}
	return p
}

// New opens a Manager on the chosen device.
func New(opts ...Option) (*Manager, error) {
	cfg := defaultConfig()
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	if v := os.Getenv("VKFLOW_VALIDATION"); v != "" && v != "0" {
		cfg.validation = true
	}
	if cfg.computeQueues < 1 {
		return nil, fmt.Errorf("%w: WithQueues: need at least 1 compute queue, got %d", ErrInvalid, cfg.computeQueues)
	}
	if v := strings.TrimSpace(os.Getenv("VKFLOW_WAIT_SPIN")); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			return nil, fmt.Errorf("%w: VKFLOW_WAIT_SPIN=%q: not a duration (e.g. 50us, or 0)", ErrInvalid, v)
		}
		cfg.waitSpin = d
	}
	if cfg.trace == "" {
		cfg.trace = envTracePath()
	}
	if err := hostPaths(&cfg); err != nil {
		return nil, err
	}
	if cfg.waitSpin < 0 {
		return nil, fmt.Errorf("%w: WithWaitSpin(%v): the spin cannot be negative", ErrInvalid, cfg.waitSpin)
	}
	if cfg.closeTimeout < 0 {
		return nil, fmt.Errorf("%w: WithCloseTimeout(%v): the bound on waits cannot be negative", ErrInvalid, cfg.closeTimeout)
	}
	log := cfg.log
	if log == nil {
		log = slog.Default()
	}
	setupEnv()
	if err := vk.Load(); err != nil {
		return nil, err
	}

	ic := vk.InstanceConfig{AppName: cfg.appName, APIVersion: apiVersion}
	exts, err := vk.InstanceExtensions()
	if err != nil {
		return nil, err
	}
	if cfg.validation {
		layers, err := vk.InstanceLayers()
		if err != nil {
			return nil, err
		}
		if !slices.Contains(layers, vk.ValidationLayer) {
			return nil, fmt.Errorf("%w: validation requested but %s is not installed (Debian: vulkan-validationlayers)", ErrUnsupported, vk.ValidationLayer)
		}
		ic.Layers = []string{vk.ValidationLayer}
		ic.SyncValidation = true
	}
	if slices.Contains(exts, vk.DebugUtilsExtension) && (cfg.validation || cfg.hook != nil) {
		ic.Extensions = append(ic.Extensions, vk.DebugUtilsExtension)
		hook := cfg.hook
		ic.DebugSeverity = vk.SeverityInfo
		ic.Debug = func(m vk.Message) {
			level := slog.LevelDebug
			switch {
			case m.Severity >= vk.SeverityError:
				level = slog.LevelError
			case m.Severity >= vk.SeverityWarning:
				level = slog.LevelWarn
			}
			log.Log(context.Background(), level, "vulkan: "+m.Text, "id", m.ID)
			if hook != nil && m.Severity >= vk.SeverityWarning {
				hook(m)
			}
		}
	}
	inst, err := vk.CreateInstance(ic)
	if err != nil {
		return nil, err
	}
	m, err := open(inst, cfg, log)
	if err != nil {
		inst.Destroy()
		return nil, err
	}
	return m, nil
}

func open(inst *vk.Instance, cfg config, log *slog.Logger) (*Manager, error) {
	pds, err := inst.PhysicalDevices()
	if err != nil {
		return nil, err
	}
	devs := make([]DeviceInfo, 0, len(pds))
	for i, pd := range pds {
		d, err := describe(i, pd)
		if err != nil {
			return nil, err
		}
		devs = append(devs, d)
	}
	info, err := choose(devs, cfg)
	if err != nil {
		return nil, err
	}
	features := defaultFeatures(info.Features)
	if cfg.features != nil {
		features = *cfg.features
		features.TimelineSemaphore = true
	}
	dev, err := core.Open(core.Config{
		Physical:           pds[info.Index],
		Info:               info.PhysicalDeviceInfo,
		APIVersion:         apiVersion,
		ComputeQueues:      cfg.computeQueues,
		TransferQueue:      cfg.transfer,
		Features:           features,
		StagedDeviceMemory: cfg.staged,
		ReadPath:           cfg.reads,
		WritePath:          cfg.writes,
		MaxHeld:            cfg.maxHeld,
		WaitTimeout:        cfg.closeTimeout,
		WaitSpin:           cfg.waitSpin,
		Trace:              cfg.trace,
		CalibratedClock:    cfg.trace != "" && inst.MonotonicCalibrateable(pds[info.Index], &info.PhysicalDeviceInfo),
		Log:                log,
		Index:              info.Index,
	})
	if err != nil {
		return nil, err
	}
	log.Debug("vkflow: device opened", "device", info.Name, "type", info.Type.String(), "queues", len(dev.Queues()))
	dev.OnDestroyed = inst.Destroy
	return &Manager{inst: inst, dev: dev, info: info, cfg: cfg}, nil
}

// Runtime returns the Manager's runtime device, for tensor, algorithm and
// sequence constructors. After Close it returns nil.
func (m *Manager) Runtime() *core.Device {
	if m == nil {
		return nil
	}
	m.closeMu.Lock()
	defer m.closeMu.Unlock()
	if m.closed {
		return nil
	}
	return m.dev
}

// Device describes the device the Manager opened.
func (m *Manager) Device() DeviceInfo { return m.info }

// Queues lists the logical queues and where each one runs.
func (m *Manager) Queues() []QueueInfo { return m.dev.Queues() }

// Features returns the features enabled on the device.
func (m *Manager) Features() vk.Features { return m.dev.Features }

// MemStats returns the memory allocator's counters.
func (m *Manager) MemStats() core.MemStats { return m.dev.MemStats() }

// Costs returns what work costs on the Manager's device, as package
// graph's placement by cost sees it: a hand-off between command buffers on
// one physical queue and between two, and the GPU time per byte a transfer
// writes (an invocation of a simple kernel counts 4 bytes). They are
// measured the first time (10-50 ms; ctx bounds it), then kept, and cached
// per device and driver in the user cache folder (os.UserCacheDir()/vkflow)
// for later Managers.
func (m *Manager) Costs(ctx context.Context) (core.Costs, error) {
	d := m.Runtime()
	if d == nil {
		return core.Costs{}, fmt.Errorf("%w: Manager", ErrClosed)
	}
	return d.Costs(ctx)
}

// OpCacheStats returns the counters of the Manager's eager op streams
// (package ops): prepared-op cache hits, misses, evictions and entries,
// eager submits, and host waits inside eager calls.
func (m *Manager) OpCacheStats() core.OpCacheStats { return m.dev.OpCacheStats() }

// WaitStats returns the counters of the host's waits on the GPU that
// reached the driver: those that ended while polling (WithWaitSpin) and
// those that went on to sleep in vkWaitSemaphores. Many Blocked waits on
// short work suggest a longer spin; see WithWaitSpin.
func (m *Manager) WaitStats() core.WaitStats { return m.dev.WaitStats() }

// Close waits for submitted work (up to WithCloseTimeout), closes every
// sequence, algorithm, tensor and timeline created from the Manager in that
// order, then the device and the instance. Further calls return nil. If the
// GPU never finishes, Close returns a *StuckError, frees nothing and keeps
// the instance: leaking is safe, freeing memory the GPU uses is not.
//
// Memory exported through DLPack outlives Close: the tensors are closed,
// but their memory, the device and the instance are destroyed when the
// last export's deleter has run.
//
// Close is safe to call while other goroutines use the Manager: calls
// already inside finish first (a blocked wait, an eager call's wait for
// room in its stream among them, gives up within 50ms with ErrClosed),
// and every later call returns ErrClosed. Close stops and joins the
// Manager's completion watcher before it frees anything. After a device loss (ErrDeviceLost,
// which every call returns once any call met it) Close idles the device
// and frees everything.
func (m *Manager) Close() error {
	m.closeMu.Lock()
	if m.closed {
		m.closeMu.Unlock()
		return nil
	}
	m.closed = true
	m.closeMu.Unlock()
	// The device destroys the instance after itself (OnDestroyed): at once,
	// or when the last DLPack export is released; never when GPU work is
	// stuck.
	return m.dev.Close(m.cfg.closeTimeout)
}
