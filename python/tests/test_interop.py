"""Interop tests: tensor memory exported as an opaque fd and imported by
another Manager, in this process and in a child process (the handle sent
over a Unix socket with send_handle/recv_handle), and shared timelines,
which lavapipe cannot export (VK_KHR_external_semaphore_fd is missing).

Every Manager has the validation layer on; a test fails on any validation
message. fd ownership is checked by counting /proc/self/fd.
"""

import gc
import multiprocessing
import os
import socket
import traceback
import unittest

import numpy as np

import vkflow

N = 1024


def open_fds():
    return len(os.listdir("/proc/self/fd"))


def child_import(sock, n):
    """The child process: receives a handle, imports it, writes a pattern,
    and reports "ok <validation messages>" or the error on the socket."""
    try:
        before = vkflow.validation_messages()[0]
        with vkflow.Manager(validation=True) as mgr:
            h = vkflow.recv_handle(sock)
            t = mgr.import_memory(h, "float32", (n,))
            t.write(np.arange(n, dtype=np.float32) * 3 + 1)
            t.close()
        count, text = vkflow.validation_messages()
        sock.sendall(("ok %d %s" % (count - before, text)).encode())
    except BaseException:
        sock.sendall(("error " + traceback.format_exc()).encode())
    finally:
        sock.close()


def _close_if_open(fd):
    try:
        os.close(fd)
    except OSError:
        pass


