#!/usr/bin/env bash
# The mutation check of the test oracle.
#
#   tools/test-oracle.sh
#
# Runs the sequence, timeline, dlpack and graph tests, and the ops tests
# that chain dispatches (multi-pass reductions, softmax, matmul after
# matmul, ops in graphs), built with the test-only tag vkflow_nobarriers, under which the sequence and the graph
# record none of the barriers they infer. The synchronization validation
# layer must then report hazards: the check succeeds only if the run FAILS
# and its output contains SYNC-HAZARD reports, at least one in each package
# listed in MUST_SEE, and sequence's include hazards between submits
# (reported at vkQueueSubmit). If the suite passes without barriers, the
# tests can no longer see a missing barrier (for example, commands the
# layer does not track) and this check fails.
set -uo pipefail

GO=${GO:-go}
PKGS=(./sequence/ ./timeline/ ./dlpack/ ./graph/ ./ops/internal/opcore/)
# Packages whose tests must each show a hazard on their own. timeline's
# tests order their submits with semaphores, which need no barrier.
MUST_SEE=(./sequence/ ./dlpack/ ./graph/ ./ops/internal/opcore/)
# The tests each package runs (default: all). The eager stream tests are
# checked on their own below.
declare -A RUN=([./ops/internal/opcore/]='^(TestReduceComposes|TestReduceStaged|TestSoftmax|TestSoftmaxComposes|TestMatmulRecord|TestElementwiseGraph|TestOpLifetime)$')

out=$(mktemp -d /tmp/vkflow-oracle.XXXXXX)
trap 'rm -rf "$out"' EXIT

failed=0
total=0
declare -A seen submits
for p in "${PKGS[@]}"; do
	log="$out/$(basename "$p").log"
	if $GO test -race -count=1 -tags vkflow_nobarriers -run "${RUN[$p]:-.}" "$p" >"$log" 2>&1; then
		rc=0
	else
		rc=1
		failed=1
	fi
	n=$(grep -o 'validation error SYNC-HAZARD[A-Z_-]*' "$log" | wc -l)
	# Hazards between command buffers, reported at vkQueueSubmit.
	sub=$(grep -c 'vkQueueSubmit: Hazard' "$log")
	submits[$p]=$sub
	seen[$p]=$n
	total=$((total + n))
	kinds=$(grep -o 'validation error SYNC-HAZARD[A-Z_-]*' "$log" | sed 's/validation error //' | sort | uniq -c | awk '{printf " %s=%s", $2, $1}')
	status=passed
	[ $rc -ne 0 ] && status=failed
	echo "test-oracle: $p without barriers: $status, $n SYNC-HAZARD reports (${sub} between submits)${kinds}"
done

ok=1
if [ $failed -eq 0 ]; then
	echo "test-oracle: FAIL: the tests pass with every inferred barrier removed; they cannot see a missing barrier" >&2
	ok=0
fi
for p in "${MUST_SEE[@]}"; do
	if [ "${seen[$p]}" -eq 0 ]; then
		echo "test-oracle: FAIL: no SYNC-HAZARD report in $p without barriers" >&2
		ok=0
	fi
done
# The cross-submit barriers (internal/core/hazard.go) must be seen too.
if [ "${submits[./sequence/]}" -eq 0 ]; then
	echo "test-oracle: FAIL: no hazard between submits reported in ./sequence/ without barriers" >&2
	ok=0
fi
# Eager op streams (ops.Stream) order their calls only through the
# barriers the queue infers between submits: their ordering tests alone
# must fail, with hazards reported at vkQueueSubmit.
log="$out/stream.log"
if $GO test -race -count=1 -tags vkflow_nobarriers -run '^TestStream(Ordering|InputsOverwritten|Queues)$' ./ops/internal/opcore/ >"$log" 2>&1; then
	echo "test-oracle: FAIL: the eager stream ordering tests pass without barriers" >&2
	ok=0
else
	n=$(grep -c 'vkQueueSubmit: Hazard' "$log")
	fails=$(grep -c '^--- FAIL: TestStream' "$log")
	echo "test-oracle: ./ops/internal/opcore/ eager stream ordering without barriers: failed ($fails tests), $n hazards between submits"
	if [ "$n" -eq 0 ] || [ "$fails" -lt 3 ]; then
		echo "test-oracle: FAIL: each eager stream ordering test must fail with hazards between submits" >&2
		ok=0
	fi
fi
# Failures travel along timelines (internal/core/failure.go): built with
# the test-only tag vkflow_nofailures, under which a failed producer marks
# nothing, each failure-propagation test must fail (waits end by their
# contexts instead of the failure).
log="$out/failures.log"
if $GO test -race -count=1 -tags vkflow_nofailures -run '^(TestFailurePropagates|TestClosedTimelineFailsHeldWaiters|TestFailureRandomDAGs)$' ./timeline/ >"$log" 2>&1; then
	echo "test-oracle: FAIL: the failure-propagation tests pass with propagation off" >&2
	ok=0
else
	fails=$(grep -c '^--- FAIL: Test' "$log")
	echo "test-oracle: ./timeline/ failure propagation off: failed ($fails tests)"
	if [ "$fails" -lt 3 ]; then
		echo "test-oracle: FAIL: each failure-propagation test must fail with propagation off" >&2
		ok=0
	fi
fi
if [ $ok -eq 0 ]; then
	exit 1
fi
echo "test-oracle: ok: removing the inferred barriers is caught ($total SYNC-HAZARD reports)"
