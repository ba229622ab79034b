#!/bin/sh
# Packaging: `make install` into a temporary prefix, then a consumer
# (tests/consumer: app.c, and impl.c with PFVM_IMPLEMENTATION) built with
# pkg-config, with CMake's find_package(pfvm), with FetchContent of this
# source tree, and `cmake --install` of CMakeLists.txt; library.json
# (PlatformIO) and zephyr/module.yml against schemas. Prints
# "N passed, M failed".
set -u
cd "$(dirname "$0")/.."
ROOT=$(pwd)
CC=${CC:-cc}
pass=0
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }
expected="pfvm $(sed -n 's/^#define PFVM_VERSION_STRING "\(.*\)"/\1/p' src/base/base.h): 0 2 0 4"
check_run() { # label program
    got=$("$2" 2>&1)
    if [ "$got" = "$expected" ]; then ok; else bad "$1: got '$got', want '$expected'"; fi
}

if make -s install PREFIX="$tmp/prefix" >"$tmp/log" 2>&1; then ok; else bad "make install"; cat "$tmp/log"; fi

# pkg-config
if command -v pkg-config >/dev/null; then
    export PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig"
    if $CC -std=c99 -Wall -Wextra -pedantic -Werror $(pkg-config --cflags pfvm-onnx) tests/consumer/app.c \
        tests/consumer/impl.c $(pkg-config --libs pfvm-onnx) -o "$tmp/app_pc" >"$tmp/log" 2>&1; then
        check_run pkg-config "$tmp/app_pc"
    else
        bad "pkg-config consumer"; head -n 20 "$tmp/log"
    fi
    unset PKG_CONFIG_PATH
else
    bad "pkg-config not installed"
fi

if command -v cmake >/dev/null; then
    # find_package(pfvm) of the installed package
    mkdir -p "$tmp/cm"
    cat > "$tmp/cm/CMakeLists.txt" <<C
cmake_minimum_required(VERSION 3.14)
project(consumer C)
find_package(pfvm 0.1 REQUIRED)
add_executable(app $ROOT/tests/consumer/app.c $ROOT/tests/consumer/impl.c)
target_link_libraries(app PRIVATE pfvm::onnx)
C
    if cmake -S "$tmp/cm" -B "$tmp/cm/b" -DCMAKE_PREFIX_PATH="$tmp/prefix" >"$tmp/log" 2>&1 &&
        cmake --build "$tmp/cm/b" >>"$tmp/log" 2>&1; then
        check_run find_package "$tmp/cm/b/app"
    else
        bad "find_package(pfvm) consumer"; tail -n 20 "$tmp/log"
    fi
    # FetchContent of this tree
    mkdir -p "$tmp/fc"
    cat > "$tmp/fc/CMakeLists.txt" <<C
cmake_minimum_required(VERSION 3.14)
project(consumer C)
include(FetchContent)
FetchContent_Declare(pfvm SOURCE_DIR $ROOT)
FetchContent_MakeAvailable(pfvm)
add_executable(app $ROOT/tests/consumer/app.c $ROOT/tests/consumer/impl.c)
target_link_libraries(app PRIVATE pfvm::onnx)
C
    if cmake -S "$tmp/fc" -B "$tmp/fc/b" >"$tmp/log" 2>&1 && cmake --build "$tmp/fc/b" >>"$tmp/log" 2>&1; then
        check_run FetchContent "$tmp/fc/b/app"
    else
        bad "FetchContent consumer"; tail -n 20 "$tmp/log"
    fi
    # cmake --install installs what make install does
    if cmake -S . -B "$tmp/ci" -DCMAKE_INSTALL_PREFIX="$tmp/prefix2" >"$tmp/log" 2>&1 &&
        cmake --install "$tmp/ci" >>"$tmp/log" 2>&1 &&
        (cd "$tmp/prefix" && find . -type f | sort) > "$tmp/a" &&
        (cd "$tmp/prefix2" && find . -type f | sort) > "$tmp/b" && cmp -s "$tmp/a" "$tmp/b" &&
        cmp -s "$tmp/prefix/lib/cmake/pfvm/pfvmConfigVersion.cmake" "$tmp/prefix2/lib/cmake/pfvm/pfvmConfigVersion.cmake"; then
        ok
    else
        bad "cmake --install differs from make install"; tail -n 20 "$tmp/log"; diff "$tmp/a" "$tmp/b"
    fi
else
    bad "cmake not installed"
fi

# PlatformIO's library.json and the Zephyr module, against the schemas in
# tests/schemas (pio and west are not installed here), and their files exist
if python3 - <<'PY' >"$tmp/log" 2>&1
import json, os, re, sys
import yaml


def validate(x, sch, where="$"):
    """The subset of JSON Schema that tests/schemas uses."""
    t = sch.get("type")
    types = {"object": dict, "array": list, "string": str, "boolean": bool}
    if t and not isinstance(x, types[t]):
        raise AssertionError("%s: not a %s" % (where, t))
    if "anyOf" in sch:
        errs = []
        for alt in sch["anyOf"]:
            try:
                return validate(x, alt, where)
            except AssertionError as e:
                errs.append(str(e))
        raise AssertionError("; ".join(errs))
    if isinstance(x, str):
        if len(x) > sch.get("maxLength", len(x)) or ("pattern" in sch and not re.search(sch["pattern"], x)):
            raise AssertionError("%s: %r does not fit" % (where, x))
    if isinstance(x, list):
        for i, e in enumerate(x):
            validate(e, sch.get("items", {}), "%s[%d]" % (where, i))
    if isinstance(x, dict):
        for k in sch.get("required", []):
            if k not in x:
                raise AssertionError("%s: %s missing" % (where, k))
        props = sch.get("properties", {})
        for k, v in x.items():
            if k in props:
                validate(v, props[k], where + "." + k)
            elif sch.get("additionalProperties") is False:
                raise AssertionError("%s: unknown field %s" % (where, k))


ver = re.search(r'#define PFVM_VERSION_STRING "(.*)"', open("src/base/base.h").read()).group(1)
lib = json.load(open("library.json"))
validate(lib, json.load(open("tests/schemas/platformio_library.json")))
assert lib["version"] == ver, "library.json version %s, pfvm %s" % (lib["version"], ver)
for f in lib["headers"] + lib["export"]["include"] + lib.get("examples", []):
    assert os.path.exists(f), f
mod = yaml.safe_load(open("zephyr/module.yml"))
validate(mod, json.load(open("tests/schemas/zephyr_module.json")))
assert os.path.exists(os.path.join(mod["build"]["cmake"], "CMakeLists.txt"))
assert os.path.exists(mod["build"]["kconfig"])
PY
then ok; else bad "library.json / zephyr/module.yml"; cat "$tmp/log"; fi

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
