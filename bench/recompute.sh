#!/bin/sh
# Peak memory vs extra compute of the checkpointing policies (issue 6):
# builds bench/recompute.c against the single header and prints the
# markdown tables of bench/recompute.md (planning only: a few seconds).
#   sh bench/recompute.sh [RESNET18.onnx]
set -e
cd "$(dirname "$0")/.."
out=${TMPDIR:-/tmp}/pfvm_bench_recompute
${CC:-cc} -std=c99 -O2 -I. bench/recompute.c -o "$out" -lprotobuf-nanopb -lm
"$out" "$@"
