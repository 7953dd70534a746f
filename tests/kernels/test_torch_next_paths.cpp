// The two LibTorch paths Debian 12's LibTorch 1.13 lacks, checked on CPU where a newer
// LibTorch has them (`scripts/test torch-next`: LibTorch 2.14, which has CPU kernels for
// both); with an older one each test reports skipped.
// - SDPA: at::scaled_dot_product_attention with the arguments model.cpp gives it (q, k, v
//   [1, heads, T, d], the packed additive mask [1, 1, T, T] from fixes/packing's
//   PackingMetadata) equals the
//   explicit matmul-mask-softmax-matmul form LibTorch 1.x runs, forward and gradients.
// - Grouped GEMM: grouped_mm (at::_grouped_mm with our backward, fixes/moe_routing's
//   src/torch_grouped_gemm.cpp) equals
//   per-group matmuls, forward and gradients, including a gradient with stride 0 (what
//   y.sum() gives), an empty group, and the capacity-padded fallbacks; and the MoE "device"
//   variant gives the same output and gradients grouped as padded. bf16, as on the GPU;
//   _grouped_mm's rules: 2-D x 3-D with int32 group ends, rows 16-byte aligned (dimensions
//   multiples of 8 in bf16).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "syncscope/fixes/moe_routing/torch_step.hpp"
#include "syncscope/fixes/packing/torch_step.hpp"
#include "syncscope/kernels/step.hpp"
#include "torch/internal.hpp"

namespace syncscope::kernels {
namespace {

#if TORCH_VERSION_MAJOR >= 2
constexpr bool kHaveSdpa = true;
#else
constexpr bool kHaveSdpa = false;
#endif

#if TORCH_VERSION_MAJOR >= 2
// Largest |a - b| over the largest |b|; infinite when either holds a NaN.
double rel_diff(const torch::Tensor& a, const torch::Tensor& b) {
  const torch::Tensor a32 = a.to(torch::kFloat32), b32 = b.to(torch::kFloat32);
  if (torch::isnan(a32).any().item<bool>() || torch::isnan(b32).any().item<bool>())
    return std::numeric_limits<double>::infinity();
  const double scale = b32.abs().max().item<double>();
  const double diff = (a32 - b32).abs().max().item<double>();
  return scale > 0 ? diff / scale : diff;
}

torch::Tensor explicit_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                 const torch::Tensor& mask) {
  // model.cpp's LibTorch 1.x form: softmax in fp32.
  const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(-1)));
  const torch::Tensor scores = torch::matmul(q, k.transpose(-2, -1)) * scale + mask;
  return torch::matmul(torch::softmax(scores.to(torch::kFloat32), -1).to(q.scalar_type()), v);
}

#endif

void check_sdpa(torch::ScalarType dtype, int window, double tolerance) {
#if TORCH_VERSION_MAJOR >= 2
  detail::StandaloneCtx standalone;
  detail::Ctx& ctx = standalone.ctx;
  ctx.dtype = dtype;
  const detail::HostBatch host = detail::pack_batch({20, 31, 9, 36}, 256, 3, false);
  const detail::PackedBatch batch = detail::upload(host, ctx, 1);
  fixes::packing::PackingMetadata meta(fixes::packing::Variant::Device);
  const torch::Tensor mask = meta.mask(batch, window, ctx);
  const std::int64_t T = batch.total, heads = 4, d = 16;
  ASSERT_EQ(mask.sizes(), torch::IntArrayRef({1, 1, T, T}));
  torch::manual_seed(5);
  const auto opts = torch::TensorOptions().dtype(dtype);
  const torch::Tensor q0 = torch::randn({1, heads, T, d}, opts), k0 = torch::randn({1, heads, T, d}, opts),
                      v0 = torch::randn({1, heads, T, d}, opts);
  auto run = [&](bool sdpa) {
    torch::Tensor q = q0.clone().requires_grad_(true), k = k0.clone().requires_grad_(true),
                  v = v0.clone().requires_grad_(true);
    const torch::Tensor o = sdpa ? at::scaled_dot_product_attention(q, k, v, mask) : explicit_attention(q, k, v, mask);
    (o.to(torch::kFloat32) * torch::linspace(-1, 1, o.numel()).view(o.sizes())).sum().backward();
    return std::vector<torch::Tensor>{o.detach(), q.grad(), k.grad(), v.grad()};
  };
  const auto got = run(true), want = run(false);
  const char* names[] = {"output", "dq", "dk", "dv"};
  for (std::size_t i = 0; i < got.size(); ++i)
    EXPECT_LE(rel_diff(got[i], want[i]), tolerance) << names[i] << " window " << window;
#else
  (void)dtype, (void)window, (void)tolerance;
#endif
}

