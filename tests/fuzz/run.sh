#!/bin/sh
# Builds the fuzz targets and fuzzes one of them for a while:
#
#   sh tests/fuzz/run.sh TARGET SECONDS [LIBFUZZER_ARGS...]
#
# TARGET: fuzz_load_infer, fuzz_roundtrip, fuzz_run, fuzz_value, fuzz_sym.
# The corpus is build-fuzz/corpus/TARGET (made by tests/fuzz/seeds.sh on
# first use); findings go to build-fuzz/findings/TARGET/ (crash-*, leak-*,
# timeout-*, oom-*), the log to build-fuzz/logs/TARGET.log. The run is
# nice'd, one process (pfvm's build machines are shared), with a 2 GiB RSS
# limit and 10 s per input. For a campaign that goes on past findings, add
# -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 (still one
# fuzzing process at a time).
set -eu
cd "$(dirname "$0")/../.."
[ $# -ge 2 ] || { echo "usage: sh tests/fuzz/run.sh TARGET SECONDS [LIBFUZZER_ARGS...]" >&2; exit 2; }
T=$1
SECS=$2
shift 2
sh tests/fuzz/build.sh
[ -x build-fuzz/fuzz/$T ] || { echo "no target $T (tests/fuzz/$T.c)" >&2; exit 2; }
[ -d build-fuzz/corpus/$T ] || sh tests/fuzz/seeds.sh
mkdir -p build-fuzz/findings/$T build-fuzz/logs build-fuzz/run
# a copy, so that rebuilding during a long run (fork mode re-executes the
# binary for every job) does not change the program under test
cp build-fuzz/fuzz/$T build-fuzz/run/$T
. tests/fuzz/env.sh
nice -n 10 build-fuzz/run/$T -max_total_time="$SECS" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
    -artifact_prefix=build-fuzz/findings/$T/ "$@" build-fuzz/corpus/$T 2>&1 | tee build-fuzz/logs/$T.log |
    grep -E '^#[0-9]+.*(INITED|DONE|pulse)|^==|ERROR|runtime error|^stat::|Test unit written|fuzz check failed' || true
