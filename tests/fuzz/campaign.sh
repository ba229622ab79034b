#!/bin/sh
# The campaign of bench/fuzz.md: every target in turn, one process at a
# time, going on past findings (fork mode with one job).
#
#   sh tests/fuzz/campaign.sh "fuzz_sym:480 fuzz_value:600 ..."
set -u
cd "$(dirname "$0")/../.."
for spec in $1; do
    t=${spec%%:*}
    secs=${spec#*:}
    echo "== $t $secs s, started $(date -u +%H:%M:%S)"
    sh tests/fuzz/run.sh "$t" "$secs" -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1
    echo "== $t done $(date -u +%H:%M:%S)"
done
