package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"unsafe"
)

// This file holds the plumbing between the two processes: the socket pair,
// the control messages, passing a bare fd (the timeline's) and finding a
// host address in /proc/self/maps. The GPU side is in main.go.

// childEnv marks the child process: the parent starts its own executable
// again with it set and the child's end of the socket pair as fd 3.
const childEnv = "VKFLOW_INTEROP_CHILD"

// msg is one control message. Every message is one datagram of the
// SOCK_SEQPACKET socket, as is every handle interop.SendHandle sends, so
// control messages and handles cannot run into each other.
type msg struct {
	Kind string // config, ready, handle, imported, done, bye

	Cfg      *config `json:",omitempty"`
	Timeline string  `json:",omitempty"` // ready: why the child cannot share a timeline ("" if it can)
	Shared   bool    `json:",omitempty"` // handle: a timeline fd follows the memory handle
	Step     int     `json:",omitempty"` // done: the step just completed

	// imported: where the child sees the memory and what the hand-off cost.
	Addr     uintptr `json:",omitempty"`
	Mapping  string  `json:",omitempty"`
	ImportNs int64   `json:",omitempty"`
	ReadNs   int64   `json:",omitempty"`
	MemcpyNs int64   `json:",omitempty"`
	Checksum uint32  `json:",omitempty"`

	Err string `json:",omitempty"` // the sender failed; it exits after this
}

// link is one end of the socket pair.
type link struct{ c *net.UnixConn }

// pair returns a connected SOCK_SEQPACKET socket pair: this process's end
// as a link and the other end as a file to hand to the child.
func pair() (*link, *os.File, error) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_SEQPACKET|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("socketpair: %w", err)
	}
	mine := os.NewFile(uintptr(fds[0]), "interop-parent")
	l, err := fileLink(mine)
	if err != nil {
		syscall.Close(fds[1])
		return nil, nil, err
	}
	return l, os.NewFile(uintptr(fds[1]), "interop-child"), nil
}

// fileLink turns a socket file into a link; the file is closed (the link
// holds a duplicate).
func fileLink(f *os.File) (*link, error) {
	defer f.Close()
	c, err := net.FileConn(f)
	if err != nil {
		return nil, fmt.Errorf("socket: %w", err)
	}
	u, ok := c.(*net.UnixConn)
	if !ok {
		c.Close()
		return nil, fmt.Errorf("socket: %T is not a Unix socket", c)
	}
	return &link{c: u}, nil
}

// childLink is the child's end: fd 3, which the parent passed in ExtraFiles.
func childLink() (*link, error) { return fileLink(os.NewFile(3, "interop-socket")) }

// startChild starts this executable again as the child, with end as its
// fd 3 and its output on ours.
func startChild(end *os.File) (*exec.Cmd, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), childEnv+"=1")
	cmd.ExtraFiles = []*os.File{end}
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	return cmd, cmd.Start()
}

func (l *link) send(m msg) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	_, err = l.c.Write(b)
	return err
}

// recv reads the next message, which must be of the given kind; a peer's
// error message comes back as an error.
func (l *link) recv(kind string) (msg, error) {
	buf := make([]byte, 64<<10)
	n, err := l.c.Read(buf)
	if err != nil {
		return msg{}, fmt.Errorf("waiting for %q: %w", kind, err)
	}
	var m msg
	if err := json.Unmarshal(buf[:n], &m); err != nil {
		return msg{}, fmt.Errorf("waiting for %q: %w", kind, err)
	}
	if m.Err != "" {
		return m, fmt.Errorf("the other process failed: %s", m.Err)
	}
	if m.Kind != kind {
		return m, fmt.Errorf("got %q, want %q", m.Kind, kind)
	}
	return m, nil
}

// sendFD sends one fd (SCM_RIGHTS) in a datagram of its own. The caller
// keeps its fd.
func (l *link) sendFD(fd int) error {
	_, _, err := l.c.WriteMsgUnix([]byte("fd"), syscall.UnixRights(fd), nil)
	return err
}

// recvFD receives an fd sent by sendFD; the caller owns it.
func (l *link) recvFD() (int, error) {
	oob := make([]byte, syscall.CmsgSpace(4))
	_, oobn, _, _, err := l.c.ReadMsgUnix(make([]byte, 16), oob)
	if err != nil {
		return -1, err
	}
	scms, err := syscall.ParseSocketControlMessage(oob[:oobn])
	if err != nil {
		return -1, err
	}
	for _, s := range scms {
		fds, err := syscall.ParseUnixRights(&s)
		if err != nil {
			return -1, err
		}
		if len(fds) == 1 {
			return fds[0], nil
		}
		for _, fd := range fds {
			syscall.Close(fd)
		}
	}
	return -1, errors.New("no fd in the message")
}

// mapping returns the /proc/self/maps line that holds p, shortened to what
// names the pages: device, inode and path. Two processes that print the same
// device, inode and path map the same file: here, the same memory.
func mapping[T any](s []T) (uintptr, string) {
	if len(s) == 0 {
		return 0, "empty"
	}
	addr := uintptr(unsafe.Pointer(&s[0]))
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return addr, err.Error()
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// start-end perms offset dev inode [path]
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		var lo, hi uintptr
		if _, err := fmt.Sscanf(fields[0], "%x-%x", &lo, &hi); err != nil || addr < lo || addr >= hi {
			continue
		}
		name := "anonymous"
		if len(fields) > 5 {
			name = strings.Join(fields[5:], " ")
		}
		return addr, fmt.Sprintf("dev %s inode %s %s", fields[3], fields[4], name)
	}
	return addr, "not in /proc/self/maps"
}
