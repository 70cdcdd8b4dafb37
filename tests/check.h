#pragma once
// A minimal test helper: CHECK records a failure with its line and carries on; main returns
// test_exit_code() so that the test fails if any CHECK did.
#include <cstdio>

inline int& test_failures() {
    static int failures = 0;
    return failures;
}
#define CHECK(cond)                                                                      \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            std::fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
            ++test_failures();                                                           \
        }                                                                                \
    } while (0)
inline int test_exit_code() {
    if (test_failures()) std::fprintf(stderr, "%d check(s) failed\n", test_failures());
    else std::printf("all checks passed\n");
    return test_failures() ? 1 : 0;
}
