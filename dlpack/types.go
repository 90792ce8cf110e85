package dlpack

/*
#include "dlpack.h"
*/
import "C"

import (
	"fmt"
	"unsafe"

	"github.com/vkflow/vkflow/tensor"
	"github.com/vkflow/vkflow/vk"
)

// Version is a DLPack ABI version.
type Version struct{ Major, Minor uint32 }

// Current is the newest DLPack version vkflow produces and reads.
var Current = Version{1, 3}

func (v Version) String() string { return fmt.Sprintf("%d.%d", v.Major, v.Minor) }

// DeviceType is DLDeviceType.
type DeviceType int32

// The device types vkflow produces or accepts (others are named in errors).
const (
	CPU    DeviceType = 1 // kDLCPU
	CUDA   DeviceType = 2 // kDLCUDA: data is a CUDA device pointer (export only; cuda.go)
	Vulkan DeviceType = 7 // kDLVulkan: data points to a VulkanBuffer
)

func (t DeviceType) String() string {
	switch t {
	case CPU:
		return "kDLCPU"
	case CUDA:
		return "kDLCUDA"
	case Vulkan:
		return "kDLVulkan"
	}
	return fmt.Sprintf("DLDeviceType(%d)", int32(t))
}

// Device is DLDevice.
type Device struct {
	Type DeviceType
	ID   int32
}

func (d Device) String() string { return fmt.Sprintf("(%v, %d)", d.Type, d.ID) }

// DataType is DLDataType.
type DataType struct {
	Code  uint8
	Bits  uint8
	Lanes uint16
}

// DLDataTypeCode values.
const (
	codeInt     = 0
	codeUInt    = 1
	codeFloat   = 2
	codeComplex = 5 // kDLComplex: bits are the whole element (64: two float32)
	codeBool    = 6
)

// Flags of DLManagedTensorVersioned.
const (
	FlagReadOnly  uint64 = 1 << 0
	FlagIsCopied  uint64 = 1 << 1
	FlagSubbyteTP uint64 = 1 << 2 // IS_SUBBYTE_TYPE_PADDED
)

// maxDims bounds ndim on import; DLPack sets no limit, so this only guards
// against garbage.
const maxDims = 32

// DataTypeOf maps a vkflow dtype to DLPack: float16 is (kDLFloat, 16), bool
// is (kDLBool, 8), complex64 and complex128 are (kDLComplex, 64) and
// (kDLComplex, 128).
func DataTypeOf(d tensor.Dtype) (DataType, bool) {
	bits := uint8(d.Size() * 8)
	switch d {
	case tensor.Float16, tensor.Float32, tensor.Float64:
		return DataType{codeFloat, bits, 1}, true
	case tensor.Int8, tensor.Int16, tensor.Int32, tensor.Int64:
		return DataType{codeInt, bits, 1}, true
	case tensor.Uint8, tensor.Uint16, tensor.Uint32, tensor.Uint64:
		return DataType{codeUInt, bits, 1}, true
	case tensor.Bool:
		return DataType{codeBool, 8, 1}, true
	case tensor.Complex64, tensor.Complex128:
		return DataType{codeComplex, bits, 1}, true
	}
	return DataType{}, false
}

// DtypeOf maps a DLPack data type to a vkflow dtype.
func DtypeOf(t DataType) (tensor.Dtype, bool) {
	if t.Lanes != 1 {
		return 0, false
	}
	for _, d := range append(tensor.Dtypes(), tensor.ComplexDtypes()...) {
		if dt, _ := DataTypeOf(d); dt == t {
			return d, true
		}
	}
	return 0, false
}

// VulkanBuffer is what data points to in a kDLVulkan tensor: the layout of
// vkflow_vulkan_buffer in vkflow_vulkan.h, whose comment states the
// synchronization contract.
type VulkanBuffer struct {
	Device            unsafe.Pointer // VkDevice
	Buffer            vk.Buffer
	Memory            vk.DeviceMemory
	MemoryOffset      uint64
	Size              uint64
	ReadySemaphore    vk.Semaphore
	ReadyValue        uint64
	ReleasedSemaphore vk.Semaphore // set by the consumer before the deleter
	ReleasedValue     uint64
}

// Managed is a DLPack managed tensor in C memory: a DLManagedTensor, or a
// DLManagedTensorVersioned when Versioned. Whoever holds it owns one call
// of its deleter (Delete, or Import, which takes it over).
type Managed struct {
	ptr       unsafe.Pointer
	versioned bool
}

// FromPointer wraps a managed tensor received from C.
func FromPointer(p unsafe.Pointer, versioned bool) Managed { return Managed{p, versioned} }

// Pointer returns the DLManagedTensor* or DLManagedTensorVersioned*.
func (m Managed) Pointer() unsafe.Pointer { return m.ptr }

// Versioned reports whether Pointer is a DLManagedTensorVersioned.
func (m Managed) Versioned() bool { return m.versioned }

// Delete calls the deleter; Managed must not be used afterwards.
func (m Managed) Delete() {
	if m.ptr != nil {
		C.vkflowCallDeleter(m.ptr, b2i(m.versioned))
	}
}

func b2i(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

// dl returns the DLTensor inside m.
func (m Managed) dl() *C.DLTensor {
	if m.versioned {
		return &(*C.DLManagedTensorVersioned)(m.ptr).dl_tensor
	}
	return &(*C.DLManagedTensor)(m.ptr).dl_tensor
}

// Info is a Go copy of a managed tensor's description.
type Info struct {
	Version    Version // 0.0 for a legacy struct
	Flags      uint64
	Device     Device
	DataType   DataType
	Shape      []int64
	Strides    []int64 // nil when the producer left them out
	ByteOffset uint64
	Data       unsafe.Pointer
}

// Describe reads m. It trusts ndim and the shape and strides pointers, as
// any DLPack consumer must; Import validates before it trusts.
func (m Managed) Describe() Info {
	var in Info
	if m.versioned {
		v := (*C.DLManagedTensorVersioned)(m.ptr)
		in.Version = Version{uint32(v.version.major), uint32(v.version.minor)}
		in.Flags = uint64(v.flags)
	}
	t := m.dl()
	in.Device = Device{DeviceType(t.device.device_type), int32(t.device.device_id)}
	in.DataType = DataType{uint8(t.dtype.code), uint8(t.dtype.bits), uint16(t.dtype.lanes)}
	in.ByteOffset = uint64(t.byte_offset)
	in.Data = t.data
	n := int(t.ndim)
	if n > 0 && n <= maxDims && t.shape != nil {
		in.Shape = append([]int64(nil), unsafe.Slice((*int64)(unsafe.Pointer(t.shape)), n)...)
		if t.strides != nil {
			in.Strides = append([]int64(nil), unsafe.Slice((*int64)(unsafe.Pointer(t.strides)), n)...)
		}
	}
	return in
}

// Vulkan returns the VulkanBuffer a kDLVulkan tensor's data points to, or
// nil for another device type.
func (m Managed) Vulkan() *VulkanBuffer {
	t := m.dl()
	if DeviceType(t.device.device_type) != Vulkan || t.data == nil {
		return nil
	}
	return (*VulkanBuffer)(t.data)
}

// SetReleased hands back a kDLVulkan consumer's released point: the
// producer frees nothing before sem reaches v. Call it before Delete.
func (m Managed) SetReleased(sem vk.Semaphore, v uint64) {
	if b := m.Vulkan(); b != nil {
		b.ReleasedSemaphore, b.ReleasedValue = sem, v
	}
}
