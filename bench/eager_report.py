"""The report of bench/eager.sh: reads the raw benchmark lines of all rounds
(bench/out/eager_raw.txt: "# round N" lines, then baseline.c's, eager.c's
and eager_py.py's lines) and prints the markdown table.

Usage: eager_report.py RAW [DEVICE_LOG]

Each comparison is at the medians over the rounds of each side's figure
(each figure itself the median of 5 batches), with the per-round ratios'
median and range beside it: the two sides of a ratio ran seconds apart in
the same round. The eager counters (cache hits and misses, host waits,
submits) are summed over the timed batches of all rounds. Exit status 1
when a figure is missing.
"""

import re
import statistics
import sys
import time

LINE = re.compile(r"^Benchmark(\w+)/(\S+?)-\d+\s+(\d+)\s+([\d.]+) ns/op(.*)$")

PY_SYNC = ("EagerPy", "add1000_sync")
PY_CHAIN = ("EagerPy", "add_chain1000")
C_SYNC = ("EagerC", "add1000_sync")
C_CHAIN = ("EagerC", "add_chain1000")
PY_SYNC_NOSPIN = ("EagerPy", "add1000_sync_nospin")
C_SYNC_NOSPIN = ("EagerC", "add1000_sync_nospin")
BASE_SYNC = ("C", "dispatch1024")
BASE_SYNC_POLL = ("C", "dispatch_poll1024")
BASE_CHAIN = ("C", "chain1000")

# label, vkflow side, baseline side, metric, goal (max ratio; None: reported)
COMPARISONS = [
    ("Python, sync: `c = vkflow.ops.add(a, b)` on 1,000 f32 + `float(c.read()[0])`, "
     "per iteration, vs C dispatch1024", PY_SYNC, BASE_SYNC, "ns/op", 1.3),
    ("Python, chain: 1,000 dependent `x = vkflow.ops.add(x, y)` + one read, "
     "per op, vs C chain1000 per dispatch", PY_CHAIN, BASE_CHAIN, "ns/dispatch", 1.3),
    ("C API, sync: `vkflow_op_call_async` + `vkflow_tensor_read` (+ close), "
     "vs C dispatch1024", C_SYNC, BASE_SYNC, "ns/op", None),
    ("C API, chain: 1,000 dependent `vkflow_op_call_async` + one read, per op, "
     "vs C chain1000 per dispatch", C_CHAIN, BASE_CHAIN, "ns/dispatch", None),
    # issue 32: with both sides waiting alike (polling), what is left is
    # the host cost of an eager op over a recorded dispatch
    ("both poll: Python sync vs C dispatch_poll1024 (the same polling wait)",
     PY_SYNC, BASE_SYNC_POLL, "ns/op", 1.2),
    ("both poll: C API sync vs C dispatch_poll1024", C_SYNC, BASE_SYNC_POLL, "ns/op", 1.1),
    ("both sleep: Python sync with VKFLOW_WAIT_SPIN=0 vs C dispatch1024",
     PY_SYNC_NOSPIN, BASE_SYNC, "ns/op", None),
    ("both sleep: C API sync with VKFLOW_WAIT_SPIN=0 vs C dispatch1024",
     C_SYNC_NOSPIN, BASE_SYNC, "ns/op", None),
    ("context: C dispatch_poll1024 over C dispatch1024 (what polling saves raw C)",
     BASE_SYNC_POLL, BASE_SYNC, "ns/op", None),
    ("context: Python sync over C API sync", PY_SYNC, C_SYNC, "ns/op", None),
    ("context: Python chain over C API chain, per op", PY_CHAIN, C_CHAIN, "ns/dispatch", None),
]

COUNTER_ROWS = [("Python, sync", PY_SYNC), ("Python, chain", PY_CHAIN),
                ("C API, sync", C_SYNC), ("C API, chain", C_CHAIN),
                ("Python, sync, VKFLOW_WAIT_SPIN=0", PY_SYNC_NOSPIN),
                ("C API, sync, VKFLOW_WAIT_SPIN=0", C_SYNC_NOSPIN)]


def parse(path):
    """[{(prefix, name): {metric: value}}] per round."""
    rounds = []
    with open(path) as f:
        for line in f:
            if line.startswith("# round"):
                rounds.append({})
                continue
            m = LINE.match(line.strip())
            if not m:
                continue
            if not rounds:
                rounds.append({})
            metrics = {"iters": float(m.group(3)), "ns/op": float(m.group(4))}
            rest = m.group(5).split()
            for v, unit in zip(rest[0::2], rest[1::2]):
                metrics[unit] = float(v)
            rounds[-1][(m.group(1), m.group(2))] = metrics
    return rounds


def fmt_ns(ns):
    if ns >= 1e6:
        return "%.2f ms" % (ns / 1e6)
    return "%.1f µs" % (ns / 1e3)


def device_line(log):
    if not log:
        return ""
    try:
        with open(log) as f:
            for line in f:
                m = re.match(r"baseline: device \d+: (.*?) \(Vulkan", line)
                if m:
                    return m.group(1)
    except OSError:
        pass
    return ""


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


