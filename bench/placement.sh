#!/usr/bin/env bash
# The cost model's decisions (issue 31): the device's costs as graph
# placement by cost sees them (measured once, then read from the user cache
# folder) and the schedules Compile makes of the benchmark graphs wide8 and
# diamond8 on two logical queues, placed by cost and spread. The timings
# of both forms are bench/run.sh's graph_*_2q and graph_*_2q_bycost rows.
# Output: stdout and bench/out/placement.txt.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
GO=${GO:-go}
mkdir -p bench/out
if [[ -z "${XDG_RUNTIME_DIR:-}" ]]; then
	XDG_RUNTIME_DIR=$(mktemp -d /tmp/vkflow-xdg.XXXXXX)
	export XDG_RUNTIME_DIR
fi
VKFLOW_PLACEMENT_REPORT=1 "$GO" test ./bench -run '^TestPlacementReport$' -count=1 -v |
	grep -v -e '^=== RUN' -e '^--- PASS' -e '^PASS' -e '^ok' | tee bench/out/placement.txt
