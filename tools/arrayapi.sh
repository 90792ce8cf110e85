#!/usr/bin/env bash
# Runs the array API standard's own test suite (data-apis/array-api-tests, the
# offline bundle in ../shared/arrayapi) against this checkout's vkflow.array_api
# and checks its outcome against docs/ARRAY_API.md: every failing test must be
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
work=${AA_WORKDIR:-$(mktemp -d /tmp/vkflow-arrayapi.XXXXXX)}
echo "arrayapi: running the array API suite from $bundle (work dir $work)"
start=$(date +%s)
AA_WORKDIR=$work "$bundle/run.sh" "$PWD" >"$work.log" 2>&1 || true
grep -A 30 "^array-api-tests:" "$work.log" | sed -n '1,25p' || true
echo "arrayapi: suite wall time $(($(date +%s) - start)) s"
/usr/bin/python3 tools/arrayapi_check.py "$work/outcomes" docs/ARRAY_API.md
