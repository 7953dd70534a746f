// The packing fix's LibTorch code (src/torch_step.cpp) at component level on CPU: the
// attention mask of every variant is the same tensor, windows included, and only the
// baseline reads back. The whole step with every variant: tests/kernels/test_reference_step.cpp.
#include <gtest/gtest.h>

#include "syncscope/fixes/packing/torch_step.hpp"
#include "syncscope/kernels/step.hpp"
#include "torch/internal.hpp"

namespace syncscope::fixes::packing {
namespace {

// Component level: the packed mask of every variant is the same tensor, including windows.
TEST(PackingTorch, MasksOfEveryVariantAgreeExactly) {
  kernels::detail::StandaloneCtx standalone;
  kernels::detail::Ctx& ctx = standalone.ctx;
  const kernels::SyncCounts& syncs = standalone.syncs;
  const kernels::detail::HostBatch host = kernels::detail::pack_batch({5, 40, 1, 50}, 256, 1, false);
  const kernels::detail::PackedBatch batch = kernels::detail::upload(host, ctx, 1);
  for (int window : {0, 8}) {
    PackingMetadata rebuild(Variant::Rebuild), device(Variant::Device);
    const torch::Tensor a = rebuild.mask(batch, window, ctx), b = device.mask(batch, window, ctx);
    EXPECT_TRUE(torch::equal(a, b)) << "window " << window;
    EXPECT_EQ(rebuild.cu_seqlens(), device.cu_seqlens());
    EXPECT_EQ(rebuild.max_seqlen(), 50);
    EXPECT_EQ(device.max_seqlen(), 50);
  }
  // rebuild: max, sum and tolist per mask; device: none (CPU reference, no read back).
  EXPECT_EQ(syncs.of(kFix), 2 * 3);
  EXPECT_EQ(syncs.total(), syncs.of(kFix));
}

}  // namespace
}  // namespace syncscope::fixes::packing
