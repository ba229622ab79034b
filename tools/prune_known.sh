#!/bin/sh
# Removes from tests/known_failures.txt every case that passes now (the
# XPASS lines of `interp test`). Run after `make` when operators land.
set -eu
cd "$(dirname "$0")/.."
DATA=${PFVM_TESTDATA:-/usr/share/libonnx-testdata/data}
passing=$(for s in node pytorch-converted pytorch-operator simple; do
    ./build/interp test --known tests/known_failures.txt "$DATA/$s" | sed -n 's/^XPASS \([^:]*\):.*/\1/p'
done)
for n in $passing; do
    sed -i "/^$n /d" tests/known_failures.txt
done
echo "removed $(echo "$passing" | grep -c . || true) cases from tests/known_failures.txt"
