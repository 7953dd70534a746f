// syncscope::Tracer and the NVTX helpers as a program uses them, on a machine without a GPU:
// start() fails with a CudaError naming the CUPTI call, leaves no session behind, and the
// tracer stays usable. (With a GPU, tests/device/test_sync_counts.cpp covers tracing.)
#include <gtest/gtest.h>

#include "syncscope/core/error.hpp"
#include "syncscope/tracer/nvtx.hpp"
#include "syncscope/tracer/tracer.hpp"

namespace syncscope {
namespace {

TEST(TracerApi, WithoutAGpuStartFailsCleanly) {
  std::string why;
  if (cuda_device_available(&why)) GTEST_SKIP() << "a GPU is present: covered by the device tests";
  EXPECT_FALSE(why.empty());
  Tracer t;
  EXPECT_FALSE(t.running());
  try {
    t.start();
    FAIL() << "start() succeeded without a GPU";
  } catch (const CudaError& e) {
    EXPECT_NE(std::string(e.what()).find("cupti"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("no CUDA device"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(t.running());
  // No session was left open: a second tracer fails the same way, not as "already active".
  Tracer u;
  EXPECT_THROW(u.start(), CudaError);
  t.stop();  // a no-op
  EXPECT_EQ(t.take().record_count(), 0u);
  EXPECT_GT(cupti_version(), 0u);  // cuptiGetVersion works without a GPU
}

TEST(TracerApi, NvtxHelpersAreRealInCudaBuilds) {
  static_assert(nvtx::kEnabled, "syncscope_tracer defines SYNCSCOPE_HAVE_NVTX");
  // Without an attached tool the calls return at once (NVTX's loader finds no injection
  // but this library's static one, which hands them to CUPTI).
  for (int i = 0; i < 3; ++i) {
    nvtx::ScopedRange step("step", i);
    nvtx::ScopedRange layer("layer", 100 + i);
  }
  SUCCEED();
}

}  // namespace
}  // namespace syncscope
