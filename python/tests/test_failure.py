"""Failures travel along timelines (Go package timeline, Failures): from
Python a wait on a point that can no longer be reached raises
vkflow.FailedError at once instead of running into its timeout.

Every test opens a Manager with the validation layer (and synchronization
validation) on; a test fails if any validation message appears while it runs.
"""

import gc
import time
import unittest

import numpy as np

import vkflow

TIMEOUT = 30.0


class FailureTest(unittest.TestCase):

    def setUp(self):
        gc.collect()
        self.messages = vkflow.validation_messages()[0]
        self.mgr = vkflow.Manager(validation=True)

    def tearDown(self):
        self.mgr.close()
        count, last = vkflow.validation_messages()
        self.assertEqual(count, self.messages, "validation message(s), the last: %s" % last)

    def test_closed_timeline_fails_downstream(self):
        """A chain gate -> mid -> done of held submits: closing gate, whose
        value 1 nobody can signal any more, fails both submits and the
        points they would have signalled; waits raise FailedError quickly,
        a host signal of a failed timeline too, and so does reading a tensor
        whose last use failed, until it is written again."""
        a = self.mgr.tensor(np.ones(1024, dtype=np.float32))
        b = self.mgr.tensor(np.ones(1024, dtype=np.float32))
        out = self.mgr.tensor(np.zeros(1024, dtype=np.float32))
        gate, mid, done = self.mgr.timeline(0), self.mgr.timeline(0), self.mgr.timeline(0)
        s1 = self.mgr.sequence().kernel("add", a, b, out)
        s2 = self.mgr.sequence().kernel("multiply", a, out, out)
        s1.submit(wait=(gate, 1), signal=(mid, 1))
        s2.submit(wait=(mid, 1), signal=(done, 1))
        start = time.monotonic()
        gate.close()
        with self.assertRaises(vkflow.FailedError) as cm:
            done.wait(1, timeout=TIMEOUT)
        self.assertLess(time.monotonic() - start, 5.0, "the wait ran into its timeout")
        self.assertIn("timeline closed", str(cm.exception))
        with self.assertRaises(vkflow.FailedError):
            mid.wait(1, timeout=TIMEOUT)
        with self.assertRaises(vkflow.FailedError):
            mid.signal(2)
        with self.assertRaises(vkflow.FailedError, msg="out's last use failed: a read says so"):
            out.read()
        self.mgr.sequence().copy(a, out).eval()  # written again: readable
        np.testing.assert_array_equal(out.read(), np.ones(1024, dtype=np.float32))
        for x in (s1, s2, mid, done, a, b, out):
            x.close()

    def test_refusal_is_not_failure(self):
        """A submit refused at the call (here: its signal does not increase)
        raises ValueError and marks nothing: the timeline stays usable."""
        a = self.mgr.tensor(np.ones(16, dtype=np.float32))
        t = self.mgr.timeline(5)
        s = self.mgr.sequence().kernel("add", a, a, a)
        with self.assertRaises(ValueError):
            s.submit(signal=(t, 3))
        s.submit(signal=(t, 6))
        t.wait(6, timeout=TIMEOUT)
        s.close()


if __name__ == "__main__":
    unittest.main()
