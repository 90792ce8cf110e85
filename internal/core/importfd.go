package core

import (
	"strconv"
	"sync"
	"syscall"

	"github.com/vkflow/vkflow/vk"
)

// Concurrent imports of one allocation. Every fd vkGetMemoryFdKHR returns
// for an allocation is a dup of one fd, so all of them (and every copy sent
// to another process) share one open file description, and with it one
// file offset. lavapipe's import reads the memfd's header through that
// offset (lseek to 0, then read), so two imports at once, in one Manager,
// two Managers or two processes, can move each other's offset, and one
// reads past the header: VK_ERROR_INVALID_EXTERNAL_HANDLE (16 goroutines,
// 8,000 imports: 8 to 22 failed).
//
// ImportFD therefore hands the driver an open file description of the
// import's own: on lavapipe, whose fds are memfds (regular files, checked
// by checkMemoryFD), it reopens /proc/self/fd/N with N's access mode (the
// same memory, a fresh offset, no more rights than N had) and closes N.
// Unlike a lock, this also holds against imports in other processes and
// other libraries. Where the reopen fails (no /proc mounted), the driver's
// import runs under importMu instead, which orders this process's vkflow
// imports only. Other drivers' opaque fds are not files with a header
// (dma-bufs, driver objects), and reopening them through /proc would not
// even name the same memory: they go to the driver as they are.

// importMu serializes the driver's import calls of fds that could not get
// an open file description of their own.
var importMu sync.Mutex

// ownOffset returns the fd to hand the driver in place of fd, which
// ImportFD owns, and whether the import must run under importMu: on
// lavapipe a private reopen of fd (and fd is closed), or fd itself and
// true where the reopen failed; on other drivers fd itself.
func (d *Device) ownOffset(fd int) (int, bool) {
	if !d.lavapipe() {
		return fd, false
	}
	own, err := privateFD(fd)
	if err != nil {
		return fd, true
	}
	syscall.Close(fd)
	return own, false
}

// privateFD returns a new fd, close-on-exec, over the same file as fd with
// the same access mode and an open file description (and file offset) of
// its own. fd stays open.
func privateFD(fd int) (int, error) {
	r, _, e := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_GETFL, 0)
	if e != 0 {
		return -1, e
	}
	return syscall.Open("/proc/self/fd/"+strconv.Itoa(fd), int(r)&syscall.O_ACCMODE|syscall.O_CLOEXEC, 0)
}

// importMemoryFD is the driver's import (vk.Device.ImportMemoryFD), under
// importMu when serialize.
func (d *Device) importMemoryFD(fd int, serialize bool, size uint64, typeIndex uint32, dedicated vk.Buffer) (vk.DeviceMemory, error) {
	if serialize {
		importMu.Lock()
		defer importMu.Unlock()
	}
	return d.VK.ImportMemoryFD(fd, size, typeIndex, dedicated)
}
