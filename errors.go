package vkflow

import (
	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/vk"
)

// Sentinel errors, for errors.Is.
var (
	ErrClosed      = core.ErrClosed      // use after Close
	ErrInvalid     = core.ErrInvalid     // bad argument at the API boundary
	ErrUnsupported = core.ErrUnsupported // the device lacks a feature
	ErrPending     = core.ErrPending     // the object is in use by pending GPU work
	ErrBusy        = core.ErrBusy        // a bound was reached (WithMaxHeldSubmits); nothing was done
	ErrNoDevice    = errNoDevice         // no usable Vulkan device
	ErrFailed      = core.ErrFailed      // work it depends on failed (a *FailedError; package timeline)

	ErrDeviceLost        = core.ErrDeviceLost // sticky: see Manager.Close
	ErrOutOfDeviceMemory = vk.ErrOutOfDeviceMemory
	ErrOutOfHostMemory   = vk.ErrOutOfHostMemory
	ErrTimeout           = vk.ErrTimeout
)

// StuckError is returned by Close when submitted work never completed.
type StuckError = core.StuckError

// FailedError reports work that cannot complete because a timeline point
// it depends on failed: its producer's submit failed, or the timeline was
// closed first. errors.Is matches ErrFailed and the root cause. See
// package timeline's documentation, Failures.
type FailedError = core.FailedError
