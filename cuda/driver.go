package cuda

import (
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/vkflow/vkflow/internal/core"
)

// Driver is the CUDA driver API of this process (libcuda.so.1), initialized.
// It holds nothing to release: the library stays loaded for the life of the
// process. A Driver is safe for concurrent use.
type Driver struct {
	api driverAPI
}

// Device is a CUDA device as the driver lists it.
type Device struct {
	Ordinal int      // the CUDA ordinal (cuDeviceGet)
	Name    string   // cuDeviceGetName
	UUID    [16]byte // cuDeviceGetUuid_v2: equals VkPhysicalDeviceIDProperties.deviceUUID of the same GPU

	handle int // the CUdevice
}

// String formats d as "0 NVIDIA H100 (GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)".
func (d Device) String() string {
	return fmt.Sprintf("%d %s (%s)", d.Ordinal, d.Name, FormatUUID(d.UUID))
}

// FormatUUID formats a device UUID the way nvidia-smi does:
// "GPU-" and 8-4-4-4-12 hex digits.
func FormatUUID(u [16]byte) string {
	h := hex.EncodeToString(u[:])
	return "GPU-" + h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// Open loads libcuda.so.1 (once per process) and initializes the driver
// API (cuInit). Without libcuda.so.1, or with a libcuda that has no usable
// device (CUDA_ERROR_NO_DEVICE, or the stub library of the CUDA toolkit),
// the error matches ErrUnsupported and says which.
func Open() (*Driver, error) {
	api, err := load()
	if err != nil {
		return nil, err
	}
	return open(api)
}

func open(api driverAPI) (*Driver, error) {
	if err := check(api, "cuInit", api.Init(0)); err != nil {
		return nil, fmt.Errorf("cuda: %w", err)
	}
	return &Driver{api: api}, nil
}

// Devices lists the CUDA devices in ordinal order.
func (d *Driver) Devices() ([]Device, error) {
	n, r := d.api.DeviceCount()
	if err := check(d.api, "cuDeviceGetCount", r); err != nil {
		return nil, fmt.Errorf("cuda: %w", err)
	}
	out := make([]Device, 0, n)
	for i := range n {
		h, r := d.api.DeviceGet(i)
		if err := check(d.api, "cuDeviceGet", r); err != nil {
			return nil, fmt.Errorf("cuda: device %d: %w", i, err)
		}
		name, r := d.api.DeviceName(h)
		if err := check(d.api, "cuDeviceGetName", r); err != nil {
			return nil, fmt.Errorf("cuda: device %d: %w", i, err)
		}
		uuid, r := d.api.DeviceUUID(h)
		if err := check(d.api, "cuDeviceGetUuid", r); err != nil {
			return nil, fmt.Errorf("cuda: device %d: %w", i, err)
		}
		out = append(out, Device{Ordinal: i, Name: name, UUID: uuid, handle: h})
	}
	return out, nil
}

// UUIDMatch returns the index in devices of the one CUDA device whose UUID
// equals vulkan, a VkPhysicalDeviceIDProperties.deviceUUID: the NVIDIA
// driver reports the same 16 bytes to Vulkan and to CUDA for one GPU.
//
// No match is ErrUnsupported naming the Vulkan UUID and every CUDA device's
// (the Vulkan device is not an NVIDIA GPU, or CUDA cannot see it, for
// example through CUDA_VISIBLE_DEVICES). Two or more matches (MIG instances
// of one GPU reported by the pre-11.4 cuDeviceGetUuid) are ErrUnsupported
// too, since the right one cannot be told apart. An all-zero UUID is
// ErrInvalid: the Vulkan driver did not report one.
func UUIDMatch(vulkan [16]byte, devices []Device) (int, error) {
	if vulkan == [16]byte{} {
		return -1, core.Invalid("cuda: the Vulkan deviceUUID is all zero")
	}
	var found []int
	for i, d := range devices {
		if d.UUID == vulkan {
			found = append(found, i)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return -1, core.Unsupported("cuda: no CUDA device has the Vulkan device's UUID %s (CUDA devices: %s)",
			FormatUUID(vulkan), listDevices(devices))
	default:
		var ords []string
		for _, i := range found {
			ords = append(ords, fmt.Sprint(devices[i].Ordinal))
		}
		return -1, core.Unsupported("cuda: the Vulkan device's UUID %s matches CUDA devices %s; cannot choose one",
			FormatUUID(vulkan), strings.Join(ords, " and "))
	}
}

func listDevices(devices []Device) string {
	if len(devices) == 0 {
		return "none"
	}
	s := make([]string, len(devices))
	for i, d := range devices {
		s[i] = d.String()
	}
	return strings.Join(s, ", ")
}

// DeviceByUUID finds the CUDA device whose UUID equals uuid, the Vulkan
// device's deviceUUID (interop.MemoryHandle.DeviceUUID), and retains its
// primary context (cuDevicePrimaryCtxRetain), the context the CUDA runtime,
// PyTorch and CuPy use, so pointers and streams are shared with them. The
// errors are UUIDMatch's. Close the Context when done.
func (d *Driver) DeviceByUUID(uuid [16]byte) (*Context, error) {
	devices, err := d.Devices()
	if err != nil {
		return nil, err
	}
	i, err := UUIDMatch(uuid, devices)
	if err != nil {
		return nil, err
	}
	dev := devices[i]
	h, r := d.api.PrimaryCtxRetain(dev.handle)
	if err := check(d.api, "cuDevicePrimaryCtxRetain", r); err != nil {
		return nil, fmt.Errorf("cuda: device %s: %w", dev, err)
	}
	return &Context{api: d.api, dev: dev, handle: h, refs: 1}, nil
}
