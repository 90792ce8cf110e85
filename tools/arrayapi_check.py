"""Checks an array API suite run (run.sh's outcomes/*.tsv) against the known
failures listed in docs/ARRAY_API.md.

A test failed when its RESULT is not passed/skipped/xfailed, or when it
STARTed and has no RESULT (its process crashed). Known failures are the
lines of ARRAY_API.md's "Known failures" section that start with
"- `<test id>`". The check fails when a failing test is not listed, when
more than MAX_FAILURES tests fail, or when no test ran; it notes listed
tests that now pass (to be removed from the list).
"""

import glob
import os
import re
import sys

MAX_FAILURES = 25
PASS = {"passed", "skipped", "xfailed", "xpassed"}


def outcomes(directory):
    """{test id: status} over every outcomes file; "crashed" for a test
    that started and never finished."""
    status = {}
    for path in sorted(glob.glob(os.path.join(directory, "*.tsv"))):
        with open(path, encoding="utf-8") as f:
            for line in f:
                parts = line.rstrip("\n").split("\t")
                if parts[0] == "START" and len(parts) > 1:
                    status.setdefault(parts[1], "crashed")
                elif parts[0] == "RESULT" and len(parts) > 2:
                    status[parts[1]] = parts[2]
    return status


def known(doc):
    """The test ids listed under the "Known failures" heading of doc."""
    ids, inside = set(), False
    with open(doc, encoding="utf-8") as f:
        for line in f:
            if line.startswith("#"):
                inside = "known failures" in line.lower()
                continue
            m = re.match(r"- `([^`]+)`", line)
            if inside and m:
                ids.add(m.group(1))
    return ids


def main(directory, doc):
    status = outcomes(directory)
    if not status:
        print("arrayapi: no test ran (see the run's log)")
        return 1
    failed = sorted(t for t, s in status.items() if s not in PASS)
    listed = known(doc)
    passed = sum(1 for s in status.values() if s == "passed")
    print("arrayapi: %d passed, %d failed (%d listed as known in %s)"
          % (passed, len(failed), len(listed), doc))
    unlisted = [t for t in failed if t not in listed]
    for t in unlisted:
        print("arrayapi: FAILED and not listed in %s: %s (%s)" % (doc, t, status[t]))
    for t in sorted(listed):
        if status.get(t) == "passed":
            print("arrayapi: listed as a known failure but passes now: %s" % t)
    if len(failed) > MAX_FAILURES:
        print("arrayapi: %d failures, more than %d" % (len(failed), MAX_FAILURES))
        return 1
    return 1 if unlisted else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
