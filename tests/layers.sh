#!/bin/sh
# Layering: each lower set of src/ modules links without the layers above
# it (its objects, relocated together, leave no pfvm_/pfvm__/stbds_ symbol
# undefined), and no source file includes a header of a higher layer.
# Prints "N passed, M failed".
#
#   sh tests/layers.sh [BUILD_DIR]      (after make: uses BUILD_DIR/src/*/*.o)
#
# The order (docs/ARCHITECTURE.md, "Layering"):
#   base -> sym -> ir -> opi+ops -> shape -> plan -> passes -> exec -> quantize -> onnx, accel
# opi (the operator interface) and ops (the operators and their registry)
# link as one set: opi's helpers look operators up in the registry. What
# an operator hook needs of a higher layer comes through its context's
# services (src/opi/opi.h), never through a call or an #include upward.
set -u
cd "$(dirname "$0")/.."
BUILD=${1:-build}
LAYERS="base sym ir opi ops shape plan passes exec quantize onnx accel"
pass=0
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }

undefined() { # layers...
    objs=
    for l in "$@"; do
        objs="$objs $(ls "$BUILD"/src/"$l"/*.o)"
    done
    ld -r -o "$tmp/layer.o" $objs || return 1
    nm -u "$tmp/layer.o" | awk '{print $2}' | grep -E '^(pfvm|stbds)' | LC_ALL=C sort -u
}

# every module folder of src/ (with code) is in LAYERS
for d in src/*/; do
    l=$(basename "$d")
    ls "$d"*.c > /dev/null 2>&1 || continue
    case " $LAYERS " in
    *" $l "*) ok ;;
    *) bad "src/$l is not in this script's layer order" ;;
    esac
done

# link sets: base, base+sym, ..., everything
set=
for l in $LAYERS; do
    set="$set $l"
    [ "$l" = opi ] && continue # links with ops
    u=$(undefined $set)
    if [ $? -eq 0 ] && [ -z "$u" ]; then
        ok
    else
        bad "[$set ] does not link alone:" $(echo "$u" | head -n 10)
    fi
done

# accel (pfvm_accel.h) sits on exec beside onnx: it links without onnx too
u=$(undefined base sym ir opi ops shape plan passes exec accel)
if [ $? -eq 0 ] && [ -z "$u" ]; then ok; else bad "[accel without onnx] does not link alone:" $(echo "$u" | head -n 10); fi

# includes: a file of layer L includes headers of L or lower layers only
rank() { # layer -> position in LAYERS
    i=0
    for x in $LAYERS; do
        [ "$x" = "$1" ] && { echo $i; return; }
        i=$((i + 1))
    done
    echo 99
}
for f in src/*/*.c src/*/*.h; do
    l=$(basename "$(dirname "$f")")
    [ "$l" = doc ] && continue
    r=$(rank "$l")
    for inc in $(sed -n 's|^[ \t]*#[ \t]*include[ \t]*"\.\./\([a-z_]*\)/.*|\1|p' "$f"); do
        ri=$(rank "$inc")
        if [ "$ri" -gt "$r" ] && ! { [ "$l" = opi ] && [ "$inc" = ops ]; }; then
            bad "$f (layer $l) includes a header of the higher layer $inc"
        fi
    done
done
ok

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