class InteropTest(unittest.TestCase):
    def setUp(self):
        gc.collect()
        self.messages = vkflow.validation_messages()[0]
        self.a = vkflow.Manager(validation=True)
        self.b = vkflow.Manager(validation=True)

    def tearDown(self):
        self.b.close()
        self.a.close()
        gc.collect()
        count, text = vkflow.validation_messages()
        self.assertEqual(count, self.messages,
                         "%d validation message(s), the last: %s" % (count - self.messages, text))

    def exported(self, n=N):
        x = self.a.tensor((n,), dtype="float32", memory="exportable")
        return x, x.export_memory()

    def test_handle_fields(self):
        x, h = self.exported()
        try:
            self.assertIsInstance(h, vkflow.MemoryHandle)
            self.assertGreaterEqual(h.fd, 0)
            self.assertEqual(h.bytes, N * 4)
            self.assertGreaterEqual(h.size, h.offset + h.bytes)
            self.assertTrue(h.dedicated)
            self.assertEqual(len(h.device_uuid), 16)
            self.assertEqual(len(h.driver_uuid), 16)
            self.assertEqual(x.memory, "device")
        finally:
            os.close(h.fd)

    def test_not_exportable(self):
        x = self.a.tensor((N,), dtype="float32")
        with self.assertRaises(ValueError):
            x.export_memory()

    def test_two_managers(self):
        x, h = self.exported()
        data = np.linspace(-1, 1, N, dtype=np.float32)
        x.write(data)
        y = self.b.import_memory(h, "float32", (N,))
        self.assertEqual(y.shape, (N,))
        np.testing.assert_array_equal(y.read(), data)
        # The other way round, and with another dtype and shape of the same bytes.
        y.write(data * 2)
        np.testing.assert_array_equal(x.read(), data * 2)
        # Closing the exporter (tensor and Manager) leaves the importer's tensor valid.
        x.close()
        self.a.close()
        np.testing.assert_array_equal(y.read(), data * 2)

    def test_reshaped_import(self):
        x, h = self.exported()
        x.write(np.arange(N, dtype=np.float32))
        y = self.b.import_memory(h, np.int32, (N // 4, 4))
        np.testing.assert_array_equal(y.read().reshape(-1),
                                      np.arange(N, dtype=np.float32).view(np.int32))

    def test_uuid_mismatch(self):
        x, h = self.exported()
        other = bytes([h.device_uuid[0] ^ 0xFF]) + h.device_uuid[1:]
        before = open_fds()
        with self.assertRaises(ValueError) as cm:
            self.b.import_memory(h._replace(device_uuid=other), "float32", (N,))
        self.assertIn(other.hex(), str(cm.exception).replace("-", "").lower())
        self.assertEqual(open_fds(), before - 1, "a failed import must consume the fd")

    def test_too_small(self):
        x, h = self.exported()
        before = open_fds()
        with self.assertRaises(ValueError):
            self.b.import_memory(h, "float32", (N + 1,))
        self.assertEqual(open_fds(), before - 1, "a failed import must consume the fd")

    def test_fd_ownership(self):
        x = self.a.tensor((N,), dtype="float32", memory="exportable")
        before = open_fds()
        h = x.export_memory()
        self.assertEqual(open_fds(), before + 1, "export gives the caller one new fd")
        y = self.b.import_memory(h, "float32", (N,))
        self.assertEqual(open_fds(), before, "import consumes the fd")
        y.close()
        # A closed Manager still consumes the fd. Counted from after the
        # close: closing a Manager closes the driver's own fds (the NVIDIA
        # driver holds several per device; lavapipe none).
        h = x.export_memory()
        self.b.close()
        closed = open_fds()
        with self.assertRaises(vkflow.ClosedError):
            self.b.import_memory(h, "float32", (N,))
        self.assertEqual(open_fds(), closed - 1, "the closed Manager consumed the fd")

    def test_fd_out_of_range(self):
        # An fd is a C int: a value beyond int32 (or negative, or not an
        # int) is ValueError/TypeError before anything is called, and the fd
        # its low 32 bits name is neither closed nor imported. Two victims:
        # an unrelated eventfd and a real exported memfd.
        x, h = self.exported()
        os.close(h.fd)
        victims = [("eventfd", lambda: os.eventfd(0, os.EFD_CLOEXEC)),
                   ("exported memfd", lambda: x.export_memory().fd)]
        s1, s2 = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            for name, make in victims:
                for bad in (lambda v: 2**32 + v, lambda v: -2**32 + v, lambda v: 2**40 | v,
                            lambda v: 2**63 - 1, lambda v: -2**63 + v, lambda v: 2**31,
                            lambda v: -1, lambda v: True):
                    victim = make()
                    fd = bad(victim)
                    with self.subTest(victim=name, fd=fd):
                        try:
                            before = open_fds()
                            for mgr in (self.b, vkflow.Manager(validation=True)):
                                if mgr is not self.b:
                                    mgr.close()
                                with self.assertRaises((ValueError, TypeError)):
                                    mgr.import_memory(h._replace(fd=fd), "float32", (N,))
                                os.fstat(victim)  # still open
                                with self.assertRaises((ValueError, TypeError)):
                                    mgr.import_timeline(fd)
                                os.fstat(victim)
                            with self.assertRaises((ValueError, TypeError)):
                                vkflow.send_handle(s1, h._replace(fd=fd))
                            os.fstat(victim)
                            self.assertEqual(open_fds(), before)
                            self.assertEqual(self.b.mem_stats()[0], 0, "nothing was imported")
                        finally:
                            _close_if_open(victim)
        finally:
            s1.close()
            s2.close()

    def test_cross_process(self):
        x, h = self.exported()
        x.write(np.zeros(N, dtype=np.float32))
        parent, child = socket.socketpair()
        ctx = multiprocessing.get_context("spawn")
        p = ctx.Process(target=child_import, args=(child, N))
        p.start()
        child.close()
        try:
            vkflow.send_handle(parent, h)
            os.close(h.fd)  # the child has its own fd now
            parent.settimeout(120)
            reply = b""
            while True:
                chunk = parent.recv(65536)
                if not chunk:
                    break
                reply += chunk
        finally:
            parent.close()
            p.join(120)
        reply = reply.decode()
        self.assertTrue(reply.startswith("ok 0 "), "child: " + reply)
        self.assertEqual(p.exitcode, 0)
        np.testing.assert_array_equal(x.read(), np.arange(N, dtype=np.float32) * 3 + 1)

    def test_handle_wire(self):
        x, h = self.exported()
        s1, s2 = socket.socketpair()
        s2.settimeout(60)
        try:
            vkflow.send_handle(s1, h)
            os.close(h.fd)
            g = vkflow.recv_handle(s2)
            self.assertEqual(g._replace(fd=h.fd), h)
            y = self.b.import_memory(g, "float32", (N,))
            x.write(np.ones(N, dtype=np.float32))
            np.testing.assert_array_equal(y.read(), np.ones(N, dtype=np.float32))
            # Not a handle: ValueError, and the stray fd is closed.
            r, w = os.pipe()
            before = open_fds()
            socket.send_fds(s1, [b"not a handle".ljust(72, b"\0")], [r])
            with self.assertRaises(ValueError):
                vkflow.recv_handle(s2)
            self.assertEqual(open_fds(), before)
            os.close(r)
            os.close(w)
        finally:
            s1.close()
            s2.close()

    def test_timeline_export(self):
        try:
            tl = self.a.timeline(3, exportable=True)
        except vkflow.UnsupportedError as e:
            self.assertIn("VK_KHR_external_semaphore_fd", str(e))
            # Import is refused the same way, and still consumes the fd.
            r, w = os.pipe()
            before = open_fds()
            with self.assertRaises(vkflow.UnsupportedError) as cm:
                self.b.import_timeline(r)
            self.assertIn("VK_KHR_external_semaphore_fd", str(cm.exception))
            self.assertEqual(open_fds(), before - 1)
            os.close(w)
            return
        fd = tl.export_fd()
        other = self.b.import_timeline(fd)
        self.assertEqual(other.value, 3)
        tl.signal(5)
        other.wait(5, timeout=10)

    def test_timeline_not_exportable(self):
        tl = self.a.timeline(0)
        with self.assertRaises((ValueError, vkflow.UnsupportedError)):
            tl.export_fd()


if __name__ == "__main__":
    unittest.main()
