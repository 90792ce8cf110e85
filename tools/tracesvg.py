#!/usr/bin/env python3
"""Draws a vkflow trace (VKFLOW_TRACE, vkflow.WithTrace: Chrome trace-event JSON) as an SVG timeline:
one row per track (GPU queues, host submits, waits and holds, recording), a box per span, and the
flow arrows from each batch to the batches that wait for it. For documentation pictures; open the JSON
itself in Perfetto (ui.perfetto.dev) or chrome://tracing to explore.

    tools/tracesvg.py trace.json out.svg [--from US] [--to US]
"""

import argparse
import html
import json


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trace")
    ap.add_argument("svg")
    ap.add_argument("--from", dest="t0", type=float, default=None, help="window start, µs")
    ap.add_argument("--to", dest="t1", type=float, default=None, help="window end, µs")
    ap.add_argument("--width", type=int, default=1100)
    a = ap.parse_args()
    ev = json.load(open(a.trace))["traceEvents"]
    names = {e["tid"]: e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
    spans = []  # (tid, start, end, name, kind)
    opened = {}
    for e in ev:
        if e["ph"] == "X":
            spans.append((e["tid"], e["ts"], e["ts"] + e.get("dur", 0), e["name"], e.get("cat", "")))
        elif e["ph"] == "b":
            opened[e["id"]] = e
        elif e["ph"] == "e" and e["id"] in opened:
            b = opened.pop(e["id"])
            how = b.get("args", {}).get("how", "")
            spans.append((b["tid"], b["ts"], e["ts"], b["name"] + (" (%s)" % how if how else ""), "async"))
    gpu = [s for s in spans if s[4] == "gpu"]
    t0 = a.t0 if a.t0 is not None else min(s[1] for s in gpu)
    t1 = a.t1 if a.t1 is not None else max(s[2] for s in gpu)
    spans = [s for s in spans if s[2] >= t0 and s[1] <= t1]
    tids = sorted({s[0] for s in spans})
    left, row, pad = 190, 26, 6
    width = a.width
    height = 30 + row * len(tids) + 30
    x = lambda t: left + (min(max(t, t0), t1) - t0) / (t1 - t0) * (width - left - 10)  # noqa: E731
    y = {tid: 30 + i * row for i, tid in enumerate(tids)}
    colour = {"gpu": "#4a7bd0", "host": "#e0a030", "async": "#8fbf6a"}
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" '
           'font-size="11">' % (width, height),
           '<rect width="100%" height="100%" fill="white"/>',
           '<defs><marker id="a" markerWidth="6" markerHeight="6" refX="5" refY="3" orient="auto">'
           '<path d="M0,0 L6,3 L0,6 z" fill="#c03030"/></marker></defs>',
           '<text x="%d" y="18">%.1f ms window</text>' % (left, (t1 - t0) / 1000)]
    for tid in tids:
        out.append('<text x="4" y="%d">%s</text>' % (y[tid] + row / 2 + 3, html.escape(names.get(tid, str(tid)))))
        out.append('<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="#ddd"/>' % (left, width - 10, y[tid] + row - 2,
                                                                          y[tid] + row - 2))
    for tid, s, e, name, kind in spans:
        w = max(x(e) - x(s), 1)
        out.append('<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s" stroke="#333" stroke-width="0.3">'
                   '<title>%s</title></rect>' % (x(s), y[tid] + 3, w, row - pad - 2, colour.get(kind, "#aaa"),
                                                 html.escape(name)))
    starts = {e["id"]: e for e in ev if e["ph"] == "s"}
    for e in ev:
        if e["ph"] == "f" and e["id"] in starts:
            s = starts[e["id"]]
            if s["tid"] in y and e["tid"] in y and t0 <= s["ts"] <= t1 and t0 <= e["ts"] <= t1:
                out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#c03030" stroke-width="0.8" '
                           'marker-end="url(#a)"/>' % (x(s["ts"]), y[s["tid"]] + row - pad,
                                                      x(e["ts"]), y[e["tid"]] + 4))
    out.append('<text x="%d" y="%d">GPU batches (blue) · host spans (orange) · waits and holds (green) · '
               'timeline flows (red)</text>' % (left, height - 8))
    out.append("</svg>")
    open(a.svg, "w").write("\n".join(out))


if __name__ == "__main__":
    main()
