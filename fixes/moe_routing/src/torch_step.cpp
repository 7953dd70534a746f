// MoE expert dispatch, three ways (docs/sources.md#moe-routing "MoE routing (gpt-oss)"): one nonzero per
// expert (E host syncs), Unsloth's sorted dispatch (bincount + one tolist: on CUDA bincount
// reads min and max back too, so 3 host syncs), and ours with none. The fix's LibTorch hook at
// ExpertDispatch (FixSpec::torch_layer_point) runs the variant the step options hold, the
// operations its program hook (program.cpp) describes.
#include "syncscope/fixes/moe_routing/torch_step.hpp"

#include <fmt/format.h>

#include <cstdio>

#include "syncscope/core/error.hpp"
#include "syncscope/fixes/moe_routing/moe_routing.hpp"
#include "syncscope/fixes/moe_routing/options.hpp"

#ifdef SYNCSCOPE_KERNELS_CUDA
#include "syncscope/fixes/moe_routing/moe_histogram.h"
#endif

namespace syncscope::fixes::moe_routing {

using kernels::detail::Ctx;
using kernels::detail::ExpertWeights;
using kernels::detail::RangeGuard;

namespace {

torch::Tensor swiglu(const torch::Tensor& x, const torch::Tensor& gate, const torch::Tensor& up,
                     const torch::Tensor& down) {
  return (torch::silu(x.mm(gate)) * x.mm(up)).mm(down);
}

// The weighted contribution of expert rows `y` for flat entries `flat` added into `out`.
void accumulate(torch::Tensor& out, const torch::Tensor& tokens, const torch::Tensor& y, const torch::Tensor& weights,
                const torch::Tensor& flat) {
  const torch::Tensor w = weights.reshape({-1}).index_select(0, flat);
  out.index_add_(0, tokens, y.to(torch::kFloat32) * w.unsqueeze(1));
}

}  // namespace

std::pair<torch::Tensor, torch::Tensor> expert_counts_offsets(const torch::Tensor& flat_ids, int num_experts,
                                                              Ctx& ctx) {
  const auto lopts = torch::TensorOptions().device(flat_ids.device()).dtype(torch::kLong);
  if (ctx.cuda) {
#ifdef SYNCSCOPE_KERNELS_CUDA
    const torch::Tensor ids = flat_ids.contiguous();
    torch::Tensor counts = torch::empty({num_experts}, lopts);
    torch::Tensor offsets = torch::empty({num_experts + 1}, lopts);
    kernels::detail::check_cuda(ss_moe_histogram(ids.data_ptr<std::int64_t>(), ids.numel(), num_experts,
                                                 counts.data_ptr<std::int64_t>(), offsets.data_ptr<std::int64_t>(),
                                                 nullptr),
                                "ss_moe_histogram");
    return {counts, offsets};
#else
    SYNCSCOPE_THROW_IF(true, "moe device variant on CUDA needs a CUDA build of syncscope");
#endif
  }
  // scatter_add_ never reads back (bincount does); cumsum stays on the device.
  torch::Tensor counts = torch::zeros({num_experts}, lopts).scatter_add_(0, flat_ids, torch::ones_like(flat_ids));
  torch::Tensor offsets = torch::cat({torch::zeros({1}, lopts), torch::cumsum(counts, 0)});
  return {counts, offsets};
}

namespace {
// The step's host reads of this fix (SyncCounts::by_fix; std::map: the reference stays valid).
int& reads(Ctx& ctx) { return ctx.syncs->by_fix[kFix]; }
}  // namespace

torch::Tensor moe_experts(Variant variant, const torch::Tensor& x, const torch::Tensor& expert_ids,
                          const torch::Tensor& weights, const ExpertWeights& w, Ctx& ctx) {
  RangeGuard range(*ctx.ranges, "moe_routing");
  const std::int64_t T = x.size(0), H = x.size(1), k = expert_ids.size(1);
  const auto E = static_cast<int>(w.gate.size(0));
  const auto fopts = torch::TensorOptions().device(x.device()).dtype(torch::kFloat32);
  if (variant == Variant::Loop) {
    // The original HF gpt-oss training path: torch.where(router_indices == e) per expert.
    torch::Tensor out = torch::zeros({T, H}, fopts);
    for (int e = 0; e < E; ++e) {
      const torch::Tensor nz = (expert_ids == e).nonzero();  // [n, 2]: a host sync on CUDA
      ++reads(ctx);
      const std::int64_t n = nz.size(0);
      if (n == 0) continue;
      const torch::Tensor tokens = nz.select(1, 0);
      const torch::Tensor flat = tokens * k + nz.select(1, 1);
      const torch::Tensor y = swiglu(x.index_select(0, tokens), w.gate[e], w.up[e], w.down[e]);
      accumulate(out, tokens, y, weights, flat);
    }
    return out;
  }
  if (variant == Variant::Sorted) {
    // Unsloth (unsloth-zoo PR 535): stable argsort, bincount, one tolist, slices by offset,
    // empty experts skipped, index_add_ into fp32.
    const torch::Tensor flat_ids = expert_ids.reshape({-1});
    const torch::Tensor order = torch::argsort(flat_ids, /*stable=*/true, 0, false);
    const torch::Tensor counts = torch::bincount(flat_ids, {}, E);
    reads(ctx) += 2;  // bincount on CUDA: self.min().cpu() and self.max().item()
    const std::vector<std::int64_t> host_counts = kernels::detail::read_list_int(counts, reads(ctx));
    torch::Tensor out = torch::zeros({T, H}, fopts);
    std::int64_t offset = 0;
    for (int e = 0; e < E; ++e) {
      const std::int64_t c = host_counts[static_cast<std::size_t>(e)];
      if (c == 0) continue;
      const torch::Tensor sel = order.narrow(0, offset, c);
      offset += c;
      const torch::Tensor tokens = torch::div(sel, k, "floor");
      const torch::Tensor y = swiglu(x.index_select(0, tokens), w.gate[e], w.up[e], w.down[e]);
      accumulate(out, tokens, y, weights, sel);
    }
    return out;
  }
  SYNCSCOPE_INPUT_ERROR_IF(variant != Variant::Device,
                           fmt::format("moe variant {}: expected loop, sorted or device", static_cast<int>(variant)));
  const torch::Tensor flat_ids = expert_ids.reshape({-1});
  const std::int64_t N = flat_ids.numel();
  const torch::Tensor offsets = expert_counts_offsets(flat_ids, E, ctx).second;
  auto sorted = torch::sort(flat_ids, /*stable=*/true, 0, false);
  const torch::Tensor sorted_ids = std::get<0>(sorted);
  const torch::Tensor order = std::get<1>(sorted);
  const torch::Tensor tokens = torch::div(order, k, "floor");
  const torch::Tensor rows = x.index_select(0, tokens);  // the T*k entries, sorted by expert
#ifdef SYNCSCOPE_HAVE_GROUPED_MM
  if (const auto it = ctx.fix_choices.find(kFix); it != ctx.fix_choices.end() && it->second == "grouped") {
    // Ours, grouped: one grouped GEMM per projection over the sorted rows; group e is rows
    // [offs[e-1], offs[e]), the ends read from device memory by the kernel (sm90+), so no
    // host read and no padding: the expert FLOPs are the baseline's.
    try {
      const torch::Tensor offs = offsets.narrow(0, 1, E).to(torch::kInt32);
      // grouped_mm (torch_grouped_gemm.cpp): at::_grouped_mm with a backward fallback; C = T.
      const torch::Tensor h = torch::silu(grouped_mm(rows, w.gate, offs, T)) * grouped_mm(rows, w.up, offs, T);
      const torch::Tensor y = grouped_mm(h, w.down, offs, T);
      torch::Tensor out = torch::zeros({T, H}, fopts);
      accumulate(out, tokens, y, weights, order);
      return out;
    } catch (const c10::Error& e) {
      // Shape, stride or dtype checks refuse synchronously; say so once and keep running.
      std::string what = e.what_without_backtrace();
      if (auto nl = what.find('\n'); nl != std::string::npos) what.resize(nl);
      std::fprintf(stderr, "syncscope: moe device: at::_grouped_mm refused (%s); using the capacity-padded GEMM\n",
                   what.c_str());
      ctx.fix_choices[kFix] = "padded";
    }
  }
#endif
  // Ours, padded: no host read. Counts and offsets on the device; each entry's row in a
  // capacity-padded [E, C, H] layout with C = T (no expert can hold more than T entries,
  // since a token picks an expert at most once, so nothing is ever dropped); one batched
  // GEMM per projection. Cost: E*C rows instead of T*k, i.e. E/k times the expert FLOPs
  // (8x for gpt-oss-20b) plus the padded activations' memory; the price of static shapes.
  const std::int64_t C = T;
  const auto lopts = torch::TensorOptions().device(x.device()).dtype(torch::kLong);
  const torch::Tensor rank = torch::arange(N, lopts) - offsets.index_select(0, sorted_ids);
  const torch::Tensor dest = sorted_ids * C + rank;
  const torch::Tensor xpad = torch::zeros({E * C, H}, x.options()).index_copy(0, dest, rows).view({E, C, H});
  const torch::Tensor h = torch::silu(torch::bmm(xpad, w.gate)) * torch::bmm(xpad, w.up);
  const torch::Tensor ypad = torch::bmm(h, w.down).reshape({E * C, H});
  const torch::Tensor y = ypad.index_select(0, dest);
  torch::Tensor out = torch::zeros({T, H}, fopts);
  accumulate(out, tokens, y, weights, order);
  return out;
}

namespace {

void torch_layer_point(TorchLayerContext& c, program::ProgramPoint at) {
  if (at != program::ProgramPoint::ExpertDispatch) return;
  c.expert_output =
      moe_experts(variant(c.options), *c.moe_input, *c.expert_ids, *c.routing_weights, *c.experts, c.device);
}

// MoE "device" on a MoE model: which expert GEMM this machine's LibTorch can run without a
// host read (resolve_expert_gemm; InputError when "grouped" is asked and absent).
void torch_step_setup(TorchStepSetup& s) {
  if (s.options.model.is_moe() && variant(s.options) == Variant::Device)
    s.device.fix_choices[kFix] = resolve_expert_gemm(s.options);
}

}  // namespace

void register_moe_routing_torch_step() {
  register_moe_routing_fix_step();
  FixSpec& f = mutable_fix_spec(kFix);
  f.torch_layer_point = torch_layer_point;
  f.torch_step_setup = torch_step_setup;
  f.torch_device_choice = [](const program::StepOptions& o, std::string* why) { return resolve_expert_gemm(o, why); };
}

}  // namespace syncscope::fixes::moe_routing
