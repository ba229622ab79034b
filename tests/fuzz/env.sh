# Sourced by tests/fuzz/run.sh and replay.sh: sanitizer options for the
# fuzz targets. Every UBSan report halts; the temporary stb_ds suppression
# applies while tests/fuzz/ubsan-temporary.supp exists.
UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
if [ -f tests/fuzz/ubsan-temporary.supp ]; then
    UBSAN_OPTIONS="$UBSAN_OPTIONS:suppressions=$(pwd)/tests/fuzz/ubsan-temporary.supp"
fi
ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
export UBSAN_OPTIONS ASAN_OPTIONS