def main(argv):
    if len(argv) < 1:
        sys.exit("usage: eager_report.py RAW [DEVICE_LOG]")
    rounds = parse(argv[0])
    missing = False
    out = []
    out.append("%s · %s · %s · %d rounds" % (
        time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), cpu_model(),
        device_line(argv[1] if len(argv) > 1 else None) or "device unknown", len(rounds)))
    out.append("")
    out.append("| comparison | vkflow | baseline | vkflow/baseline | per round: median (min–max) "
               "| goal | verdict |")
    out.append("|---|---:|---:|---:|---:|---|---|")
    goals = []
    for label, vk, base, metric, goal in COMPARISONS:
        vs = [r[vk][metric] for r in rounds if vk in r and metric in r[vk]]
        bs = [r[base][metric] for r in rounds if base in r and metric in r[base]]
        per = [r[vk][metric] / r[base][metric] for r in rounds
               if vk in r and base in r and metric in r[vk] and metric in r[base]]
        goal_s = "<= %.1fx" % goal if goal else "reported"
        if not vs or not bs:
            missing = True
            out.append("| %s | %s | %s | — | — | %s | **MISSING** |" % (
                label, fmt_ns(statistics.median(vs)) if vs else "MISSING",
                fmt_ns(statistics.median(bs)) if bs else "MISSING", goal_s))
            if goal:
                goals.append("- %s: **MISSING**" % label)
            continue
        v, b = statistics.median(vs), statistics.median(bs)
        ratio = v / b
        verdict = ("**MET**" if ratio <= goal else "**NOT MET**") if goal else "—"
        out.append("| %s | %s | %s | %.2fx | %.2fx (%.2f–%.2f) | %s | %s |" % (
            label, fmt_ns(v), fmt_ns(b), ratio, statistics.median(per), min(per), max(per),
            goal_s, verdict))
        if goal:
            short = label.split(" (")[0] if label.startswith("both") else label.split(":")[0]
            goals.append("- %s <= %.1fx: %.2fx (%s vs %s; per round %.2f–%.2f) — %s" % (
                short, goal, ratio, fmt_ns(v), fmt_ns(b), min(per), max(per),
                verdict))

    out.append("")
    out.append("Eager counters (`cache_stats` / `vkflow_op_cache_stats` deltas around the "
               "timed batches, after warm-up and calibration), summed over all rounds:")
    out.append("")
    out.append("| loop | op calls | cache hits | misses | hit rate | host waits per op | "
               "submits per op | GPU waits polled / blocked | goal | verdict |")
    out.append("|---|---:|---:|---:|---:|---:|---:|---:|---|---|")
    for label, key in COUNTER_ROWS:
        rs = [r[key] for r in rounds if key in r]
        if not rs or any("calls" not in m for m in rs):
            missing = True
            out.append("| %s | | | | | | | | 100%% hits, 0 host waits | **MISSING** |" % label)
            goals.append("- %s: cache and host waits: **MISSING**" % label)
            continue
        tot = {k: sum(m.get(k, 0) for m in rs)
               for k in ("calls", "hits", "misses", "hostwaits", "submits", "polled", "blocked")}
        looked = tot["hits"] + tot["misses"]
        rate = 100.0 * tot["hits"] / looked if looked else 0.0
        ok = tot["misses"] == 0 and tot["hostwaits"] == 0 and tot["hits"] > 0
        verdict = "**MET**" if ok else "**NOT MET**"
        out.append("| %s | %d | %d | %d | %.3f%% | %.4f | %.3f | %d / %d | 100%% hits, 0 host waits | %s |"
                   % (label, tot["calls"], tot["hits"], tot["misses"], rate,
                      tot["hostwaits"] / tot["calls"], tot["submits"] / tot["calls"],
                      tot["polled"], tot["blocked"], verdict))
        goals.append("- %s: hit rate %.3f%% (%d misses), %d host waits in %d calls — %s" % (
            label, rate, tot["misses"], tot["hostwaits"], tot["calls"], verdict))

    out.append("")
    out.append("Goals:")
    out.append("")
    out.extend(goals)
    out.append("")
    out.append("Times are medians over the rounds (each side's figure in a round: the median of "
               "5 batches). vkflow/baseline is the ratio of those medians; the verdict is on it. "
               "Per round: the ratio within each round, whose two sides ran seconds apart, "
               "as a measure of the noise. Sync rows: one iteration (op, wait, read) against "
               "dispatch1024's submit + wait of a recorded 1024-element multiply. vkflow's "
               "host waits poll the timeline for up to 200 µs before they sleep (WithWaitSpin); "
               "dispatch1024 sleeps at once, dispatch_poll1024 polls as vkflow does, and the "
               "VKFLOW_WAIT_SPIN=0 rows sleep at once. GPU waits: Manager.wait_stats over the "
               "timed batches (ended while polling / went on to sleep). Chain rows: "
               "per op of a 1000-op chain including its final read, against chain1000's "
               "per-dispatch time (1000 timeline-ordered submits, one host wait).")
    print("\n".join(out))
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
