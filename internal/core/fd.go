package core

import "math"

// An fd is a C int: the kernel and Vulkan take 32 bits of it, so a Go int
// beyond int32 would be truncated to whatever fd its low 32 bits name, and
// an import would close (or import) an fd the caller never handed over.
// Every entry point that takes an fd checks it with CheckFD first, before
// any system call, and leaves a refused value alone.

// ValidFD reports whether fd can name a file descriptor: 0 to MaxInt32.
func ValidFD(fd int) bool { return fd >= 0 && fd <= math.MaxInt32 }

// CheckFD returns nil for an fd in 0..MaxInt32, else ErrInvalid naming op
// and the value. Nothing is closed: a value that is not an fd was never
// the caller's to hand over.
func CheckFD(op string, fd int) error {
	if ValidFD(fd) {
		return nil
	}
	return Invalid("%s: %d is not a file descriptor (an fd is 0 to %d)", op, fd, math.MaxInt32)
}
