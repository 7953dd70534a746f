// The MoE routing fix's LibTorch code (src/torch_step.cpp) at component level on CPU: the
// device-side counts and offsets equal the CPU reference, and every variant's dispatch equals
// a dense per-token reference, with the baseline's and Unsloth's host reads counted. The whole
// step with every variant: tests/kernels/test_reference_step.cpp.
#include <gtest/gtest.h>

#include <cstring>

#include "syncscope/fixes/moe_routing/reference.hpp"
#include "syncscope/fixes/moe_routing/torch_step.hpp"
#include "syncscope/kernels/step.hpp"
#include "torch/internal.hpp"

namespace syncscope::fixes::moe_routing {
namespace {

TEST(MoeRoutingTorch, CountsAndDispatchOfEveryVariantAgree) {
  kernels::detail::StandaloneCtx standalone;
  kernels::detail::Ctx& ctx = standalone.ctx;
  const kernels::SyncCounts& syncs = standalone.syncs;
  torch::manual_seed(11);
  const std::int64_t T = 37, H = 16, I = 8, k = 2;
  const int E = 5;
  const torch::Tensor logits = torch::randn({T, E});
  auto top = torch::topk(logits, k, -1);
  const torch::Tensor ids = std::get<1>(top);
  const torch::Tensor weights = torch::softmax(std::get<0>(top), -1);
  std::vector<std::int64_t> flat(static_cast<std::size_t>(T * k));
  std::memcpy(flat.data(), ids.contiguous().data_ptr<std::int64_t>(), flat.size() * 8);
  const fixes::moe_routing::Routing ref = fixes::moe_routing::route(flat, E);
  auto [counts, offsets] = expert_counts_offsets(ids.reshape({-1}), E, ctx);
  EXPECT_EQ(std::vector<std::int64_t>(counts.data_ptr<std::int64_t>(), counts.data_ptr<std::int64_t>() + E),
            ref.counts);
  EXPECT_EQ(std::vector<std::int64_t>(offsets.data_ptr<std::int64_t>(), offsets.data_ptr<std::int64_t>() + E + 1),
            ref.offsets);
  const torch::Tensor x = torch::randn({T, H});
  kernels::detail::ExpertWeights w{torch::randn({E, H, I}), torch::randn({E, H, I}), torch::randn({E, I, H})};
  // Dense reference: every token through its k experts, weighted.
  torch::Tensor expect = torch::zeros({T, H});
  for (std::int64_t t = 0; t < T; ++t)
    for (std::int64_t s = 0; s < k; ++s) {
      const auto e = ids[t][s].item<std::int64_t>();
      const torch::Tensor xt = x[t].unsqueeze(0);
      expect[t] += ((torch::silu(xt.mm(w.gate[e])) * xt.mm(w.up[e])).mm(w.down[e]) * weights[t][s]).squeeze(0);
    }
  for (const std::string& v : fix_spec(kFix).variants) {
    const torch::Tensor got = moe_experts(to_variant(v), x, ids, weights, w, ctx);
    EXPECT_TRUE(torch::allclose(got, expect, 1e-5, 1e-4))
        << v << " max diff " << (got - expect).abs().max().item<float>();
  }
  EXPECT_EQ(syncs.of(kFix), E + 3);  // loop: E nonzero reads; sorted: bincount's two + tolist; device: none
}

}  // namespace
}  // namespace syncscope::fixes::moe_routing
