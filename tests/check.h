/* A tiny test harness: CHECK(cond) records a failure with file:line and
 * goes on; CHECK_END() prints "N passed, M failed" and gives the exit code. */
#ifndef PFVM_TEST_CHECK_H
#define PFVM_TEST_CHECK_H

#include <stdio.h>

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

#define CHECK_END()                                                          \
    (printf("%d passed, %d failed\n", check_passed, check_failed), check_failed ? 1 : 0)

#endif
