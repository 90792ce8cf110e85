#!/usr/bin/env bash
# Runs the array API standard's own test suite (data-apis/array-api-tests, the
# offline bundle in ../shared/arrayapi) against this checkout's vkflow.array_api,
# at the version vkflow.array_api claims (_NEWEST, its default __array_api_version__), at 2023.12 and
# at 2024.12 (one run when the claim is one of them),
# and checks each outcome against docs/ARRAY_API.md: every failing test must be
# listed there (a suite defect or a deliberate deviation, with its reason), and
# at most MAX_FAILURES may fail. Without the bundle it skips, saying so.
#
#   tools/arrayapi.sh            (make arrayapi; .ci/run calls it)
#   ARRAYAPI_DIR=/path/to/bundle  another bundle; AA_WORKDIR keeps the run's files
set -euo pipefail
cd "$(dirname "$0")/.."
bundle=${ARRAYAPI_DIR:-../shared/arrayapi}
if [ ! -x "$bundle/run.sh" ]; then
	echo "arrayapi: no suite bundle at $bundle (run.sh): skipping the array API conformance suite"
	exit 0
fi
claimed=$(sed -n 's/^_NEWEST = "\(.*\)"$/\1/p' python/vkflow/array_api.py)
# The claimed version (the newest that passes: 2025.12), 2023.12 for users
# pinned to it, and 2024.12 whatever is claimed: each run's failures are
# checked against the doc (docs/ARRAY_API.md). VKFLOW_ARRAY_API_VERSION puts
# vkflow.array_api at the version the suite runs at (the suite imports the
# module; results whose type changed between versions follow it).
for version in $(printf '%s\n' "$claimed" 2023.12 2024.12 | awk '!seen[$0]++'); do
	work=${AA_WORKDIR:-$(mktemp -d /tmp/vkflow-arrayapi.XXXXXX)}
	[ -z "${AA_WORKDIR:-}" ] || work=$AA_WORKDIR/$version
	mkdir -p "$work"
	echo "arrayapi: running the array API suite at $version from $bundle (work dir $work)"
	start=$(date +%s)
	VKFLOW_ARRAY_API_VERSION=$version ARRAY_API_TESTS_VERSION=$version AA_WORKDIR=$work "$bundle/run.sh" "$PWD" >"$work.log" 2>&1 || true
	grep -A 30 "^array-api-tests:" "$work.log" | sed -n '1,25p' || true
	echo "arrayapi: $version: suite wall time $(($(date +%s) - start)) s"
	/usr/bin/python3 tools/arrayapi_check.py "$work/outcomes" docs/ARRAY_API.md
done