TEST(TorchNextSdpa, MatchesTheExplicitFormWithThePackedMask) {
  if (!kHaveSdpa) GTEST_SKIP() << "skipped: LibTorch " << torch_version() << " has no SDPA (2.0 or later)";
  check_sdpa(torch::kFloat32, 0, 1e-5);
  check_sdpa(torch::kFloat32, 16, 1e-5);  // gpt-oss's sliding window
  // bf16: SDPA's CPU kernel and the explicit form round differently (8-bit mantissa).
  check_sdpa(torch::kBFloat16, 0, 3e-2);
}

#ifdef SYNCSCOPE_HAVE_GROUPED_MM
constexpr bool kHaveGroupedMm = true;
#else
constexpr bool kHaveGroupedMm = false;
#endif

#define SKIP_WITHOUT_GROUPED_MM()                                                                     \
  if (!kHaveGroupedMm)                                                                                \
  GTEST_SKIP() << "skipped: LibTorch " << torch_version() << " has no at::_grouped_mm (2.8 or later)" \
               << " or it is built out (SYNCSCOPE_ENABLE_GROUPED_MM=OFF)"

#ifdef SYNCSCOPE_HAVE_GROUPED_MM
struct GroupedCase {
  torch::Tensor a, b, ends;  // a [N, K] bf16, b [E, K, M] bf16, ends [E] int32
  std::vector<std::int64_t> host_ends;
  std::int64_t capacity = 0;
};

// Groups of 4, 0 (empty), 3 and 5 rows; K = 16, M = 8 (multiples of 8: 16-byte bf16 rows).
GroupedCase grouped_case() {
  torch::manual_seed(9);
  GroupedCase c;
  c.host_ends = {4, 4, 7, 12};
  const std::int64_t N = 12, K = 16, M = 8, E = 4;
  c.a = torch::randn({N, K}).to(torch::kBFloat16);
  c.b = torch::randn({E, K, M}).to(torch::kBFloat16);
  c.ends = torch::tensor(std::vector<std::int32_t>{4, 4, 7, 12}, torch::kInt32);
  c.capacity = N;
  return c;
}

// Per-group matmuls in fp32 from the bf16 inputs: output, dA and dB for the weight `gy`.
std::vector<torch::Tensor> reference(const GroupedCase& c, const torch::Tensor& gy) {
  torch::Tensor a = c.a.to(torch::kFloat32).requires_grad_(true), b = c.b.to(torch::kFloat32).requires_grad_(true);
  std::vector<torch::Tensor> parts;
  std::int64_t start = 0;
  for (std::size_t e = 0; e < c.host_ends.size(); ++e) {
    const std::int64_t n = c.host_ends[e] - start;
    parts.push_back(a.narrow(0, start, n).mm(b[static_cast<std::int64_t>(e)]));
    start = c.host_ends[e];
  }
  const torch::Tensor y = torch::cat(parts);
  (y * gy).sum().backward();
  return {y.detach(), a.grad(), b.grad()};
}

template <class F>
std::vector<torch::Tensor> run(const GroupedCase& c, const torch::Tensor& gy, F product) {
  torch::Tensor a = c.a.clone().requires_grad_(true), b = c.b.clone().requires_grad_(true);
  const torch::Tensor y = product(a, b);
  if (gy.defined()) (y.to(torch::kFloat32) * gy).sum().backward();
  else y.sum().backward();  // the gradient autograd hands back is expanded (stride 0)
  return {y.detach(), a.grad(), b.grad()};
}

void expect_close(const std::vector<torch::Tensor>& got, const std::vector<torch::Tensor>& want, const char* what) {
  // bf16 inputs, fp32 reference: one bf16 rounding of each output (2^-8 relative).
  const char* names[] = {"y", "dA", "dB"};
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_LE(rel_diff(got[i], want[i]), 1e-2) << what << " " << names[i];
}
#endif

TEST(TorchNextGroupedMm, ForwardAndBackwardEqualPerGroupMatmuls) {
  SKIP_WITHOUT_GROUPED_MM();
#ifdef SYNCSCOPE_HAVE_GROUPED_MM
  const GroupedCase c = grouped_case();
  const torch::Tensor gy = torch::randn({12, 8});
  const auto want = reference(c, gy);
  const std::uint64_t fallbacks = fixes::moe_routing::grouped_mm_backward_fallbacks();
  expect_close(run(c, gy, [&](auto& a, auto& b) { return fixes::moe_routing::grouped_mm(a, b, c.ends, c.capacity); }),
               want, "grouped_mm");
  // ATen's own autograd agrees (the formula torch_grouped_gemm.cpp follows).
  expect_close(run(c, gy, [&](auto& a, auto& b) { return at::_grouped_mm(a, b, c.ends); }), want, "at::_grouped_mm");
  EXPECT_EQ(fixes::moe_routing::grouped_mm_backward_fallbacks(), fallbacks)
      << "the grouped backward ran without its fallback";
#endif
}

