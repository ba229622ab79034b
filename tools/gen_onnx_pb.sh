#!/bin/sh
# Generates src/onnx/onnx.pb.{h,c} from onnx.proto and onnx-data.proto with Debian's nanopb
# generator. pfvm's reader and writer walk the wire format with nanopb's
# stream functions and the generated field tags (onnx_<Msg>_<field>_tag), so
# every field is a callback (no fixed-size arrays, no recursion limits).
#
#   sh tools/gen_onnx_pb.sh [DIR holding onnx.proto and onnx-data.proto]
set -eu
cd "$(dirname "$0")/.."
DIR=${1:-/usr/lib/python3/dist-packages/onnx}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp "$DIR/onnx.proto" "$DIR/onnx-data.proto" "$tmp/"
# onnx-data.proto (SequenceProto, OptionalProto, MapProto) imports onnx/onnx.proto
sed -i -E 's|import "onnx/onnx(-ml)?.proto";|import "onnx.proto";|' "$tmp/onnx-data.proto"
printf '* type:FT_CALLBACK\n' >"$tmp/onnx.options"
cp "$tmp/onnx.options" "$tmp/onnx-data.options"
(cd "$tmp" && nanopb_generator.py -q onnx.proto onnx-data.proto)
# one header for the amalgamation: the data messages after the model ones
sed '/#include "onnx.pb.h"/d' "$tmp/onnx-data.pb.h" >"$tmp/data.h"
sed '/#include "onnx-data.pb.h"/d' "$tmp/onnx-data.pb.c" >"$tmp/data.c"
cat "$tmp/onnx.pb.h" "$tmp/data.h" >src/onnx/onnx.pb.h
{ cat "$tmp/onnx.pb.c"; sed '1,/^#endif/{/^#if PB_PROTO_HEADER_VERSION/,/^#endif/d}' "$tmp/data.c"; } >src/onnx/onnx.pb.c
echo "wrote src/onnx/onnx.pb.h src/onnx/onnx.pb.c"
