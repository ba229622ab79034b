#!/bin/sh
# Replays the committed regression corpus through every fuzz target built
# with clang, libFuzzer, ASan and UBSan (tests/fuzz/build.sh):
#
#   sh tests/fuzz/replay.sh            (tests/run.sh calls it as part "fuzz")
#
# Each file of tests/fuzz/regress/TARGET/ (findings, named for what they
# hit) and tests/fuzz/corpus/TARGET/ (a coverage corpus: the campaign's
# corpus merged by libFuzzer, files under 2 KB) is one case: it passes when the
# target runs it without a sanitizer report, a failed check, a timeout
# (10 s) or going past 2 GiB. Files listed in tests/fuzz/pending.txt (fixed
# on another branch, not merged yet; named as regress/TARGET/FILE) are
# skipped and counted as such. The
# last line is "N passed, M failed, K skipped". Without clang/libFuzzer
# the part fails with a message (test.sh installs clang).
set -u
cd "$(dirname "$0")/../.."
pass=0
fail=0
skip=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! sh tests/fuzz/build.sh >"$log" 2>&1; then
    cat "$log"
    echo "ERROR: building the fuzz targets failed (clang with -fsanitize=fuzzer needed)"
    echo "0 passed, 1 failed"
    exit 1
fi
. tests/fuzz/env.sh
OPTS="-rss_limit_mb=2048 -timeout=10"
pending() {
    grep -v '^#' tests/fuzz/pending.txt 2>/dev/null | awk '{print $1}' | grep -qxF "$1"
}
for dir in tests/fuzz/regress/*/ tests/fuzz/corpus/*/; do
    [ -d "$dir" ] || continue
    t=$(basename "$dir")
    bin=build-fuzz/fuzz/$t
    if [ ! -x "$bin" ]; then
        echo "FAIL $t: no target build-fuzz/fuzz/$t"
        fail=$((fail + 1))
        continue
    fi
    files=""
    n=0
    for f in "$dir"*; do
        [ -f "$f" ] || continue
        if pending "${dir#tests/fuzz/}$(basename "$f")"; then
            skip=$((skip + 1))
            continue
        fi
        files="$files $f"
        n=$((n + 1))
    done
    [ $n -gt 0 ] || continue
    # one process for the whole folder; libFuzzer prints "Running: FILE"
    # before each, so a failure names its file: count it, and go on with
    # the files after it
    # shellcheck disable=SC2086
    set -- $files
    while [ $# -gt 0 ]; do
        if "$bin" $OPTS "$@" >"$log" 2>&1; then
            pass=$((pass + $#))
            break
        fi
        bad=$(grep '^Running: ' "$log" | tail -n 1 | sed 's/^Running: //')
        echo "FAIL $t ${bad:-(no file named)}"
        grep -E 'ERROR|runtime error|fuzz check failed|SUMMARY' "$log" | head -n 5
        fail=$((fail + 1))
        [ -n "$bad" ] || break
        # the files before the failing one passed; drop them and it
        while [ $# -gt 0 ] && [ "$1" != "$bad" ]; do
            pass=$((pass + 1))
            shift
        done
        [ $# -gt 0 ] && shift
    done
done
echo "$pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
