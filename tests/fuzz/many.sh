#!/bin/sh
# Fuzzes several targets at once on a machine with many cores: each target
# in libFuzzer's fork mode with its own number of jobs, starting from the
# committed corpora and regression inputs, going on past findings.
#
#   sh tests/fuzz/many.sh SECONDS OUTDIR TARGET:JOBS [TARGET:JOBS...]
#
# Binaries come from $FUZZ_BIN (default build-fuzz/fuzz, made by
# tests/fuzz/build.sh). For each target it writes OUTDIR/TARGET.log,
# OUTDIR/findings/TARGET/ (crash-*, leak-*, timeout-*, oom-*) and
# OUTDIR/corpus/TARGET (the working corpus). bench/fuzz.md says how its
# numbers were made. FUZZ_TIMEOUT (seconds per input, default 10) is for
# loaded machines, where a 10 s limit flags inputs that are only starved.
set -u
cd "$(dirname "$0")/../.."
[ $# -ge 3 ] || { echo "usage: sh tests/fuzz/many.sh SECONDS OUTDIR TARGET:JOBS..." >&2; exit 2; }
secs=$1
out=$2
shift 2
bin=${FUZZ_BIN:-build-fuzz/fuzz}
. tests/fuzz/env.sh
for spec in "$@"; do
    t=${spec%%:*}
    jobs=${spec#*:}
    [ -x "$bin/$t" ] || { echo "no target $bin/$t" >&2; exit 2; }
    mkdir -p "$out/findings/$t" "$out/corpus/$t"
    for d in tests/fuzz/corpus/$t tests/fuzz/regress/$t; do
        [ -d "$d" ] && find "$d" -type f -exec cp {} "$out/corpus/$t/" \;
    done
    touch "$out/corpus/$t.start"   # what is newer than this, the run found
    "$bin/$t" -max_total_time="$secs" -rss_limit_mb=2048 -timeout="${FUZZ_TIMEOUT:-10}" -print_final_stats=1 \
        -fork="$jobs" -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
        -artifact_prefix="$out/findings/$t/" "$out/corpus/$t" >"$out/$t.log" 2>&1 &
done
wait
for spec in "$@"; do
    t=${spec%%:*}
    echo "== $t: $(grep -E '^#[0-9]+' "$out/$t.log" | tail -n 1)"
    echo "   findings: $(ls "$out/findings/$t" | wc -l)"
done
