package core

import (
	"errors"
	"fmt"

	"github.com/vkflow/vkflow/vk"
)

// Sentinel errors. The root package vkflow re-exports them.
var (
	// ErrClosed: the object, or the Manager that owns it, is closed.
	ErrClosed = errors.New("vkflow: use after Close")
	// ErrInvalid: an argument failed a check at the API boundary.
	ErrInvalid = errors.New("vkflow: invalid argument")
	// ErrUnsupported: the device lacks, or was opened without, a feature.
	ErrUnsupported = errors.New("vkflow: not supported by the device")
	// ErrPending: the object is still in use by submitted GPU work.
	ErrPending = errors.New("vkflow: GPU work still pending")
	// ErrDeviceLost: a call returned VK_ERROR_DEVICE_LOST. The loss is
	// sticky: every later call on the Manager fails with it; Close still
	// frees everything.
	ErrDeviceLost = vk.ErrDeviceLost
	// ErrBusy: a bounded queue is full (held submits: WithMaxHeldSubmits);
	// nothing was done, and the call may succeed once work drains.
	ErrBusy = errors.New("vkflow: limit reached")
)

// Invalid returns an error wrapping ErrInvalid with a formatted message.
func Invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

// Unsupported returns an error wrapping ErrUnsupported.
func Unsupported(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrUnsupported, fmt.Sprintf(format, args...))
}

// Closed returns an error wrapping ErrClosed that names the object.
func Closed(what string) error { return fmt.Errorf("%s: %w", what, ErrClosed) }
