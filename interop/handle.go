package interop

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"

	"github.com/vkflow/vkflow/internal/core"
)

// The wire form of a MemoryHandle, without its fd: a magic that names the
// format and its version, then the fields, little-endian.
const (
	handleMagic = "vkflowH1"
	handleLen   = len(handleMagic) + 8 + 8 + 8 + 4 + 4 + 16 + 16
)

const flagDedicated = 1

// MarshalBinary encodes every field of h but FD, which only SendHandle
// (SCM_RIGHTS) can carry to another process.
func (h MemoryHandle) MarshalBinary() ([]byte, error) {
	b := make([]byte, 0, handleLen)
	b = append(b, handleMagic...)
	b = binary.LittleEndian.AppendUint64(b, h.Size)
	b = binary.LittleEndian.AppendUint64(b, h.Offset)
	b = binary.LittleEndian.AppendUint64(b, h.Bytes)
	b = binary.LittleEndian.AppendUint32(b, h.MemoryType)
	var flags uint32
	if h.Dedicated {
		flags |= flagDedicated
	}
	b = binary.LittleEndian.AppendUint32(b, flags)
	b = append(b, h.DeviceUUID[:]...)
	b = append(b, h.DriverUUID[:]...)
	return b, nil
}

// UnmarshalBinary decodes what MarshalBinary encoded; FD becomes -1. A
// malformed encoding is ErrInvalid and leaves h unchanged.
func (h *MemoryHandle) UnmarshalBinary(b []byte) error {
	if len(b) != handleLen || string(b[:len(handleMagic)]) != handleMagic {
		return core.Invalid("interop: not a vkflow memory handle (%d bytes)", len(b))
	}
	b = b[len(handleMagic):]
	var g MemoryHandle
	g.FD = -1
	g.Size = binary.LittleEndian.Uint64(b)
	g.Offset = binary.LittleEndian.Uint64(b[8:])
	g.Bytes = binary.LittleEndian.Uint64(b[16:])
	g.MemoryType = binary.LittleEndian.Uint32(b[24:])
	flags := binary.LittleEndian.Uint32(b[28:])
	if flags&^flagDedicated != 0 {
		return core.Invalid("interop: memory handle with unknown flags %#x", flags)
	}
	g.Dedicated = flags&flagDedicated != 0
	copy(g.DeviceUUID[:], b[32:48])
	copy(g.DriverUUID[:], b[48:64])
	*h = g
	return nil
}

// SendHandle sends h's fields and its fd (SCM_RIGHTS) in one message over a
// Unix socket. An FD outside 0..MaxInt32 is ErrInvalid (SCM_RIGHTS carries
// 32 bits, so another fd would travel). It does not close h.FD: the sender still owns it (and
// usually closes it once sent); the receiver gets a new fd for the same
// memory.
func SendHandle(conn *net.UnixConn, h MemoryHandle) error {
	if conn == nil {
		return core.Invalid("SendHandle: nil connection")
	}
	if h.FD < 0 {
		return core.Invalid("SendHandle: the handle has no fd (%d)", h.FD)
	}
	if err := core.CheckFD("SendHandle", h.FD); err != nil {
		return err // SCM_RIGHTS carries 32 bits: another fd would travel
	}
	b, _ := h.MarshalBinary()
	n, oobn, err := conn.WriteMsgUnix(b, syscall.UnixRights(h.FD), nil)
	if err != nil {
		return fmt.Errorf("interop: SendHandle: %w", err)
	}
	if n != len(b) || oobn == 0 {
		return fmt.Errorf("interop: SendHandle: short write (%d of %d bytes, %d control bytes)", n, len(b), oobn)
	}
	return nil
}

// RecvHandle receives a handle that SendHandle sent. The returned handle's
// FD is new in this process and owned by the caller (hand it to Import, or
// close it). A message that is not a handle, or that carries no fd or more
// than one, is ErrInvalid; every fd received with it is closed. On a
// stream socket it reads until it has a whole handle: bound the wait with
// conn.SetReadDeadline.
func RecvHandle(conn *net.UnixConn) (MemoryHandle, error) {
	none := MemoryHandle{FD: -1}
	if conn == nil {
		return none, core.Invalid("RecvHandle: nil connection")
	}
	b := make([]byte, handleLen)
	oob := make([]byte, syscall.CmsgSpace(4*4)) // room to see (and close) stray fds
	n, oobn, flags, _, err := conn.ReadMsgUnix(b, oob)
	fds, perr := parseRights(oob[:oobn])
	fail := func(err error) (MemoryHandle, error) {
		for _, fd := range fds {
			syscall.Close(fd)
		}
		return none, err
	}
	if err != nil {
		return fail(fmt.Errorf("interop: RecvHandle: %w", err))
	}
	if perr != nil {
		return fail(fmt.Errorf("%w: interop: RecvHandle: control message: %w", core.ErrInvalid, perr))
	}
	// A stream socket may deliver the bytes in pieces; the fd comes with
	// the first. Datagram and seqpacket messages come whole.
	if n > 0 && n < handleLen && conn.LocalAddr().Network() == "unix" {
		m, err := io.ReadFull(conn, b[n:])
		n += m
		if err != nil {
			return fail(fmt.Errorf("interop: RecvHandle: %d of %d bytes: %w", n, handleLen, err))
		}
	}
	if n == 0 {
		return fail(fmt.Errorf("interop: RecvHandle: %w", io.EOF))
	}
	if flags&syscall.MSG_TRUNC != 0 {
		return fail(core.Invalid("RecvHandle: the message is longer than a handle"))
	}
	if flags&syscall.MSG_CTRUNC != 0 {
		return fail(core.Invalid("RecvHandle: control data truncated: more fds than a handle carries"))
	}
	if len(fds) != 1 {
		return fail(core.Invalid("RecvHandle: the message carries %d fds, not 1", len(fds)))
	}
	var h MemoryHandle
	if err := h.UnmarshalBinary(b[:n]); err != nil {
		return fail(fmt.Errorf("RecvHandle: %w", err))
	}
	h.FD = fds[0]
	return h, nil
}

// parseRights returns the fds in SCM_RIGHTS control messages.
func parseRights(oob []byte) ([]int, error) {
	if len(oob) == 0 {
		return nil, nil
	}
	msgs, err := syscall.ParseSocketControlMessage(oob)
	if err != nil {
		return nil, err
	}
	var fds []int
	var errs []error
	for _, m := range msgs {
		if m.Header.Level != syscall.SOL_SOCKET || m.Header.Type != syscall.SCM_RIGHTS {
			continue
		}
		got, err := syscall.ParseUnixRights(&m)
		fds = append(fds, got...)
		errs = append(errs, err)
	}
	return fds, errors.Join(errs...)
}
