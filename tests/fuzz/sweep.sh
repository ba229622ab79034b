#!/bin/sh
# The attribute and input audit of issue 17 (tests/fuzz/README, "Audit"):
# runs every one-field edit of the node-suite models that
# tools/hostile_variants.py writes through fuzz_run (ASan + UBSan), and
# lists the ones that fail:
#
#   /usr/bin/python3 tools/hostile_variants.py build-fuzz/sweep [SUITE] [OPS]
#   sh tests/fuzz/sweep.sh [DIR]          (DIR: build-fuzz/sweep)
#
# FUZZ_RUN names another fuzz_run binary (default build-fuzz/fuzz/fuzz_run).
# One process runs many files; on a failure the report goes to
# DIR.fail/<file>.log and the run goes on after that file. The last line
# is "N passed, M failed".
set -u
cd "$(dirname "$0")/../.."
dir=${1:-build-fuzz/sweep}
bin=${FUZZ_RUN:-build-fuzz/fuzz/fuzz_run}
. tests/fuzz/env.sh
mkdir -p "$dir.fail"
log=$(mktemp)
list=$(mktemp)
trap 'rm -f "$log" "$list"' EXIT
find "$dir" -maxdepth 1 -name '*.onnx' | sort >"$list"
pass=0
fail=0
total=$(wc -l <"$list")
start=1
while [ "$start" -le "$total" ]; do
    # batches of 200 files keep the command line short
    set -- $(sed -n "${start},$((start + 199))p" "$list")
    n=$#
    if nice "$bin" -rss_limit_mb=2048 -malloc_limit_mb=2048 -timeout=${FUZZ_TIMEOUT:-10} "$@" >"$log" 2>&1; then
        pass=$((pass + n))
        start=$((start + n))
        continue
    fi
    bad=$(grep '^Running: ' "$log" | tail -n 1 | sed 's/^Running: //')
    [ -n "$bad" ] || { echo "FAIL (no file named)"; cat "$log" | tail -5; exit 1; }
    k=$(grep -n -x -F "$bad" "$list" | head -n 1 | cut -d: -f1)
    pass=$((pass + k - start))
    fail=$((fail + 1))
    cp "$log" "$dir.fail/$(basename "$bad").log"
    echo "FAIL $bad: $(grep -E -m1 'ERROR: |runtime error|fuzz check failed' "$log")"
    start=$((k + 1))
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
