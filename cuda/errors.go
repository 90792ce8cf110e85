package cuda

import (
	"strconv"

	"github.com/vkflow/vkflow/internal/core"
)

// CUresult values the package itself acts on.
const (
	resultSuccess              = 0
	resultInvalidValue         = 1
	resultStubLibrary          = 34
	resultNoDevice             = 100
	resultInvalidContext       = 201
	resultInvalidHandle        = 400
	resultNotSupported         = 801
	resultSystemDriverMismatch = 803
	resultCompatNotSupported   = 804
)

// resultNames names the common CUresult values (cuda.h, CUDA 12 and 13).
var resultNames = map[int]string{
	0:   "CUDA_SUCCESS",
	1:   "CUDA_ERROR_INVALID_VALUE",
	2:   "CUDA_ERROR_OUT_OF_MEMORY",
	3:   "CUDA_ERROR_NOT_INITIALIZED",
	4:   "CUDA_ERROR_DEINITIALIZED",
	34:  "CUDA_ERROR_STUB_LIBRARY",
	46:  "CUDA_ERROR_DEVICE_UNAVAILABLE",
	100: "CUDA_ERROR_NO_DEVICE",
	101: "CUDA_ERROR_INVALID_DEVICE",
	201: "CUDA_ERROR_INVALID_CONTEXT",
	205: "CUDA_ERROR_MAP_FAILED",
	216: "CUDA_ERROR_CONTEXT_ALREADY_IN_USE",
	304: "CUDA_ERROR_OPERATING_SYSTEM",
	400: "CUDA_ERROR_INVALID_HANDLE",
	401: "CUDA_ERROR_ILLEGAL_STATE",
	500: "CUDA_ERROR_NOT_FOUND",
	600: "CUDA_ERROR_NOT_READY",
	700: "CUDA_ERROR_ILLEGAL_ADDRESS",
	708: "CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE",
	709: "CUDA_ERROR_CONTEXT_IS_DESTROYED",
	719: "CUDA_ERROR_LAUNCH_FAILED",
	800: "CUDA_ERROR_NOT_PERMITTED",
	801: "CUDA_ERROR_NOT_SUPPORTED",
	802: "CUDA_ERROR_SYSTEM_NOT_READY",
	803: "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
	804: "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE",
	909: "CUDA_ERROR_TIMEOUT",
	911: "CUDA_ERROR_EXTERNAL_DEVICE",
	999: "CUDA_ERROR_UNKNOWN",
}

// unsupportedResults are the results that mean "no usable CUDA here":
// errors carrying them match ErrUnsupported.
var unsupportedResults = [...]int{resultNoDevice, resultNotSupported, resultStubLibrary,
	resultSystemDriverMismatch, resultCompatNotSupported}

// ResultName returns the name of a CUresult, such as
// "CUDA_ERROR_INVALID_VALUE", from this package's table, or "CUresult(N)"
// for a value it does not list.
func ResultName(r int) string {
	if n, ok := resultNames[r]; ok {
		return n
	}
	return "CUresult(" + strconv.Itoa(r) + ")"
}

// Error is a failed CUDA driver call: the call's name (the API name of
// cuda.h, such as "cuMemFree", whichever versioned symbol implements it) and
// its CUresult. It prints as "cuImportExternalMemory: CUDA_ERROR_INVALID_VALUE".
//
// errors.Is(err, vkflow.ErrUnsupported) holds for CUDA_ERROR_NO_DEVICE,
// CUDA_ERROR_NOT_SUPPORTED, CUDA_ERROR_STUB_LIBRARY,
// CUDA_ERROR_SYSTEM_DRIVER_MISMATCH and
// CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE.
type Error struct {
	Call   string
	Result int

	name string // from cuGetErrorName, when the driver named Result
}

func (e *Error) Error() string {
	name := e.name
	if name == "" {
		name = ResultName(e.Result)
	}
	return e.Call + ": " + name
}

// Is reports whether e matches ErrUnsupported (see Error).
func (e *Error) Is(target error) bool {
	if target != core.ErrUnsupported {
		return false
	}
	for _, r := range unsupportedResults {
		if e.Result == r {
			return true
		}
	}
	return false
}

// check turns a CUresult into nil or an *Error naming call. The name comes
// from the driver (cuGetErrorName) when it knows the value, else from the
// package's table.
func check(api driverAPI, call string, r int) error {
	if r == resultSuccess {
		return nil
	}
	e := &Error{Call: call, Result: r}
	if _, listed := resultNames[r]; !listed && api != nil {
		if n, ok := api.ErrorName(r); ok {
			e.name = n
		}
	}
	return e
}
