#!/bin/sh
# Portable messages: newlib (nano and full) prints %zu, and newlib-nano
# %lld, literally. pfvm's own formatter (pfvm__snprintf/pfvm__vsnprintf,
# src/base/base.c, behind every status message) formats the 64-bit and size
# conversions itself, so sources may use them there; this check fails when
# one reaches the C library: a call of printf, fprintf, sprintf, snprintf or
# their v-forms (statement followed to its ';') whose format has an ll, z, j
# or t conversion. Also checks that the formatter prints them right (a
# tiny program over pfvm.h). One line per problem, then "N passed, M failed".
cd "$(dirname "$0")/.."
pass=0 fail=0
bad=$(for f in src/*/*.c src/*/*.h; do
    awk -v file="$f" '
    function check(text, line) {
        if (text ~ /%[-+ #0-9.*]*(ll|z|j|t)[diouxX]/) print file ":" line ": " substr(text, 1, 120)
    }
    {
        if (!on && $0 ~ /(^|[^_A-Za-z0-9])v?(s|sn|f)?printf[ \t]*\(/) { on = 1; text = ""; start = FNR }
        if (on) {
            text = text $0
            if ($0 ~ /;[ \t]*(\/\/.*|\/\*.*)?$/) { check(text, start); on = 0 }
        }
    }' "$f"
done)
if [ -n "$bad" ]; then
    echo "FAIL formats: 64-bit or size conversions passed to the C library's printf family:"
    echo "$bad"
    fail=$((fail + 1))
else
    echo "ok   formats: no ll/z/j/t conversion reaches the C library"
    pass=$((pass + 1))
fi
B=${BUILD:-build}
mkdir -p "$B"
cat >"$B/formats_check.c" <<'C'
#define PFVM_IMPLEMENTATION
#include "pfvm.h"
#include <stdio.h>
#include <string.h>
#include <stdint.h>
static int bad;
static void want(const char *got, const char *exp)
{
    if (strcmp(got, exp)) {
        printf("FAIL formats: got \"%s\", want \"%s\"\n", got, exp);
        bad++;
    }
}
int main(void)
{
    char b[64];
    pfvm_status st;
    pfvm_status_set(&st, PFVM_ERR_INVALID, "dim %lld of %zu [%5lld|%-4llu|%04lld] %s %d %.2f %x%%", (long long)-9000000000LL,
                    (size_t)7, (long long)-3, (unsigned long long)12, (long long)-5, "s", 42, 1.5, 255u);
    want(st.msg, "dim -9000000000 of 7 [   -3|12  |-005] s 42 1.50 ff%");
    pfvm_status_set(&st, PFVM_ERR_INVALID, "%llx %zd %jd %.3s|%*d|%s", 0xabcULL, (size_t)-2, (intmax_t)INT64_MIN, "abcdef", 4, 7, "end");
    want(st.msg, "abc -2 -9223372036854775808 abc|   7|end");
    pfvm_status_set(&st, PFVM_ERR_INVALID, "%llu", (unsigned long long)UINT64_MAX);
    want(st.msg, "18446744073709551615");
    (void)b;
    printf("%s\n", bad ? "" : "ok   formats: pfvm's formatter prints ll, z, j conversions");
    return bad != 0;
}
C
if ${CC:-cc} -std=c99 -I. -o "$B/formats_check" "$B/formats_check.c" -lm 2>"$B/formats_check.log" && "$B/formats_check"; then
    pass=$((pass + 1))
else
    head -n 5 "$B/formats_check.log"
    fail=$((fail + 1))
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
