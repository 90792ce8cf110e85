"""Manager(trace=path) (Go: vkflow.WithTrace, docs/PERFORMANCE.md): the
Chrome trace written at close has a GPU span and a host submit span for
every batch, flow arrows from each producer batch to its consumers that
never point back in time, and the host waits."""

import json
import os
import tempfile
import unittest

import numpy as np

import vkflow


class TraceTest(unittest.TestCase):
    def test_two_queue_graph(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "trace.json")
            m = vkflow.Manager(queues=2, trace=path,
                               validation=os.environ.get("VKFLOW_VALIDATION") == "1")
            a = m.tensor(np.arange(1024, dtype=np.float32))
            b = m.tensor(np.ones(1024, dtype=np.float32))
            c = m.tensor(1024)
            d = m.tensor(1024)
            g = m.graph()
            g.dispatch(m.kernel("add", a, b, c), queue=0)
            g.dispatch(m.kernel("multiply", c, b, d), queue=1)
            g.input(a, b)
            ex = g.compile()
            for _ in range(3):
                ex.run()
            np.testing.assert_array_equal(d.read(), np.arange(1024) + 1)
            m.close()
            with open(path) as f:
                tr = json.load(f)
        ev = tr["traceEvents"]
        gpu = {(e["args"]["queue"], e["args"]["value"]): e for e in ev if e.get("cat") == "gpu"}
        host = {(e["args"]["queue"], e["args"]["value"]) for e in ev if e.get("name") == "vkQueueSubmit"}
        self.assertEqual(set(gpu), host)
        self.assertGreaterEqual(len(gpu), 3)
        self.assertEqual(tr["metadata"]["dropped"], 0)
        starts = {e["id"]: e for e in ev if e["ph"] == "s"}
        ends = [e for e in ev if e["ph"] == "f"]
        for f in ends:
            self.assertGreaterEqual(f["ts"], starts[f["id"]]["ts"])
        self.assertTrue(any(e.get("name") == "wait" for e in ev))
        names = {e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
        self.assertIn("host: waits and holds", names)


if __name__ == "__main__":
    unittest.main()
