package cuda

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow/internal/core"
)

// This machine (and CI) has no libcuda.so.1: Open must say so, as
// ErrUnsupported, without panicking. Where a driver and a device exist,
// Open succeeds and the real-driver tests cover it instead.
func TestOpenWithoutLibcuda(t *testing.T) {
	drv, err := Open()
	if err == nil {
		require.NotNil(t, drv)
		t.Skip("libcuda.so.1 is present and has a device: see TestRealDriver*")
	}
	require.ErrorIs(t, err, core.ErrUnsupported)
	assert.Contains(t, err.Error(), "libcuda.so.1")
	// A second Open gives the same answer (the library is loaded once).
	_, err2 := Open()
	assert.Equal(t, err.Error(), err2.Error())
}

func TestOpenInit(t *testing.T) {
	for _, tc := range []struct {
		name        string
		result      int
		unsupported bool
		text        string
	}{
		{"ok", 0, false, ""},
		{"no device", 100, true, "cuda: cuInit: CUDA_ERROR_NO_DEVICE"},
		{"stub library", 34, true, "cuda: cuInit: CUDA_ERROR_STUB_LIBRARY"},
		{"not initialized", 3, false, "cuda: cuInit: CUDA_ERROR_NOT_INITIALIZED"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake()
			if tc.result != 0 {
				f.failNext("cuInit", tc.result)
			}
			drv, err := open(f)
			if tc.result == 0 {
				require.NoError(t, err)
				require.NotNil(t, drv)
				return
			}
			require.Nil(t, drv)
			require.EqualError(t, err, tc.text)
			assert.Equal(t, tc.unsupported, errors.Is(err, core.ErrUnsupported))
			var e *Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, "cuInit", e.Call)
			assert.Equal(t, tc.result, e.Result)
		})
	}
}

func TestDevices(t *testing.T) {
	f := newFake(fakeDevice{"GPU A", uuidOf(1)}, fakeDevice{"GPU B", uuidOf(2)})
	drv, err := open(f)
	require.NoError(t, err)
	devs, err := drv.Devices()
	require.NoError(t, err)
	require.Len(t, devs, 2)
	for i, want := range []struct {
		name string
		uuid [16]byte
	}{{"GPU A", uuidOf(1)}, {"GPU B", uuidOf(2)}} {
		assert.Equal(t, i, devs[i].Ordinal)
		assert.Equal(t, want.name, devs[i].Name)
		assert.Equal(t, want.uuid, devs[i].UUID)
		assert.Equal(t, i+100, devs[i].handle, "the CUdevice from cuDeviceGet, not the ordinal")
	}
	assert.Equal(t, "1 GPU B (GPU-02030405-0607-0809-0a0b-0c0d0e0f1011)", devs[1].String())

	none, err := mustOpen(t, newFake()).Devices()
	require.NoError(t, err)
	assert.Empty(t, none)
}

func mustOpen(t *testing.T, f *fake) *Driver {
	t.Helper()
	drv, err := open(f)
	require.NoError(t, err)
	return drv
}

func TestDevicesErrors(t *testing.T) {
	for _, call := range []string{"cuDeviceGetCount", "cuDeviceGet", "cuDeviceGetName", "cuDeviceGetUuid"} {
		t.Run(call, func(t *testing.T) {
			f := newFake(fakeDevice{"GPU", uuidOf(1)})
			drv := mustOpen(t, f)
			f.failNext(call, 3)
			devs, err := drv.Devices()
			require.Nil(t, devs)
			require.ErrorContains(t, err, call+": CUDA_ERROR_NOT_INITIALIZED")
			var e *Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, call, e.Call)
		})
	}
}

func TestUUIDMatch(t *testing.T) {
	a := Device{Ordinal: 0, Name: "A", UUID: uuidOf(0x10)}
	b := Device{Ordinal: 1, Name: "B", UUID: uuidOf(0x20)}
	bTwin := Device{Ordinal: 2, Name: "B MIG", UUID: uuidOf(0x20)}
	for _, tc := range []struct {
		name    string
		vulkan  [16]byte
		devices []Device
		want    int
		is      error
		text    []string
	}{
		{"first", uuidOf(0x10), []Device{a, b}, 0, nil, nil},
		{"second", uuidOf(0x20), []Device{a, b}, 1, nil, nil},
		{"no match lists both sides", uuidOf(0x30), []Device{a, b}, -1, core.ErrUnsupported, []string{
			"no CUDA device has the Vulkan device's UUID " + FormatUUID(uuidOf(0x30)),
			"0 A (" + FormatUUID(uuidOf(0x10)) + ")", "1 B (" + FormatUUID(uuidOf(0x20)) + ")",
		}},
		{"no devices", uuidOf(0x30), nil, -1, core.ErrUnsupported, []string{"CUDA devices: none"}},
		{"duplicate UUIDs", uuidOf(0x20), []Device{a, b, bTwin}, -1, core.ErrUnsupported, []string{
			"matches CUDA devices 1 and 2", "cannot choose",
		}},
		{"zero Vulkan UUID", [16]byte{}, []Device{a, {Ordinal: 1}}, -1, core.ErrInvalid, []string{"all zero"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			i, err := UUIDMatch(tc.vulkan, tc.devices)
			assert.Equal(t, tc.want, i)
			if tc.is == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tc.is)
			for _, s := range tc.text {
				assert.Contains(t, err.Error(), s)
			}
		})
	}
}

