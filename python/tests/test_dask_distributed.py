"""vkflow tensors as Dask chunks on dask.distributed (vkflow.dask, issue 24).

One LocalCluster (2 worker processes, 1 thread each, each opening its own
vkflow Manager with the validation layer) serves the whole class. Results are
checked against NumPy; chunks are checked to be vkflow tensors in the
workers' memory; a chunk moved between the workers goes through vkflow.dask's
serializers; a worker whose Manager was closed fails its tasks with
ClosedError and the graph then succeeds on the healthy worker; a killed
worker's chunks are recomputed. Every worker's validation-layer message
count is checked after each test. Every wait is bounded.
"""

import asyncio
import os
import time
import unittest

import numpy as np

import dask
import dask.array as da
import distributed
from distributed.protocol import dask_deserialize

import vkflow
import vkflow.dask
from vkflow import Tensor

T = 60  # seconds any one wait may take


def to_tensor(block):
    return vkflow.asarray(block)


def kinds(keys, dask_worker):
    keys = {str(k) for k in keys}
    return sorted({type(v).__name__ for k, v in dask_worker.data.items() if str(k) in keys})


def validation_count():
    return vkflow.validation_messages()


def op_stats():
    return vkflow.ops.cache_stats()


# The library calls that make the host wait for the GPU.
WAITS = ("synchronize", "tensor_wait", "tensor_read", "dlpack_export", "sequence_eval",
         "timeline_wait", "run_wait")


def count_host_waits(on):
    """on: wraps this worker's library calls that wait for the GPU with
    counters; off: unwraps them and returns {call: count}."""
    L = vkflow._lib.lib()
    if on:
        L.wait_counts, L.wait_originals = {}, {n: getattr(L, n) for n in WAITS}
        for name, original in L.wait_originals.items():
            def counting(*args, _original=original, _name=name):
                L.wait_counts[_name] = L.wait_counts.get(_name, 0) + 1
                return _original(*args)
            setattr(L, name, counting)
        return {}
    for name, original in L.wait_originals.items():
        setattr(L, name, original)
    return L.wait_counts


def close_default_manager():
    vkflow.default_device().close()
    return True


async def die():
    os._exit(1)


def step(c):
    return c * 1.0001 + 1


def make_chunk(dtype):
    a = (np.arange(24).reshape(4, 6) % 5 - 2).astype(dtype)
    if dtype == "complex64":
        a = a + 1j * a[::-1]
    return vkflow.asarray(a.astype(dtype))


def describe(t):
    """What a worker received: the type, whether it lives on this worker's
    default Manager, dtype name, shape and values."""
    return (type(t).__name__, t.device is vkflow.default_device(), str(t.dtype.name),
            tuple(t.shape), np.asarray(t).copy())


def count_deserializations():
    """Wraps this worker's Tensor deserializer with a counter."""
    original = dask_deserialize.dispatch(Tensor)
    calls = []

    def counting(header, frames):
        calls.append(header["dtype"])
        return original(header, frames)
    counting.calls = calls
    counting.original = original
    dask_deserialize.register(Tensor)(counting)
    return True


def deserialization_calls():
    fn = dask_deserialize.dispatch(Tensor)
    calls = list(getattr(fn, "calls", []))
    if hasattr(fn, "original"):
        dask_deserialize.register(Tensor)(fn.original)
    return calls


def device_env():
    return os.environ.get("VKFLOW_DEVICE"), os.environ.get("VKFLOW_VALIDATION"), \
        "vkflow.dask" in __import__("sys").modules


