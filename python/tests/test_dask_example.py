"""examples/dask/kmeans.py (issue 24): run small on a 2-worker LocalCluster
(127.0.0.1), its centroids checked against a plain NumPy k-means written
here on the same generated data; and the vkflow package module pickles by
reference, so that a function of a script's __main__ that uses ``vkflow``
can be sent to Dask workers (cloudpickle pickles such functions by value,
their globals included)."""

import os
import pickle
import re
import runpy
import subprocess
import sys
import tempfile
import unittest

import numpy as np

import vkflow
import vkflow.array_api as xa

EXAMPLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples",
                       "dask", "kmeans.py")


class TestPackagePickles(unittest.TestCase):
    def test_module_by_reference(self):
        self.assertIs(pickle.loads(pickle.dumps(vkflow)), vkflow)

    def test_main_function_using_vkflow(self):
        try:
            import cloudpickle
        except ImportError:
            self.skipTest("no cloudpickle")
        # Pickled by value, as cloudpickle does for functions of __main__.
        glob = {"vkflow": vkflow, "__name__": "__main__"}
        exec("def f():\n    return vkflow.__name__\n", glob)
        f = pickle.loads(cloudpickle.dumps(glob["f"]))
        self.assertEqual(f(), "vkflow")


def numpy_kmeans(x, c, iters):
    """Plain Lloyd iterations on the whole data set (float64 arithmetic)."""
    x = x.astype(np.float64)
    c = c.astype(np.float64)
    for _ in range(iters):
        lab = np.argmin(((x[:, None, :] - c[None, :, :]) ** 2).sum(axis=2), axis=1)
        for j in range(c.shape[0]):
            if np.any(lab == j):
                c[j] = x[lab == j].mean(axis=0)
    return c


class TestKMeansExample(unittest.TestCase):
    SIZE, DIM, CHUNK, K, ITERS, SEED = 60000, 8, 10000, 5, 3, 3

    @classmethod
    def setUpClass(cls):
        cls.km = runpy.run_path(EXAMPLE, run_name="kmeans_example")

    def generated(self):
        km = self.km
        centers = km["true_centers"](self.SEED, self.K, self.DIM)
        return np.concatenate([km["make_block"](np, r, min(self.CHUNK, self.SIZE - r), self.DIM,
                                                centers, self.SEED)
                               for r in range(0, self.SIZE, self.CHUNK)])

    def test_generated_on_device_as_in_numpy(self):
        km = self.km
        centers = km["true_centers"](self.SEED, self.K, self.DIM)
        dev = vkflow.default_device()
        got = km["make_block"](xa, 12345, 777, self.DIM, centers, self.SEED, device=dev)
        self.assertIsInstance(got, vkflow.Tensor)
        want = km["make_block"](np, 12345, 777, self.DIM, centers, self.SEED)
        np.testing.assert_array_equal(np.asarray(got), want)
        part = km["lloyd_partial"](got, km["initial_centroids"](self.SEED, self.K, self.DIM))
        self.assertIsInstance(part, vkflow.Tensor)
        self.assertEqual(part.shape, (1, self.K, self.DIM + 1))
        self.assertEqual(float(np.asarray(part)[0, :, -1].sum()), 777.0)

    def test_cluster_run_against_numpy(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "c.npy")
            proc = subprocess.run(
                [sys.executable, EXAMPLE, "--size", str(self.SIZE), "--dim", str(self.DIM),
                 "--chunk", str(self.CHUNK), "--k", str(self.K), "--iters", str(self.ITERS),
                 "--seed", str(self.SEED), "--workers", "2", "--no-progress", "--save", out],
                capture_output=True, text=True, timeout=300)
            self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr[-4000:])
            got = np.load(out)
        line = proc.stdout.strip().splitlines()[-1]
        self.assertRegex(line, r"^kmeans: 60000 x 8 float32 .* 6 vkflow chunks\) on 2 workers, "
                               r"k=5: generate .* 3 iterations .* M points/s.*\(ok\)$")
        err = float(re.search(r"max \|c - NumPy\| (\S+)", line).group(1))
        self.assertLess(err, 1e-4)
        km = self.km
        want = numpy_kmeans(self.generated(), km["initial_centroids"](self.SEED, self.K, self.DIM),
                            self.ITERS)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


if __name__ == "__main__":
    unittest.main()
