# Sourced by tests/fuzz/run.sh and replay.sh: sanitizer options for the
# fuzz targets. Every UBSan report halts; nothing is suppressed.
UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
export UBSAN_OPTIONS ASAN_OPTIONS
