"""Checks that the tests use the package pip installed, not the source tree.

`make test-python` sets VKFLOW_TEST_INSTALLED=1 after `pip install ./python`
into build/venv; then vkflow and its libvkflow.so must come from that venv's
site-packages, and the wheel's RECORD must list them with their hashes.
Without the variable (tests run in-tree) the checks are skipped.
"""

import base64
import hashlib
import importlib.util
import os
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import unittest
import zipfile

import vkflow

INSTALLED = os.environ.get("VKFLOW_TEST_INSTALLED") == "1"
PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def inside(path, folder):
    path, folder = os.path.realpath(path), os.path.realpath(folder)
    return os.path.commonpath([path, folder]) == folder


@unittest.skipUnless(INSTALLED, "VKFLOW_TEST_INSTALLED is not 1 (tests run in-tree)")
class TestInstalled(unittest.TestCase):

    def setUp(self):
        self.site = sysconfig.get_paths()["platlib"]
        self.pkg = os.path.dirname(os.path.abspath(vkflow.__file__))

    def test_in_a_venv(self):
        self.assertNotEqual(sys.prefix, sys.base_prefix, "not running in a venv")
        self.assertTrue(inside(self.site, sys.prefix), (self.site, sys.prefix))

    def test_package_from_site_packages(self):
        self.assertTrue(inside(vkflow.__file__, self.site),
                        "vkflow imported from %s, not from %s" % (vkflow.__file__, self.site))
        self.assertNotIn("VKFLOW_LIB", os.environ)
        self.assertEqual(os.path.realpath(vkflow.library_path()),
                         os.path.realpath(os.path.join(self.pkg, "libvkflow.so")))

    def test_record_matches_files(self):
        dist = os.path.join(self.site, "vkflow-0.1.0.dist-info")
        with open(os.path.join(dist, "WHEEL")) as f:
            wheel = f.read()
        self.assertIn("Root-Is-Purelib: false", wheel)
        with open(os.path.join(dist, "RECORD")) as f:
            rows = [line.rstrip("\n").rsplit(",", 2) for line in f if line.strip()]
        listed = {}
        for path, digest, size in rows:
            listed[path] = (digest, size)
        for name in ("vkflow/__init__.py", "vkflow/_lib.py", "vkflow/libvkflow.so"):
            self.assertIn(name, listed)
            digest, size = listed[name]
            with open(os.path.join(self.site, name), "rb") as f:
                data = f.read()
            want = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            self.assertEqual(digest, "sha256=" + want.decode())
            self.assertEqual(int(size), len(data))


@unittest.skipUnless(INSTALLED, "VKFLOW_TEST_INSTALLED is not 1 (no venv with pip)")
class TestSdist(unittest.TestCase):
    """The backend's sdist carries the Go module and builds a wheel on its
    own, with pip and no index."""

    def test_sdist_builds(self):
        spec = importlib.util.spec_from_file_location(
            "vkflow_build", os.path.join(PYTHON_DIR, "_build", "vkflow_build.py"))
        backend = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(backend)
        with tempfile.TemporaryDirectory() as tmp:
            name = backend.build_sdist(tmp)
            with tarfile.open(os.path.join(tmp, name)) as tf:
                members = set(tf.getnames())
            base = name[:-len(".tar.gz")]
            for want in ("PKG-INFO", "pyproject.toml", "_build/vkflow_build.py",
                         "vkflow/__init__.py", "vkflow/ops.py", "go/go.mod", "go/capi/main.go",
                         "go/capi/vkflow.h", "go/ops/internal/opcore/registry.go",
                         "go/ops/linalg/lu.go", "go/ops/fft/fft.go", "go/ops/render/render.go",
                         "go/vk/include/vulkan/vulkan_core.h", "go/vk/include/LICENSE.md"):
                self.assertIn(base + "/" + want, members)
            self.assertFalse(any(m.endswith("_test.go") for m in members))
            out = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-index", "--no-deps",
                                  "--no-cache-dir", "-q", "-w", tmp, os.path.join(tmp, name)],
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=600)
            self.assertEqual(out.returncode, 0, out.stdout.decode(errors="replace"))
            wheels = [f for f in os.listdir(tmp) if f.endswith(".whl")]
            self.assertEqual(len(wheels), 1, wheels)
            with zipfile.ZipFile(os.path.join(tmp, wheels[0])) as zf:
                self.assertIn("vkflow/libvkflow.so", zf.namelist())


if __name__ == "__main__":
    unittest.main()
