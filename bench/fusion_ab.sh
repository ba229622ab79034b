#!/bin/sh
# Before/after for the fusion benchmark: two interp builds, each model run
# with the passes off and on, alternating builds run by run (R rounds of
# `interp bench -n N`) so that both see the same machine load. Prints
# markdown rows: model | A off | A on | off/on | B off | B on | off/on,
# medians of the R medians, minimums in parentheses.
#
#   sh bench/fusion_ab.sh OLD/interp build/interp gelu swish chain_1 chain_8
#   R=5 N=20 D=bench/models/fusion_64 sh bench/fusion_ab.sh A B chain_8
#
# Models come from bench/make_fusion_models.py (bench/fusion.sh makes them).
set -eu
A=$1
B=$2
shift 2
R=${R:-3}
N=${N:-20}
D=${D:-bench/models/fusion_4096}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
one() {
    "$1" bench "$D/$2.onnx" $3 -n "$N" | sed -E 's/^median ([0-9.]+) ms.*min ([0-9.]+).*/\1 \2/' >>"$4"
}
stat() {
    sort -n "$1" | awk '{ med[NR] = $1; if (NR == 1 || $2 < mn) mn = $2 } END { printf "%.3f %.3f", med[int((NR + 1) / 2)], mn }'
}
for m in "$@"; do
    : >"$tmp/a_off"; : >"$tmp/a_on"; : >"$tmp/b_off"; : >"$tmp/b_on"
    r=0
    while [ $r -lt "$R" ]; do
        one "$A" "$m" --no-opt "$tmp/a_off"
        one "$B" "$m" --no-opt "$tmp/b_off"
        one "$A" "$m" "" "$tmp/a_on"
        one "$B" "$m" "" "$tmp/b_on"
        r=$((r + 1))
    done
    echo "$m $(stat "$tmp/a_off") $(stat "$tmp/a_on") $(stat "$tmp/b_off") $(stat "$tmp/b_on")" | awk '{
        printf "| %s | %.3f (%.3f) | %.3f (%.3f) | %.2f | %.3f (%.3f) | %.3f (%.3f) | %.2f |\n",
            $1, $2, $3, $4, $5, $2 / $4, $6, $7, $8, $9, $6 / $8 }'
done
