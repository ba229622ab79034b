#!/bin/sh
# Regenerates the README's operator table (from the registry, via
# `interp ops`) and conformance numbers (from `interp test` over Debian's
# libonnx-testdata). Run after `make`.
set -eu
cd "$(dirname "$0")/.."
DATA=${PFVM_TESTDATA:-/usr/share/libonnx-testdata/data}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
./build/interp ops >"$tmp/ops"
{
    echo "| suite | passed | failed | known failures | total |"
    echo "| --- | --- | --- | --- | --- |"
    for s in node pytorch-converted pytorch-operator simple; do
        line=$(./build/interp test --known tests/known_failures.txt "$DATA/$s" | tail -n 1)
        p=$(echo "$line" | sed -E 's/^([0-9]+) passed.*/\1/')
        f=$(echo "$line" | sed -E 's/^[0-9]+ passed, ([0-9]+) failed.*/\1/')
        k=$(echo "$line" | sed -E 's/.*, ([0-9]+) skipped.*/\1/')
        echo "| $s | $p | $f | $k | $((p + f + k)) |"
    done
} >"$tmp/conf"
python3 - "$tmp/ops" "$tmp/conf" <<'PY'
import re, sys
ops, conf = open(sys.argv[1]).read(), open(sys.argv[2]).read()
text = open("README.md").read()
def put(text, tag, body):
    return re.sub(r"<!-- %s -->.*?<!-- /%s -->" % (tag, tag),
                  lambda m: "<!-- %s -->\n%s<!-- /%s -->" % (tag, body, tag), text, flags=re.S)
text = put(text, "ops", ops)
text = put(text, "conformance", conf)
open("README.md", "w").write(text)
PY
echo "README.md updated"
