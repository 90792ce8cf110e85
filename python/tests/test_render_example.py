"""examples/inverse-render (issue 30), run as a user runs it: --check
recovers one triangle's sub-pixel translation to 0.05 px and the colours
of fixed triangles to an image MSE under 1e-5; --quick recovers a small
picture of triangles with Adam to its stated PSNR and writes the four
PNGs."""

import os
import subprocess
import sys
import tempfile
import unittest

EXAMPLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples",
                       "inverse-render", "inverse_render.py")


def run(*args):
    return subprocess.run([sys.executable, EXAMPLE, *args], capture_output=True, text=True, timeout=600)


class InverseRenderExampleTest(unittest.TestCase):
    def test_check(self):
        proc = run("--check")
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertIn("translation:", proc.stdout)
        self.assertIn("check: OK", proc.stdout)

    def test_quick_demo(self):
        with tempfile.TemporaryDirectory() as out:
            proc = run("--quick", "--out", out)
            self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
            self.assertIn("PSNR", proc.stdout)
            for name in ("target.png", "start.png", "result.png", "loss.png"):
                with open(os.path.join(out, name), "rb") as f:
                    self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n", name)


if __name__ == "__main__":
    unittest.main()
