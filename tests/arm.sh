#!/bin/sh
# Portability check: the core (IR, planner, interpreter, ONNX reader) must
# compile for a Cortex-M4 with Debian's arm-none-eabi-gcc, without stdio.
set -eu
cd "$(dirname "$0")/.."
CC=arm-none-eabi-gcc
if ! command -v $CC >/dev/null; then
    echo "arm: $CC not installed (apt-get install gcc-arm-none-eabi libnewlib-arm-none-eabi)"
    exit 1
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cat > "$out/fw.c" <<'C'
#define PFVM_IMPLEMENTATION
#define PFVM_NO_STDIO
#include "pfvm_onnx.h"
C
$CC -std=c99 -Wall -Wextra -pedantic -Werror -Os -mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16 \
    -ffunction-sections -fdata-sections -I. -idirafter /usr/include -c "$out/fw.c" -o "$out/fw.o"
echo "arm: core compiles for cortex-m4 ($(arm-none-eabi-size "$out/fw.o" | tail -n 1 | awk '{print $1+$2 " bytes text+data"}'))"