func TestFormatUUID(t *testing.T) {
	u := [16]byte{0xde, 0xad, 0xbe, 0xef, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0xa, 0xb}
	assert.Equal(t, "GPU-deadbeef-0001-0203-0405-060708090a0b", FormatUUID(u))
}

func TestDeviceByUUID(t *testing.T) {
	f := newFake(fakeDevice{"GPU A", uuidOf(1)}, fakeDevice{"GPU B", uuidOf(2)})
	drv := mustOpen(t, f)

	ctx, err := drv.DeviceByUUID(uuidOf(2))
	require.NoError(t, err)
	assert.Equal(t, "GPU B", ctx.Device().Name)
	assert.Equal(t, map[int]int{101: 1}, f.retained, "the primary context of CUdevice 101 (ordinal 1)")
	require.NoError(t, ctx.Close())
	assert.Zero(t, f.live())

	_, err = drv.DeviceByUUID(uuidOf(9))
	require.ErrorIs(t, err, core.ErrUnsupported)
	assert.Contains(t, err.Error(), FormatUUID(uuidOf(9)))
	assert.Contains(t, err.Error(), FormatUUID(uuidOf(1)))
	assert.Contains(t, err.Error(), FormatUUID(uuidOf(2)))
	assert.Zero(t, f.live())

	f.failNext("cuDevicePrimaryCtxRetain", 46)
	_, err = drv.DeviceByUUID(uuidOf(1))
	require.ErrorContains(t, err, "cuDevicePrimaryCtxRetain: CUDA_ERROR_DEVICE_UNAVAILABLE")
	assert.Zero(t, f.live())

	f.failNext("cuDeviceGetUuid", 4)
	_, err = drv.DeviceByUUID(uuidOf(1))
	require.ErrorContains(t, err, "cuDeviceGetUuid: CUDA_ERROR_DEINITIALIZED")
	assert.Zero(t, f.live())
	assert.Empty(t, f.violations)
}

func TestErrorNames(t *testing.T) {
	for code, name := range map[int]string{
		0: "CUDA_SUCCESS", 1: "CUDA_ERROR_INVALID_VALUE", 2: "CUDA_ERROR_OUT_OF_MEMORY",
		3: "CUDA_ERROR_NOT_INITIALIZED", 4: "CUDA_ERROR_DEINITIALIZED", 100: "CUDA_ERROR_NO_DEVICE",
		101: "CUDA_ERROR_INVALID_DEVICE", 201: "CUDA_ERROR_INVALID_CONTEXT", 205: "CUDA_ERROR_MAP_FAILED",
		304: "CUDA_ERROR_OPERATING_SYSTEM", 400: "CUDA_ERROR_INVALID_HANDLE", 500: "CUDA_ERROR_NOT_FOUND",
		600: "CUDA_ERROR_NOT_READY", 700: "CUDA_ERROR_ILLEGAL_ADDRESS", 801: "CUDA_ERROR_NOT_SUPPORTED",
		999: "CUDA_ERROR_UNKNOWN", 12345: "CUresult(12345)",
	} {
		assert.Equal(t, name, ResultName(code))
	}

	f := newFake()
	f.names[222] = "CUDA_ERROR_UNSUPPORTED_PTX_VERSION"
	assert.EqualError(t, check(f, "cuX", 222), "cuX: CUDA_ERROR_UNSUPPORTED_PTX_VERSION", "named by cuGetErrorName")
	assert.EqualError(t, check(f, "cuX", 223), "cuX: CUresult(223)", "unknown to both")
	assert.EqualError(t, check(nil, "cuX", 1), "cuX: CUDA_ERROR_INVALID_VALUE")
	assert.NoError(t, check(f, "cuX", 0))
	assert.EqualError(t, &Error{Call: "cuMemFree", Result: 700}, "cuMemFree: CUDA_ERROR_ILLEGAL_ADDRESS")

	for _, tc := range []struct {
		result      int
		unsupported bool
	}{{100, true}, {801, true}, {34, true}, {803, true}, {804, true}, {1, false}, {2, false}, {999, false}} {
		err := error(&Error{Call: "cuX", Result: tc.result})
		assert.Equal(t, tc.unsupported, errors.Is(err, core.ErrUnsupported), "result %d", tc.result)
		assert.False(t, errors.Is(err, core.ErrInvalid))
	}
}
