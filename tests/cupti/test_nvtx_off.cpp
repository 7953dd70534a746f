// syncscope/tracer/nvtx.hpp in a build without NVTX (SYNCSCOPE_HAVE_NVTX undefined, as in
// CPU-only builds): every helper compiles and does nothing.
#include <gtest/gtest.h>

#include "syncscope/tracer/nvtx.hpp"

TEST(NvtxHelpers, NoOpsWithoutNvtx) {
  static_assert(!syncscope::nvtx::kEnabled, "this test is built without SYNCSCOPE_HAVE_NVTX");
  {
    syncscope::nvtx::ScopedRange step("step", 3);
    syncscope::nvtx::ScopedRange fwd("forward");
    syncscope::nvtx::push("layer", 7);
    syncscope::nvtx::pop();
  }
  SUCCEED();
}
