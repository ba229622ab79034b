#!/bin/sh
# Fetches nanopb's runtime sources (pb_common.c, pb_decode.c, pb_encode.c and
# their headers) for cross builds, the way a user would: Debian's `nanopb`
# package ships the generator and the host library only, so this takes the
# runtime from Debian's source package of the same version (`apt-get source
# nanopb`; enables deb-src in /etc/apt/sources.list.d/debian.sources if
# needed). The files are cached, never committed: the result lands in
#
#   DIR (default build/nanopb-src)  holding pb.h pb_*.h pb_*.c  (zlib licence,
#                                   LICENSE.txt copied beside them)
#
#   sh tools/fetch_nanopb.sh [DIR]
#
# Idempotent: does nothing when DIR already holds the sources. The version is
# the installed nanopb's (its headers are what pfvm_onnx.h's descriptors were
# generated against); the script fails if the source package's differs.
set -eu
cd "$(dirname "$0")/.."
DIR=${1:-build/nanopb-src}
if [ -f "$DIR/pb_decode.c" ] && [ -f "$DIR/pb_encode.c" ] && [ -f "$DIR/pb_common.c" ]; then
    exit 0
fi
SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
want=$(dpkg-query -W -f '${Version}' nanopb 2>/dev/null || true)
if ! command -v dpkg-source >/dev/null; then
    $SUDO apt-get install -y -q dpkg-dev >/dev/null
fi
work="$DIR.tmp"
rm -rf "$work"
mkdir -p "$work"
if ! (cd "$work" && apt-get source -q --download-only "nanopb${want:+=$want}" >/dev/null 2>&1); then
    src=/etc/apt/sources.list.d/debian.sources
    if [ -f "$src" ] && ! grep -q '^Types:.*deb-src' "$src"; then
        echo "fetch_nanopb: enabling deb-src in $src"
        $SUDO sed -i 's/^Types: deb$/Types: deb deb-src/' "$src"
    fi
    $SUDO apt-get update -q >/dev/null
    (cd "$work" && apt-get source -q --download-only "nanopb${want:+=$want}" >/dev/null)
fi
(cd "$work" && dpkg-source --no-check -x ./*.dsc tree >/dev/null)
mkdir -p "$DIR"
for f in pb.h pb_common.h pb_common.c pb_decode.h pb_decode.c pb_encode.h pb_encode.c LICENSE.txt; do
    cp "$work/tree/$f" "$DIR/$f"
done
rm -rf "$work"
echo "fetch_nanopb: nanopb ${want:-?} runtime in $DIR"
