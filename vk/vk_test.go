package vk_test

import (
	"errors"
	"os"
	"sync"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/vk"
)

func TestMain(m *testing.M) {
	if os.Getenv("XDG_RUNTIME_DIR") == "" {
		dir, err := os.MkdirTemp("", "xdg")
		if err == nil {
			os.Setenv("XDG_RUNTIME_DIR", dir)
		}
	}
	os.Exit(m.Run())
}

// device opens instance 0's first device with validation and synchronization
// validation; any warning or error message fails the test.
func device(t *testing.T) (*vk.Instance, *vk.Device, vk.Queue, vk.PhysicalDeviceInfo) {
	t.Helper()
	return deviceExpecting(t, nil)
}

// layerSemaphoreRace is the report of validation layer 1.3.239's own race
// (timeline/timeline_test.go): a host signal on one thread wakes a wait on
// another before the layer recorded the signal, and the layer waits 10 s
// for its state before it reports this.
const layerSemaphoreRace = "UNASSIGNED-VkSemaphore-state-timeout"

// deviceExpecting is device, except that messages whose ID is a key of
// seen are counted there instead of failing the test.
func deviceExpecting(t *testing.T, seen map[string]int) (*vk.Instance, *vk.Device, vk.Queue, vk.PhysicalDeviceInfo) {
	t.Helper()
	var mu sync.Mutex
	inst, err := vk.CreateInstance(vk.InstanceConfig{
		AppName:        "vk_test",
		APIVersion:     vk.MakeVersion(1, 2, 0),
		Layers:         []string{vk.ValidationLayer},
		Extensions:     []string{vk.DebugUtilsExtension},
		SyncValidation: true,
		Debug: func(m vk.Message) {
			if !testutil.Fails(m) {
				return // the loader's own messages (VK_INSTANCE_LAYERS)
			}
			mu.Lock()
			defer mu.Unlock()
			if _, ok := seen[m.ID]; ok {
				seen[m.ID]++
				t.Logf("expected validation %s: %s: %s", m.Severity, m.ID, m.Text)
				return
			}
			t.Errorf("validation %s: %s: %s", m.Severity, m.ID, m.Text)
		},
	})
	require.NoError(t, err)
	pds, err := inst.PhysicalDevices()
	require.NoError(t, err)
	require.NotEmpty(t, pds)
	info, err := vk.Describe(pds[0])
	require.NoError(t, err)
	dev, err := vk.CreateDevice(pds[0], vk.DeviceConfig{
		Queues:     []vk.QueueRequest{{Family: 0, Count: 1}},
		Features:   vk.Features{TimelineSemaphore: true},
		APIVersion: min(info.APIVersion, vk.MakeVersion(1, 2, 0)),
	})
	require.NoError(t, err)
	t.Cleanup(func() {
		dev.Destroy()
		inst.Destroy()
	})
	return inst, dev, dev.Queue(0, 0), info
}

func TestDescribe(t *testing.T) {
	_, _, _, info := device(t)
	assert.NotEmpty(t, info.Name)
	assert.True(t, info.Features.TimelineSemaphore)
	assert.NotEmpty(t, info.QueueFamilies)
	assert.NotEmpty(t, info.MemoryTypes)
	assert.NotZero(t, info.Limits.MaxStorageBufferRange)
	// Every Vulkan 1.1+ device has basic subgroup operations in compute
	// shaders and a power-of-two subgroup size.
	assert.True(t, info.Subgroup.Compute(vk.SubgroupBasic), "subgroup %+v", info.Subgroup)
	assert.NotZero(t, info.Subgroup.Size)
	assert.Zero(t, info.Subgroup.Size&(info.Subgroup.Size-1), "subgroup size %d", info.Subgroup.Size)
	t.Logf("subgroup: size %d, stages %#x, operations %#x", info.Subgroup.Size, info.Subgroup.Stages, info.Subgroup.Operations)
}

