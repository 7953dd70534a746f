// Probes for the test harness (tests/CMakeLists.txt, syncscope_add_gtest): one test skips
// for want of a GPU, one for another reason, one passes. harness_skips (check_skips.cmake)
// runs them through CTest and asserts CTest reports the first two as skipped, the third as
// passed. They carry the label `harness_probe`; the presets leave them out of normal runs.
#include <gtest/gtest.h>

TEST(HarnessSkipProbe, NoCudaDevice) { GTEST_SKIP() << "skipped: no CUDA device (probe)"; }

TEST(HarnessSkipProbe, OtherReason) { GTEST_SKIP() << "skipped: chromium not installed (probe)"; }

TEST(HarnessSkipProbe, Passes) { EXPECT_EQ(1 + 1, 2); }
