"""Checks that the tests use the package pip installed, not the source tree.

`make test-python` sets VKFLOW_TEST_INSTALLED=1 after `pip install ./python`
into build/venv; then vkflow and its libvkflow.so must come from that venv's
site-packages, and the wheel's RECORD must list them with their hashes.
Without the variable (tests run in-tree) the checks are skipped.
"""

import base64
import hashlib
import os
import sys
import sysconfig
import unittest

import vkflow

INSTALLED = os.environ.get("VKFLOW_TEST_INSTALLED") == "1"


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


if __name__ == "__main__":
    unittest.main()