class TestDaskDistributed(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.saved_env = os.environ.get("VKFLOW_VALIDATION")
        os.environ["VKFLOW_VALIDATION"] = "1"  # inherited by the worker processes
        cls.cluster = distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
            dashboard_address=None, silence_logs=40, death_timeout=T)
        try:
            cls.client = distributed.Client(cls.cluster, timeout=T)
            cls.client.wait_for_workers(2, timeout=T)
            cls.client.register_worker_plugin(vkflow.dask.DevicePlugin(devices=[0]))
        except BaseException:
            cls.cluster.close(timeout=T)
            raise

    @classmethod
    def tearDownClass(cls):
        try:
            cls.client.close(timeout=T)
        finally:
            cls.cluster.close(timeout=T)
            if cls.saved_env is None:
                os.environ.pop("VKFLOW_VALIDATION", None)
            else:
                os.environ["VKFLOW_VALIDATION"] = cls.saved_env

    def tearDown(self):
        # Validation messages in a worker process fail the test too.
        counts = self.client.run(validation_count)
        bad = {w: c for w, c in counts.items() if c[0]}
        self.assertEqual(bad, {}, "validation messages in workers")
        self.assertEqual(vkflow.validation_messages()[0], 0, vkflow.validation_messages()[1])

    def workers(self):
        self.client.wait_for_workers(2, timeout=T)
        return sorted(self.client.scheduler_info()["workers"])

    def compute(self, x, **kw):
        return self.client.compute(x, **kw).result(timeout=T)

    def test_workers_take_device_and_validation(self):
        env = self.client.run(device_env)
        self.assertEqual(sorted(env.values()), [("0", "1", True)] * 2)

    def test_arrays_against_numpy(self):
        rng = np.random.default_rng(24)
        a = rng.standard_normal((64, 48)).astype(np.float32)
        b = rng.standard_normal((48, 40)).astype(np.float32)
        meta = vkflow.asarray(np.empty((0, 0), np.float32))
        x = da.from_array(a, chunks=(16, 24)).map_blocks(to_tensor, dtype=np.float32, meta=meta)
        y = da.from_array(b, chunks=(24, 20)).map_blocks(to_tensor, dtype=np.float32, meta=meta)
        cases = [
            ("elementwise", x * 2.0 + da.exp(x / 4.0) - x ** 2, a * 2 + np.exp(a / 4) - a ** 2),
            ("tree sum", x.sum(axis=0, split_every=2), a.sum(axis=0)),
            ("sum", x.sum(), a.sum()),
            ("mean", x.mean(axis=1), a.mean(axis=1)),
            ("max", x.max(axis=0), a.max(axis=0)),
            ("matmul", x @ y, a @ b),
            ("slicing", x[5:60:3, 7], a[5:60:3, 7]),
            ("rechunk", (x + 1).rechunk((32, 48)), a + 1),
            ("transpose", x.T * 3.0, a.T * 3),
        ]
        for name, arr, want in cases:
            with self.subTest(name):
                got = self.compute(arr)
                self.assertIsInstance(got, Tensor)
                np.testing.assert_allclose(np.asarray(got), want, rtol=1e-4, atol=1e-4)
        # The chunks held by the workers are vkflow tensors, spread over both.
        held = (x * 2.0).persist()
        distributed.wait(held, timeout=T)
        where = self.client.run(kinds, [f.key for f in held.__dask_graph__().values()])
        self.assertEqual(sorted(where.values()), [["Tensor"]] * 2)
        del held

    def test_chunk_moves_between_workers(self):
        a, b = self.workers()
        self.client.run(count_deserializations, workers=[b])
        for dtype in ("float32", "complex64", "int64", "bool"):
            with self.subTest(dtype):
                t = self.client.submit(make_chunk, dtype, workers=[a], pure=False)
                got = self.client.submit(describe, t, workers=[b], pure=False).result(timeout=T)
                want = np.asarray(make_chunk(dtype))
                self.assertEqual(got[:4], ("Tensor", True, dtype, (4, 6)))
                self.assertEqual(got[4].dtype, want.dtype)
                np.testing.assert_array_equal(got[4], want)
                # The tensor itself comes back to the client as a tensor too.
                back = t.result(timeout=T)
                self.assertIsInstance(back, Tensor)
                np.testing.assert_array_equal(np.asarray(back), want)
        calls = self.client.run(deserialization_calls, workers=[b])[b]
        self.assertEqual(calls, ["float32", "complex64", "int64", "bool"])

    def test_chain_queues_without_host_waits(self):
        w = self.workers()[0]
        a = np.linspace(-1, 1, 4096, dtype=np.float32).reshape(64, 64)
        x = da.from_array(a, chunks=(64, 64)).map_blocks(
            to_tensor, dtype=np.float32, meta=vkflow.asarray(np.empty((0, 0), np.float32)))
        x = self.client.persist(x, workers=[w])
        distributed.wait(x, timeout=T)
        before = self.client.run(op_stats, workers=[w])[w]
        want = a.copy()
        for _ in range(100):
            x = x.map_blocks(step, dtype=np.float32)
            want = want * np.float32(1.0001) + np.float32(1)
        self.client.run(count_host_waits, True, workers=[w])
        try:
            x = self.client.persist(x, workers=[w])
            distributed.wait(x, timeout=T)
        finally:
            waits = self.client.run(count_host_waits, False, workers=[w])[w]
        after = self.client.run(op_stats, workers=[w])[w]
        self.assertEqual(waits, {}, "the tasks waited for the GPU")
        self.assertGreaterEqual(after["submits"] - before["submits"], 200)
        self.assertEqual(after["host_waits"] - before["host_waits"], 0)
        got = self.compute(x)
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-4)

    def test_closed_manager_fails_then_retry_succeeds(self):
        sick, healthy = self.workers()
        a = np.arange(96, dtype=np.float32).reshape(12, 8)
        meta = vkflow.asarray(np.empty((0, 0), np.float32))
        src = da.from_array(a, chunks=(4, 8)).map_blocks(to_tensor, dtype=np.float32, meta=meta)
        held = self.client.persist(src, workers=[sick])
        distributed.wait(held, timeout=T)
        self.client.run(close_default_manager, workers=[sick])
        with self.assertRaises(vkflow.ClosedError):
            self.compute((held + 1).sum(), workers=[sick])
        # The cluster keeps running; the graph, resubmitted without the lost
        # chunks and on the healthy worker (retries allowed), succeeds.
        self.assertEqual(len(self.client.run(device_env)), 2)
        self.client.cancel(held)
        del held
        got = self.compute((src + 1).sum(), workers=[healthy], retries=1)
        self.assertAlmostEqual(float(np.asarray(got)), float((a + 1).sum()), places=1)
        # The sick worker opens a new Manager for new work.
        got = self.compute((src * 2).sum(), workers=[sick])
        self.assertAlmostEqual(float(np.asarray(got)), float((a * 2).sum()), places=1)

    def test_z_killed_worker_is_recomputed(self):
        # Named to run last: the killed worker comes back as a new process.
        a = np.arange(64 * 32, dtype=np.float32).reshape(64, 32) / 100
        meta = vkflow.asarray(np.empty((0, 0), np.float32))
        x = da.from_array(a, chunks=(16, 32)).map_blocks(to_tensor, dtype=np.float32, meta=meta)
        held = self.client.persist(x * 3.0)
        distributed.wait(held, timeout=T)
        owners = self.client.who_has(held)
        victim = sorted({w for ws in owners.values() for w in ws})[0]
        self.client.run(die, workers=[victim], wait=False)
        deadline = time.monotonic() + T
        while victim in self.client.scheduler_info()["workers"]:
            self.assertLess(time.monotonic(), deadline, "the worker did not die")
            time.sleep(0.05)
        got = self.compute((held + 1.0).sum(axis=0))
        np.testing.assert_allclose(np.asarray(got), (a * 3 + 1).sum(axis=0), rtol=1e-4)
        self.workers()  # the nanny brings the worker back