func TestTimelineSubmitWaitAllocatesNothing(t *testing.T) {
	_, dev, q, _ := device(t)
	sem, err := dev.CreateTimeline(0)
	require.NoError(t, err)
	defer dev.DestroySemaphore(sem)
	value := uint64(0)
	// Total allocations over all runs, not AllocsPerRun's rounded average.
	allocs := testutil.Allocs(1000, func() {
		value++
		if err := vk.QueueSubmitSignal(q, nil, sem, value); err != nil {
			t.Fatal(err)
		}
		if err := dev.WaitSemaphore(sem, value, ^uint64(0)); err != nil {
			t.Fatal(err)
		}
	})
	assert.Zero(t, allocs)
	got, err := dev.SemaphoreValue(sem)
	require.NoError(t, err)
	assert.Equal(t, value, got)
}

// Waiting in bounded slices must not allocate, even when slices time out.
func TestTimedOutWaitAllocatesNothing(t *testing.T) {
	_, dev, _, _ := device(t)
	sem, err := dev.CreateTimeline(0)
	require.NoError(t, err)
	defer dev.DestroySemaphore(sem)
	allocs := testutil.Allocs(50, func() {
		if err := dev.WaitSemaphore(sem, 1, 1000); !errors.Is(err, vk.ErrTimeout) {
			t.Fatal(err)
		}
	})
	assert.Zero(t, allocs)
}

func TestWaitTimeoutAndHostSignal(t *testing.T) {
	_, dev, _, _ := device(t)
	sem, err := dev.CreateTimeline(3)
	require.NoError(t, err)
	defer dev.DestroySemaphore(sem)
	err = dev.WaitSemaphore(sem, 4, 1000)
	require.Error(t, err)
	assert.ErrorIs(t, err, vk.ErrTimeout)
	assert.Equal(t, "vkWaitSemaphores: VK_TIMEOUT", err.Error())
	require.NoError(t, dev.SignalSemaphore(sem, 4))
	require.NoError(t, dev.WaitSemaphore(sem, 4, 0))
}

func TestErrorNamesAndSentinels(t *testing.T) {
	tests := []struct {
		err  error
		text string
		is   error
	}{
		{&vk.Error{Call: "vkQueueSubmit", Result: vk.ErrorDeviceLost}, "vkQueueSubmit: VK_ERROR_DEVICE_LOST", vk.ErrDeviceLost},
		{&vk.Error{Call: "vkAllocateMemory", Result: vk.ErrorOutOfDeviceMemory}, "vkAllocateMemory: VK_ERROR_OUT_OF_DEVICE_MEMORY", vk.ErrOutOfDeviceMemory},
		{&vk.Error{Call: "vkAllocateMemory", Result: vk.ErrorOutOfHostMemory}, "vkAllocateMemory: VK_ERROR_OUT_OF_HOST_MEMORY", vk.ErrOutOfHostMemory},
		{&vk.Error{Call: "vkCreateDevice", Result: vk.ErrorFeatureNotPresent}, "vkCreateDevice: VK_ERROR_FEATURE_NOT_PRESENT", vk.ErrNotSupported},
		{&vk.Error{Call: "vkWaitSemaphores", Result: vk.Timeout}, "vkWaitSemaphores: VK_TIMEOUT", vk.ErrTimeout},
		{&vk.Error{Call: "vkX", Result: -12345}, "vkX: VkResult(-12345)", nil},
	}
	for i, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			assert.Equal(t, tt.text, tt.err.Error())
			if tt.is != nil {
				assert.ErrorIs(t, tt.err, tt.is)
			}
			var ve *vk.Error
			assert.True(t, errors.As(tt.err, &ve))
			if i > 0 {
				assert.NotErrorIs(t, tt.err, vk.ErrDeviceLost)
			}
		})
	}
}

func TestLayoutsMatchC(t *testing.T) {
	// The barrier and copy structs are handed to C as arrays.
	assert.Equal(t, uintptr(40), unsafe.Sizeof(vk.BufferBarrier{}))
	assert.Equal(t, uintptr(24), unsafe.Sizeof(vk.CopyRegion{}))
}
