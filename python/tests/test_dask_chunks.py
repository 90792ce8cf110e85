"""Dask arrays whose chunks are vkflow tensors (issue 23, real clients):
da.from_array(t, asarray=False) with the threaded scheduler keeps every
chunk on the device through element-wise ops, reductions (tree reductions
included), matmul, slicing and rechunking. Every task's array result is
checked to be a vkflow tensor, and host conversion (``__array__``,
``read``) is made to fail while the graph runs, so a chunk that went
through NumPy fails the test."""

import contextlib
import unittest

import numpy as np

import dask
import dask.array as da

import vkflow
from vkflow import Tensor

RTOL = {"float32": 1e-4}


@contextlib.contextmanager
def no_host_reads():
    """Tensor.__array__ and Tensor.read raise while the block runs."""
    saved = Tensor.__array__, Tensor.read

    def refuse(self, *a, **k):
        raise AssertionError("a chunk was read on the host")
    Tensor.__array__, Tensor.read = refuse, refuse
    try:
        yield
    finally:
        Tensor.__array__, Tensor.read = saved


def run_every_task(arr):
    """Computes every key of arr's graph with the threaded scheduler and
    returns {key: value}."""
    graph = dict(arr.__dask_graph__())
    keys = list(graph)
    values = dask.threaded.get(graph, keys)
    return dict(zip(keys, values))


class TestDaskChunks(unittest.TestCase):
    def setUp(self):
        rng = np.random.default_rng(7)
        self.a = rng.standard_normal((96, 80)).astype(np.float32)
        self.b = rng.standard_normal((80, 40)).astype(np.float32)
        self.x = da.from_array(vkflow.asarray(self.a), chunks=(32, 16), asarray=False)
        self.y = da.from_array(vkflow.asarray(self.b), chunks=(16, 20), asarray=False)

    def cases(self):
        a, b, x, y = self.a, self.b, self.x, self.y
        return [
            ("elementwise", x * 2.0 + da.exp(x / 4.0) - x ** 2, a * 2 + np.exp(a / 4) - a ** 2),
            ("sum axis 0", x.sum(axis=0), a.sum(axis=0)),
            ("sum", x.sum(), a.sum()),
            ("mean axis 1", x.mean(axis=1), a.mean(axis=1)),
            ("max", x.max(axis=0), a.max(axis=0)),
            ("tree sum", x.sum(axis=0, split_every=2), a.sum(axis=0)),
            ("matmul", x @ y, a @ b),
            ("slicing", x[5:70:3, 7], a[5:70:3, 7]),
            ("rechunk", (x + 1).rechunk((48, 40)), a + 1),
            ("transpose", x.T * 3.0, a.T * 3),
        ]

    def test_chunks_stay_on_device(self):
        with dask.config.set(scheduler="threads"):
            for name, arr, want in self.cases():
                with self.subTest(name):
                    with no_host_reads():
                        values = run_every_task(arr)
                        got = arr.compute()
                    arrays = [v for v in values.values()
                              if isinstance(v, (np.ndarray, Tensor))]
                    self.assertTrue(arrays)
                    on_host = [type(v).__name__ for v in arrays if not isinstance(v, Tensor)]
                    self.assertEqual(on_host, [], "%s: chunks left the device" % name)
                    self.assertIsInstance(got, Tensor)
                    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-4, atol=1e-4)

    def test_meta_is_a_tensor(self):
        self.assertIsInstance(self.x._meta, Tensor)
        self.assertEqual(self.x.dtype, np.float32)

    def test_host_guard_can_fail(self):
        # The guard the test relies on: a graph that reads a chunk on the
        # host fails under it.
        z = self.x.map_blocks(lambda c: np.asarray(c) + 1, dtype=np.float32)
        with dask.config.set(scheduler="threads"), no_host_reads():
            with self.assertRaises(AssertionError):
                z.compute()


if __name__ == "__main__":
    unittest.main()
