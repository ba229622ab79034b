#!/bin/sh
# GEMM benchmark (issue 18): GFLOP/s of pfvm's float matrix engine
# (src/ops/linalg.c) against the measured FMA peak of one core
# (bench/peak.c) and OpenBLAS's sgemm on one thread, for square sizes and
# for the products that resnet18 / mobilenet_v2 convolutions and a
# transformer layer become (bench/gemm.c). pfvm and OpenBLAS runs
# alternate; each keeps its fastest run. Writes bench/gemm.md.
#
#   sh bench/gemm.sh            about 0.5 s per side and size
#   SECONDS_PER=2 sh bench/gemm.sh
# One product while tuning (arguments: seconds, a product-name filter):
#   cc -O2 bench/gemm.c build/libpfvm.a -lopenblas -lm -o /tmp/gemm && /tmp/gemm 0.3 layer1
#
# Needs libopenblas-dev (apt-get install libopenblas-dev).
set -eu
cd "$(dirname "$0")/.."
T=${SECONDS_PER:-0.5}
make -j2 build/libpfvm.a >/dev/null
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -O2 bench/peak.c -o "$tmp/peak"
cc -O2 bench/gemm.c build/libpfvm.a -lopenblas -lm -o "$tmp/gemm"
cc -O2 bench/ukernel.c -o "$tmp/ukernel"
peak=$("$tmp/peak")
ukernel=$("$tmp/ukernel")
table=$(OPENBLAS_NUM_THREADS=1 "$tmp/gemm" "$T")
gf=$(echo "$peak" | sed -E 's/.*peak ([0-9.]+) GFLOP.*/\1/')
{
    echo "# GEMM: pfvm's float matrix engine against the FMA peak and OpenBLAS, one core"
    echo
    echo "Made by \`sh bench/gemm.sh\` (SECONDS_PER=$T) on $(date -u +%Y-%m-%d), $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')."
    echo "Peak (bench/peak.c, best of 60 short rounds): $peak."
    echo "Register tiles alone (bench/ukernel.c, data in L1, GFLOP/s): $ukernel."
    echo "pfvm and OpenBLAS (OPENBLAS_NUM_THREADS=1, cblas_sgemm) alternate; each column is the fastest run."
    echo "% of peak is pfvm's GFLOP/s over the measured peak. The machine is shared (its load moves"
    echo "absolute numbers by up to 2x; the alternating ratio holds better)."
    echo
    echo "$table" | awk -v pk="$gf" -F'|' 'NR == 1 {print $0 " % of peak |"; next} NR == 2 {print $0 " ---: |"; next}
        {printf "%s %.0f%% |\n", $0, 100 * $6 / pk}'
} >bench/gemm.md
cat bench/gemm.md
