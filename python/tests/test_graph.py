"""Graph tests for the vkflow Python package: record, compile and run graphs
through libvkflow.so, results compared with NumPy exactly.

`make test-python` runs them against the package pip installed into
build/venv; `make python` and `cd python && python3 -m unittest discover -s
tests` run them in-tree.

Every test opens a Manager with the validation layer (and synchronization
validation) on; a test fails if any validation message appears while it runs.
Values are small integers in float32, so every result is exact whatever the
order of rounding.
"""

import gc
import os
import unittest

import numpy as np

import vkflow

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TIMEOUT = 30.0


def ramp(n, mod=97):
    return (np.arange(n) % mod).astype(np.float32)


class GraphTest(unittest.TestCase):
    """Opens a validated Manager per test (two compute queues unless a test
    asks otherwise); any validation message fails the test."""

    queues = 2

    def setUp(self):
        gc.collect()
        self.messages = vkflow.validation_messages()[0]
        self.mgr = vkflow.Manager(validation=True, queues=self.queues)

    def tearDown(self):
        self.mgr.close()
        gc.collect()
        count, text = vkflow.validation_messages()
        self.assertEqual(count, self.messages,
                         "%d validation message(s), the last: %s" % (count - self.messages, text))

    def test_chain(self):
        """Upload, fill, a chain of dependent saxpy dispatches, download; the
        upload array is read again at every run."""
        n, steps = 4096, 20
        xs = ramp(n)
        x = self.mgr.tensor((n,))
        y = self.mgr.tensor((n,))
        saxpy = self.mgr.kernel("saxpy", x, None, y)
        self.assertEqual(saxpy.push_size, 4)
        base = self.mgr.mem_stats()[0]
        g = self.mgr.graph()
        g.upload(x, xs, name="x")
        g.fill(y, 1.0)
        for _ in range(steps):
            g.dispatch(saxpy, 2.0)
        ys = g.download(y).array
        self.assertEqual(len(g), steps + 3)
        ex = g.compile()
        self.assertEqual(ex.warnings, [])
        sched = str(ex)
        self.assertIn("x", sched)
        self.assertTrue(ex.dot().startswith("digraph"))
        del g  # the Exec keeps the host arrays alive
        gc.collect()
        for run in range(3):
            xs[:] = ramp(n) + run  # read at the next run
            ex.run(timeout=TIMEOUT)
            np.testing.assert_array_equal(ys, 1 + steps * 2 * xs, "run %d" % run)
        self.assertGreater(self.mgr.mem_stats()[0], base, "the Exec's staging buffers")
        ex.close()
        ex.close()
        with self.assertRaises(vkflow.ClosedError):
            ex.run()
        self.assertEqual(self.mgr.mem_stats()[0], base, "closing the Exec frees its buffers")

    def diamond(self, pin):
        """a = upload; b = a + a, c = a * a on two queues; d = b + c."""
        n = 1 << 14
        av = ramp(n, 61)
        a, b, c, d = (self.mgr.tensor((n,)) for _ in range(4))
        g = self.mgr.graph()
        g.upload(a, av)
        nb = g.dispatch(self.mgr.kernel("add", a, a, b), name="b=2a")
        nc = g.dispatch(self.mgr.kernel("multiply", a, a, c), name="c=a*a")
        if pin:
            nb.on_queue(0)
            nc.on_queue(1)
        g.dispatch(self.mgr.kernel("add", b, c, d), name="d=b+c")
        out = g.download(d).array
        ex = g.compile()
        return ex, av, out

    def test_diamond_two_queues(self):
        for pin in (False, True):
            with self.subTest(pin=pin):
                ex, av, out = self.diamond(pin)
                sched = str(ex)
                self.assertIn("c=a*a", sched)
                if pin:
                    self.assertIn("waits queue", sched)
                for _ in range(2):
                    out[:] = -1
                    ex.run(timeout=TIMEOUT)
                    np.testing.assert_array_equal(out, av + av + av * av)
                # Asynchronous: one run at a time for a graph with host nodes
                # (the first is held behind a timeline point, so it is still
                # in flight when the second is asked for).
                out[:] = -1
                gate = self.mgr.timeline()
                r = ex.run_async(wait=(gate, 1))
                with self.assertRaises(vkflow.PendingError):
                    ex.run_async()
                self.assertFalse(r.done)
                gate.signal(1)
                r.wait(TIMEOUT)
                self.assertTrue(r.done)
                np.testing.assert_array_equal(out, av + av + av * av)
                r.wait(TIMEOUT)  # again: fine
                r.close()
                with self.assertRaises(vkflow.ClosedError):
                    r.wait()

    def test_rebind_set_push(self):
        n = 1024
        xs = ramp(n)
        x = self.mgr.tensor(xs)
        y = self.mgr.tensor((n,))
        g = self.mgr.graph()
        g.input(x)
        g.fill(y, 0.0)
        node = g.dispatch(self.mgr.kernel("saxpy", x, None, y), np.float32(2))
        ys = g.download(y).array
        ex = g.compile()
        ex.run(timeout=TIMEOUT)
        np.testing.assert_array_equal(ys, 2 * xs)
        ex.set_push(node, 5.0)
        ex.run(timeout=TIMEOUT)
        np.testing.assert_array_equal(ys, 5 * xs)
        ex.rebind(x, self.mgr.tensor(xs * 3))  # the Exec keeps the new tensor alive
        gc.collect()
        ex.run(timeout=TIMEOUT)
        np.testing.assert_array_equal(ys, 15 * xs)
        with self.assertRaisesRegex(ValueError, "push constants"):
            ex.set_push(node, (1.0, 2.0))
        with self.assertRaises(ValueError):
            ex.set_push(99, 1.0)
        # A node of another graph is refused, even with an id the Exec has
        # (node's id); nothing changes.
        other = self.mgr.graph()
        other.fill(y, 0.0)
        foreign = other.dispatch(self.mgr.kernel("saxpy", x, None, y), np.float32(7))
        self.assertEqual(foreign.id, node.id)
        with self.assertRaisesRegex(ValueError, "not a node of the graph"):
            ex.set_push(foreign, 1000.0)
        ex.run(timeout=TIMEOUT)
        np.testing.assert_array_equal(ys, 15 * xs)

    def test_spirv_copy_regions_timelines(self):
        """An algorithm from SPIR-V, a copy with regions, and a run ordered
        after a host-signalled timeline point that signals another."""
        with open(os.path.join(ROOT, "shaders", "add.spv"), "rb") as f:
            code = f.read()
        n = 256
        av, bv = ramp(n), ramp(n, 13)
        a, b = self.mgr.tensor(av), self.mgr.tensor(bv)
        s = self.mgr.tensor((n,))
        t = self.mgr.tensor((n,))
        g = self.mgr.graph()
        g.input(a, b)
        g.dispatch(self.mgr.algorithm(code, [a, b, s]))
        g.fill(t, 7.0)
        g.copy(s, t, [(0, 10, 5), (100, 200, 50)])
        out = g.download(t).array
        ex = g.compile(queues=[0], max_nodes_per_submit=1)
        start, done = self.mgr.timeline(), self.mgr.timeline()
        r = ex.run_async(wait=(start, 1), signal=(done, 4))
        self.assertFalse(r.done)
        start.signal(1)
        r.wait(TIMEOUT)
        self.assertEqual(done.value, 4)
        want = np.full(n, 7, np.float32)
        want[10:15] = (av + bv)[0:5]
        want[200:250] = (av + bv)[100:150]
        np.testing.assert_array_equal(out, want)

    def test_errors(self):
        n = 64
        x, y, z = (self.mgr.tensor((n,)) for _ in range(3))
        add = self.mgr.kernel("add", x, x, y)

        # A cycle, reachable only through an after edge.
        g = self.mgr.graph()
        g.input(x)
        first = g.dispatch(add)                             # writes y
        second = g.copy(y, z)                               # reads y: after first
        first.after(second)
        with self.assertRaisesRegex(ValueError, "cycle"):
            g.compile()

        # A tensor closed between recording and compile.
        g = self.mgr.graph()
        w = self.mgr.tensor((n,))
        g.fill(w, 1.0)
        w.close()
        with self.assertRaises(vkflow.ClosedError):
            g.compile()
        with self.assertRaises(vkflow.ClosedError):
            g.fill(w, 1.0)  # the Python side knows at once

        # A queue the Manager lacks, when pinned and when compiling; the
        # first error sticks.
        g = self.mgr.graph()
        node = g.fill(z, 0.0)
        with self.assertRaisesRegex(ValueError, "queue"):
            node.on_queue(5)
        with self.assertRaisesRegex(ValueError, "queue"):
            g.fill(z, 1.0)
        with self.assertRaisesRegex(ValueError, "queue"):
            g.compile()
        g = self.mgr.graph()
        g.fill(z, 0.0)
        with self.assertRaises(ValueError):
            g.compile(queues=[7])

        # Bad host buffers and push constants.
        g = self.mgr.graph()
        with self.assertRaisesRegex(ValueError, "dtype"):
            g.upload(x, np.zeros(n, np.int32))
        with self.assertRaisesRegex(ValueError, "bytes"):
            g.download(x, np.zeros(n + 1, np.float32))
        with self.assertRaises(TypeError):
            g.upload(x, [0.0] * n)
        with self.assertRaisesRegex(ValueError, "push constants"):
            self.mgr.graph().dispatch(add, 1.0)
        with self.assertRaises(ValueError):
            first.after(self.mgr.graph().fill(z, 0.0))  # another graph's node

    def test_warning_and_manager_close(self):
        n = 64
        x, y, z = (self.mgr.tensor((n,)) for _ in range(3))
        g = self.mgr.graph()
        g.copy(x, y)  # x: nothing writes it, not declared input
        ex = g.compile()
        self.assertEqual(len(ex.warnings), 1, ex.warnings)
        self.assertIn("node 0 copy reads a tensor that nothing wrote", ex.warnings[0])
        self.mgr.close()
        with self.assertRaises(vkflow.ClosedError):
            ex.run()

    def small_exec(self):
        """A graph (fill x, copy x to y, download y), its Exec and the
        download array."""
        n = 64
        x, y = self.mgr.tensor((n,)), self.mgr.tensor((n,))
        g = self.mgr.graph()
        g.fill(x, 3.0)
        g.copy(x, y)
        ys = g.download(y).array
        return g, g.compile(), ys

    def assert_closed(self, g, ex, r):
        """Every use of the closed graph, Exec and Run raises ClosedError;
        closing them again is a no-op."""
        self.assertTrue(g.closed and ex.closed and r.closed, (g, ex, r))
        self.assertEqual(repr(ex), "<vkflow.Exec closed>")
        self.assertEqual(str(ex), "<vkflow.Exec closed>")
        self.assertEqual(repr(r), "<vkflow.Run closed>")
        uses = {
            "Exec.run": lambda: ex.run(timeout=TIMEOUT),
            "Exec.run_async": ex.run_async,
            "Exec.schedule": ex.schedule,
            "Exec.dot": ex.dot,
            "Exec.warnings": lambda: ex.warnings,
            "Exec.set_push": lambda: ex.set_push(0, b""),
            "Run.wait": lambda: r.wait(TIMEOUT),
            "Run.done": lambda: r.done,
            "Graph.len": lambda: len(g),
            "Graph.compile": g.compile,
        }
        for name, use in uses.items():
            with self.subTest(use=name):
                with self.assertRaisesRegex(vkflow.ClosedError, "is closed"):
                    use()
        for h in (g, ex, r, self.mgr):
            h.close()
            h.close()
            self.assertTrue(h.closed)

    def test_manager_close_closes_graph_exec_run(self):
        """Closing the Manager closes its graphs, Execs and Runs, in either
        order with their own close."""
        cases = {
            "manager first": (),
            "exec first": ("ex",),
            "run, exec and graph first": ("r", "ex", "g"),
        }
        for case, first in cases.items():
            with self.subTest(case=case):
                if self.mgr.closed:
                    self.mgr = vkflow.Manager(validation=True, queues=self.queues)
                g, ex, ys = self.small_exec()
                r = ex.run_async()
                r.wait(TIMEOUT)
                np.testing.assert_array_equal(ys, np.full(64, 3.0, np.float32))
                handles = {"g": g, "ex": ex, "r": r}
                for name in first:
                    handles[name].close()
                    self.assertTrue(handles[name].closed)
                self.assertEqual(ex.closed, "ex" in first)
                self.mgr.close()
                self.assert_closed(g, ex, r)

    def test_manager_close_in_flight_run(self):
        """A Run still in flight when the Manager closes (its wait point is
        reached first, so the close can wait for it) is closed with it."""
        g, ex, ys = self.small_exec()
        gate = self.mgr.timeline()
        r = ex.run_async(wait=(gate, 1))
        gate.signal(1)
        self.mgr.close()
        self.assertTrue(gate.closed)
        self.assert_closed(g, ex, r)

    def test_close_cascade(self):
        """Closing the graph leaves its Exec alone; closing the Exec closes
        its Runs, and a Run still in flight completes."""
        g, ex, ys = self.small_exec()
        g.close()
        ex.run(timeout=TIMEOUT)
        np.testing.assert_array_equal(ys, np.full(64, 3.0, np.float32))
        gate = self.mgr.timeline()
        done = self.mgr.timeline()
        r = ex.run_async(wait=(gate, 1), signal=(done, 1))
        ex.close()
        self.assertTrue(r.closed)
        with self.assertRaisesRegex(vkflow.ClosedError, "Run is closed"):
            r.wait(TIMEOUT)
        gate.signal(1)
        done.wait(1, TIMEOUT)
        self.mgr.close()
        self.assert_closed(g, ex, r)


class OneQueueTest(GraphTest):
    """The same on a Manager with one queue (but the tests that pin queue 1)."""

    queues = None

    def test_diamond_two_queues(self):
        ex, av, out = self.diamond(pin=False)
        ex.run(timeout=TIMEOUT)
        np.testing.assert_array_equal(out, av + av + av * av)


if __name__ == "__main__":
    unittest.main()
