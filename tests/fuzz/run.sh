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
# limit and 10 s per input.
set -eu
cd "$(dirname "$0")/../.."
[ $# -ge 2 ] || { echo "usage: sh tests/fuzz/run.sh TARGET SECONDS [LIBFUZZER_ARGS...]" >&2; exit 2; }
T=$1
SECS=$2
shift 2
sh tests/fuzz/build.sh
[ -x build-fuzz/fuzz/$T ] || { echo "no target $T (tests/fuzz/$T.c)" >&2; exit 2; }
[ -d build-fuzz/corpus/$T ] || sh tests/fuzz/seeds.sh
mkdir -p build-fuzz/findings/$T build-fuzz/logs
. tests/fuzz/env.sh
nice -n 10 build-fuzz/fuzz/$T -max_total_time="$SECS" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
    -artifact_prefix=build-fuzz/findings/$T/ "$@" build-fuzz/corpus/$T 2>&1 | tee build-fuzz/logs/$T.log |
    grep -E '^#[0-9]+.*(INITED|DONE|pulse)|^==|ERROR|runtime error|^stat::|Test unit written|fuzz check failed' || true