TEST(TorchNextGroupedMm, AnExpandedGradientIsMadeContiguous) {
  SKIP_WITHOUT_GROUPED_MM();
#ifdef SYNCSCOPE_HAVE_GROUPED_MM
  // y.sum().backward() hands _grouped_mm's backward a stride-0 gradient, which its stride
  // rules refuse (docs/sources.md#grouped-mm); grouped_mm's backward copies it first.
  const GroupedCase c = grouped_case();
  const auto want = reference(c, torch::ones({12, 8}));
  const std::uint64_t fallbacks = fixes::moe_routing::grouped_mm_backward_fallbacks();
  expect_close(run(c, torch::Tensor(),
                   [&](auto& a, auto& b) { return fixes::moe_routing::grouped_mm(a, b, c.ends, c.capacity); }),
               want, "grouped_mm, y.sum()");
  EXPECT_EQ(fixes::moe_routing::grouped_mm_backward_fallbacks(), fallbacks);
#endif
}

TEST(TorchNextGroupedMm, PaddedFallbacksEqualTheGroupedProduct) {
  SKIP_WITHOUT_GROUPED_MM();
#ifdef SYNCSCOPE_HAVE_GROUPED_MM
  const GroupedCase c = grouped_case();
  const torch::Tensor gy = torch::randn({12, 8});
  const auto want = reference(c, gy);
  expect_close(run(c, gy,
                   [&](auto& a, auto& b) { return fixes::moe_routing::grouped_mm_padded(a, b, c.ends, c.capacity); }),
               want, "grouped_mm_padded");
  // The backward's own fallback (what runs when the grouped kernels refuse the gradient).
  const std::uint64_t fallbacks = fixes::moe_routing::grouped_mm_backward_fallbacks();
  fixes::moe_routing::force_grouped_mm_backward_fallback(true);
  const auto got =
      run(c, gy, [&](auto& a, auto& b) { return fixes::moe_routing::grouped_mm(a, b, c.ends, c.capacity); });
  fixes::moe_routing::force_grouped_mm_backward_fallback(false);
  expect_close(got, want, "grouped_mm, backward fallback");
  EXPECT_EQ(fixes::moe_routing::grouped_mm_backward_fallbacks(), fallbacks + 1);
#endif
}

TEST(TorchNextGroupedMm, MoeDeviceGroupedEqualsPadded) {
  SKIP_WITHOUT_GROUPED_MM();
#ifdef SYNCSCOPE_HAVE_GROUPED_MM
  torch::manual_seed(13);
  const std::int64_t T = 24, H = 16, I = 8, k = 2;
  const int E = 4;
  const torch::Tensor logits = torch::randn({T, E});
  auto top = torch::topk(logits, k, -1);
  const torch::Tensor ids = std::get<1>(top);
  const torch::Tensor weights = torch::softmax(std::get<0>(top), -1);
  const torch::Tensor x0 = torch::randn({T, H}).to(torch::kBFloat16);
  const torch::Tensor g0 = (torch::randn({E, H, I}) * 0.2).to(torch::kBFloat16),
                      u0 = (torch::randn({E, H, I}) * 0.2).to(torch::kBFloat16),
                      d0 = (torch::randn({E, I, H}) * 0.2).to(torch::kBFloat16);
  auto run_moe = [&](const char* gemm) {
    detail::StandaloneCtx standalone;
    detail::Ctx& ctx = standalone.ctx;
    const SyncCounts& syncs = standalone.syncs;
    ctx.dtype = torch::kBFloat16;
    ctx.fix_choices[fixes::moe_routing::kFix] = gemm;
    torch::Tensor x = x0.clone().requires_grad_(true);
    detail::ExpertWeights w{g0.clone().requires_grad_(true), u0.clone().requires_grad_(true),
                            d0.clone().requires_grad_(true)};
    const torch::Tensor out =
        fixes::moe_routing::moe_experts(fixes::moe_routing::Variant::Device, x, ids, weights, w, ctx);
    out.sum().backward();
    EXPECT_EQ(ctx.fix_choices[fixes::moe_routing::kFix], gemm) << "the grouped path fell back to padded";
    EXPECT_EQ(syncs.of(fixes::moe_routing::kFix), 0);
    return std::vector<torch::Tensor>{out.detach(), x.grad(), w.gate.grad(), w.up.grad(), w.down.grad()};
  };
  const auto grouped = run_moe("grouped"), padded = run_moe("padded");
  const char* names[] = {"out", "dx", "dgate", "dup", "ddown"};
  for (std::size_t i = 0; i < grouped.size(); ++i) EXPECT_LE(rel_diff(grouped[i], padded[i]), 2e-2) << names[i];
#endif
}

}  // namespace
}  // namespace syncscope::kernels
