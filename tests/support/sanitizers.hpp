// Whether this test is compiled with AddressSanitizer, under GCC (__SANITIZE_ADDRESS__) or
// clang (__has_feature(address_sanitizer); the `asan` preset builds with clang): a test that
// needs an address-space limit (ulimit -v) skips itself there, since ASan reserves terabytes of
// address space for its shadow memory and an instrumented program cannot start under one.
#pragma once

#if defined(__SANITIZE_ADDRESS__)
#define SYNCSCOPE_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SYNCSCOPE_TEST_ASAN 1
#endif
#endif
