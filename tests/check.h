/* A tiny test harness: CHECK(cond) records a failure with file:line and
 * goes on; CHECK_END() prints "N passed, M failed" and gives the exit code. */
#ifndef PFVM_TEST_CHECK_H
#define PFVM_TEST_CHECK_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

static int check_passed, check_failed;

#define CHECK(cond)                                                          \
    do {                                                                     \
        if (cond) {                                                          \
            check_passed++;                                                  \
        } else {                                                             \
            check_failed++;                                                  \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                    \
    } while (0)

#define CHECK_MSG(cond, ...)                                                 \
    do {                                                                     \
        if (cond) {                                                          \
            check_passed++;                                                  \
        } else {                                                             \
            check_failed++;                                                  \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                    \
            fprintf(stderr, "\n");                                           \
        }                                                                    \
    } while (0)

/* How many floats lie between a and b (0: the same bits; +0 and -0 one
 * apart): for results allowed a few ulp from a reference. */
static inline int64_t check_ulp_apart(float a, float b)
{
    int32_t ia, ib;
    memcpy(&ia, &a, sizeof ia);
    memcpy(&ib, &b, sizeof ib);
    ia = ia < 0 ? INT32_MIN - ia : ia; /* the floats' order as integers */
    ib = ib < 0 ? INT32_MIN - ib : ib;
    return ia > ib ? (int64_t)ia - ib : (int64_t)ib - ia;
}

#define CHECK_END()                                                          \
    (printf("%d passed, %d failed\n", check_passed, check_failed), check_failed ? 1 : 0)

#endif