class TestDaskLocal(unittest.TestCase):
    """vkflow.dask's pieces in this process, without a cluster."""

    def test_mapped_frame_is_zero_copy(self):
        t = vkflow.asarray(np.arange(10, dtype=np.float32))
        self.assertTrue(t.mapped)
        header, frames = vkflow.dask.serialize_tensor(t)
        self.assertEqual(header, {"dtype": "float32", "shape": [10]})
        addr = np.frombuffer(frames[0], dtype=np.uint8).__array_interface__["data"][0]
        self.assertEqual(addr, np.asarray(t).__array_interface__["data"][0])
        back = vkflow.dask.deserialize_tensor(header, frames)
        np.testing.assert_array_equal(np.asarray(back), np.arange(10, dtype=np.float32))

    def test_view_sends_its_elements(self):
        base = vkflow.asarray(np.arange(12, dtype=np.int64).reshape(3, 4))
        header, frames = vkflow.dask.serialize_tensor(base.T[1:, ::2])
        back = vkflow.dask.deserialize_tensor(header, frames)
        np.testing.assert_array_equal(np.asarray(back),
                                      np.arange(12, dtype=np.int64).reshape(3, 4).T[1:, ::2])

    def test_bad_frame_is_refused(self):
        with self.assertRaises(ValueError):
            vkflow.dask.deserialize_tensor({"dtype": "float32", "shape": [3]}, [b"\0" * 8])

    def test_sizeof_and_devices(self):
        self.assertEqual(dask.sizeof.sizeof(vkflow.asarray(np.zeros(5, np.float64))), 40)
        self.assertEqual([vkflow.dask.device_for([0, "llvmpipe"], i) for i in range(4)],
                         ["0", "llvmpipe", "0", "llvmpipe"])
        with self.assertRaises(ValueError):
            vkflow.dask.device_for([], 0)

    def test_worker_position_on_host(self):
        class Scheduler:
            async def identity(self):
                return {"workers": {"tcp://127.0.0.1:9": {"host": "127.0.0.1"},
                                    "tcp://127.0.0.1:7": {"host": "127.0.0.1"},
                                    "tcp://127.0.0.2:1": {"host": "127.0.0.2"}}}

        class Worker:
            def __init__(self, name, address="tcp://127.0.0.1:9"):
                self.name, self.address, self.ip = name, address, "127.0.0.1"
                self.scheduler = Scheduler()
        got = [asyncio.run(vkflow.dask._worker_index(Worker(n)))
               for n in (0, 3, "gpu-box-2", "tcp://127.0.0.1:9")]
        self.assertEqual(got, [0, 3, 2, 1])

    def test_mixed_chunks_concatenate_on_device(self):
        x = da.concatenate([da.from_array(np.ones((2, 3), np.float32), chunks=(2, 3)),
                            da.from_array(vkflow.asarray(np.zeros((2, 3), np.float32)),
                                          chunks=(2, 3), asarray=False)])
        got = x.rechunk((4, 3)).compute(scheduler="sync")
        self.assertIsInstance(got, Tensor)
        np.testing.assert_array_equal(np.asarray(got), np.r_[np.ones((2, 3)), np.zeros((2, 3))])


if __name__ == "__main__":
    unittest.main()
