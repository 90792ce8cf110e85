"""Eager ops: vkflow.ops calls are queued on the device's default stream and
return at once; reads wait. Ordering across Python threads, overwrites of
inputs still being read, frees of tensors with pending readers, the
prepared-op cache's counters, and NumPy inputs that change after the call.
"""

import os
import threading
import unittest

os.environ.setdefault("VKFLOW_VALIDATION", "1")

import numpy as np  # noqa: E402

import vkflow  # noqa: E402
import vkflow.ops as vo  # noqa: E402
from test_dlpack import VkflowTest, aligned_bytes  # noqa: E402


def run_threads(test, threads, steps):
    """threads Python threads each make 2 * steps dependent eager calls on
    test.mgr, dropping each input right after the call that reads it (its
    buffer is destroyed on that thread once the queued call is done), then
    read their results once."""
    one = test.mgr.tensor(np.ones(16, dtype=np.int32))
    results, errors = {}, []

    def work(k):
        try:
            x = test.mgr.tensor(np.full(16, k, dtype=np.int32))
            for _ in range(steps):
                x = vo.add(x, one)
                x = vo.mul(x, one)
            results[k] = x
        except Exception as e:  # reported below
            errors.append(e)

    pool = [threading.Thread(target=work, args=(k,)) for k in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    test.assertEqual(errors, [])
    test.assertEqual(len(results), threads)
    for k, x in results.items():
        np.testing.assert_array_equal(x.read(), np.full(16, k + steps, np.int32))


class TestEager(VkflowTest):

    def test_steady_loop_hits_cache_without_host_waits(self):
        a = self.mgr.tensor(np.arange(1000, dtype=np.float32))
        b = self.mgr.tensor(np.ones(1000, dtype=np.float32))
        vo.add(a, b)  # prepares the op
        before = vo.cache_stats(self.mgr)
        for _ in range(200):
            c = vo.add(a, b)
        after = vo.cache_stats(self.mgr)
        self.assertEqual(after["hits"] - before["hits"], 200, "every call hits the cache")
        self.assertEqual(after["misses"], before["misses"])
        self.assertEqual(after["submits"] - before["submits"], 200)
        self.assertEqual(after["host_waits"], before["host_waits"], "no host wait per op")
        np.testing.assert_array_equal(c.read(), np.arange(1000, dtype=np.float32) + 1)

    def test_dependent_chain_reads_once(self):
        x = self.mgr.tensor(np.zeros(64, dtype=np.float32))
        one = self.mgr.tensor(np.ones(64, dtype=np.float32))
        acc = self.mgr.tensor(np.zeros(64, dtype=np.float32))
        n = 1000
        for _ in range(n):
            y = vo.add(x, one)
            del x  # freed only after the queued call that reads it
            x = y
            vo.add(acc, x, out=acc)  # overwrites acc, which the last call read
        np.testing.assert_array_equal(x.read(), np.full(64, n, np.float32))
        np.testing.assert_array_equal(acc.read(), np.full(64, n * (n + 1) / 2, np.float32))

    def test_threads(self):
        run_threads(self, threads=4, steps=500)

    def test_write_waits_for_queued_readers(self):
        n = 1 << 16
        a = self.mgr.tensor(np.ones(n, dtype=np.float32))
        outs = []
        for i in range(10):
            outs.append(vo.mul(a, a))
            a.write(np.full(n, i + 2, dtype=np.float32))  # waits for the queued mul
        for i, o in enumerate(outs):
            self.assertEqual(float(o.read()[-1]), float((i + 1) ** 2))

    def test_numpy_input_read_at_call(self):
        # Work queued ahead keeps the GPU busy past the call, so an op that
        # read the array later would see the new values.
        busy = self.mgr.tensor(np.ones(1 << 20, dtype=np.float32))
        for _ in range(10):
            vo.add(busy, busy, out=busy)
        arr = aligned_bytes(4096 * 4).view(np.float32)  # imported without a copy
        arr[:] = np.arange(4096, dtype=np.float32)
        t = self.mgr.tensor(np.zeros(4096, dtype=np.float32))
        y = vo.add(t, arr)
        arr[:] = -1  # after the call: the op saw the old values
        np.testing.assert_array_equal(y.read(), np.arange(4096, dtype=np.float32))

    def test_synchronize_and_errors(self):
        a = self.mgr.tensor(np.ones(8, dtype=np.float32))
        for _ in range(10):
            a = vo.add(a, a)
        vkflow.synchronize(self.mgr)
        np.testing.assert_array_equal(np.from_dlpack(a), np.full(8, 1024, np.float32))
        with self.assertRaises(ValueError) as cm:
            vo.add(a, self.mgr.tensor(np.ones(8, dtype=np.int32)))
        self.assertIn("add", str(cm.exception))
        with self.assertRaises(ValueError):
            vkflow.synchronize(self.mgr, timeout=-1)


    def test_fast_paths_match_the_general_call(self):
        """ops' one-call paths (two Tensors, or one, and a new output) give
        what the general call gives; other arguments take the general path."""
        a = self.mgr.tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
        b = self.mgr.tensor(np.full((2, 3), 2, np.float32))
        for name, want in (("add", a.read() + 2), ("mul", a.read() * 2),
                           ("maximum", np.maximum(a.read(), 2))):
            np.testing.assert_array_equal(getattr(vo, name)(a, b).read(), want)
            np.testing.assert_array_equal(vo.call(name, a, b).read(), want)
        np.testing.assert_array_equal(vo.negative(a).read(), -a.read())
        np.testing.assert_array_equal(vo.add(a, 1.5).read(), a.read() + 1.5)  # a scalar
        out = self.mgr.tensor(np.zeros((2, 3), np.float32))
        self.assertIs(vo.add(a, b, out=out), out)
        np.testing.assert_array_equal(out.read(), a.read() + 2)
        np.testing.assert_array_equal(vo.add(a[0], b[1]).read(), a.read()[0] + 2)  # views
        other = vkflow.Manager(validation=True)
        try:
            with self.assertRaises(ValueError):
                vo.add(a, other.tensor(np.ones((2, 3), np.float32)))
        finally:
            other.close()
        a.close()
        with self.assertRaises(vkflow.ClosedError):
            vo.add(a, b)

    def test_dropped_outputs_are_freed(self):
        """An op's output dropped without close() frees its library handle
        (Tensor.__del__), so a loop of dropped outputs holds nothing."""
        a = self.mgr.tensor(np.ones(1000, dtype=np.float32))
        handles = []
        for _ in range(50):
            t = vo.add(a, a)
            handles.append(t._handle)
            self.assertEqual(float(t.read()[0]), 2.0)
            del t
        for h in handles:
            with self.assertRaises(vkflow.ClosedError):
                vkflow.Tensor._wrap(self.mgr, h)  # the library closed it


class TestWaitSpin(unittest.TestCase):
    """VKFLOW_WAIT_SPIN: a host wait polls the timeline this long before it
    sleeps; Manager.wait_stats counts the waits that ended while polling
    and those that blocked."""

    def waits(self, spin):
        old = os.environ.get("VKFLOW_WAIT_SPIN")
        os.environ["VKFLOW_WAIT_SPIN"] = spin
        try:
            mgr = vkflow.Manager(validation=True)
        finally:
            if old is None:
                del os.environ["VKFLOW_WAIT_SPIN"]
            else:
                os.environ["VKFLOW_WAIT_SPIN"] = old
        try:
            a = mgr.tensor(np.ones(1000, dtype=np.float32))
            before = mgr.wait_stats()
            for _ in range(20):
                self.assertEqual(float(vo.add(a, a).read()[0]), 2.0)
            after = mgr.wait_stats()
            return {k: after[k] - before[k] for k in after}
        finally:
            mgr.close()

    def test_long_spin_polls(self):
        d = self.waits("1m")
        self.assertGreater(d["polled"], 0)
        self.assertEqual(d["blocked"], 0)

    def test_no_spin_blocks(self):
        d = self.waits("0")
        self.assertGreater(d["blocked"], 0)
        self.assertEqual(d["polled"], 0)

    def test_bad_value_refused(self):
        with self.assertRaises(ValueError):
            self.waits("soon")

    def test_closed(self):
        mgr = vkflow.Manager()
        mgr.close()
        with self.assertRaises(vkflow.ClosedError):
            mgr.wait_stats()


@unittest.skipUnless(os.environ.get("VKFLOW_SOAK"), "VKFLOW_SOAK=1 (make soak)")
class TestEagerSoak(VkflowTest):

    def test_threads_drop_inputs(self):
        """6 threads x 6,000 calls, each dropping its input right after the
        call that reads it: buffers are destroyed on one thread while another
        rewrites and binds descriptor sets that named them. Before pooled
        sets were pointed at the placeholder buffer, the validation layer
        invalidated a new command buffer in 5 of 8 runs."""
        run_threads(self, threads=6, steps=3000)


class TestEagerClose(unittest.TestCase):

    def test_manager_closed_with_ops_queued(self):
        mgr = vkflow.Manager(validation=True)
        x = mgr.tensor(np.ones(1 << 16, dtype=np.float32))
        for _ in range(20):
            vo.add(x, x, out=x)
        mgr.close()
        with self.assertRaises(vkflow.ClosedError):
            vo.add(x, x)
        with self.assertRaises(vkflow.ClosedError):
            vkflow.synchronize(mgr)


if __name__ == "__main__":
    unittest.main()
