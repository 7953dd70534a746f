// The MoE "device" variant's grouped GEMM (at::_grouped_mm) with a fallback that covers the
// backward too. torch_step.cpp falls back to capacity-padded bmm when the forward refuses; the
// backward runs later, inside loss.backward(), where a refusal would end the step. So the
// grouped GEMM runs inside our own autograd function:
// - backward forms what PyTorch's autograd forms for _grouped_mm (derivatives.yaml:
//   _grouped_mm_mat1_backward / _mat2_backward, row-major case: dA = G · Bᵀ per group,
//   dB = Aᵀ · G per group, both again grouped GEMMs over the same group ends), from a
//   contiguous G: an expanded gradient (stride 0, e.g. from y.sum()) breaks _grouped_mm's
//   stride rules (aten/src/ATen/native/GroupedMMUtils.h; docs/sources.md#grouped-mm);
// - if the grouped kernels refuse anyway, the gradients come from the capacity-padded
//   layout (no host read, as the forward's fallback), and the fallback is counted.
#include <cstdio>

#include "syncscope/fixes/moe_routing/torch_step.hpp"

#ifdef SYNCSCOPE_HAVE_GROUPED_MM

#include <atomic>

namespace syncscope::fixes::moe_routing {

namespace {

std::atomic<std::uint64_t> g_backward_fallbacks{0};
std::atomic<bool> g_force_backward_fallback{false};

// Row r of the grouped layout (group e holds rows [ends[e-1], ends[e])) goes to row
// e * capacity + (r - ends[e-1]) of the padded [E * capacity] layout. No host read.
torch::Tensor padded_rows(const torch::Tensor& ends, std::int64_t rows, std::int64_t capacity) {
  const auto lopts = torch::TensorOptions().device(ends.device()).dtype(torch::kLong);
  const torch::Tensor e = ends.to(torch::kLong);
  const torch::Tensor starts = torch::cat({torch::zeros({1}, lopts), e.narrow(0, 0, e.size(0) - 1)});
  const torch::Tensor r = torch::arange(rows, lopts);
  const torch::Tensor group = torch::searchsorted(e, r, /*out_int32=*/false, /*right=*/true);
  return group * capacity + (r - starts.index_select(0, group));
}

torch::Tensor to_padded(const torch::Tensor& x, const torch::Tensor& dest, std::int64_t groups, std::int64_t capacity) {
  return torch::zeros({groups * capacity, x.size(1)}, x.options())
      .index_copy(0, dest, x)
      .view({groups, capacity, x.size(1)});
}

class GroupedMm : public torch::autograd::Function<GroupedMm> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& a, const torch::Tensor& b,
                               const torch::Tensor& offs, std::int64_t capacity) {
    ctx->save_for_backward({a, b, offs});
    ctx->saved_data["capacity"] = capacity;
    return at::_grouped_mm(a, b, offs);
  }

  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                               torch::autograd::tensor_list grads) {
    const auto saved = ctx->get_saved_variables();
    const torch::Tensor &a = saved[0], &b = saved[1], &offs = saved[2];
    if (!grads[0].defined()) return {torch::Tensor(), torch::Tensor(), torch::Tensor(), torch::Tensor()};
    const torch::Tensor g = grads[0].contiguous();
    if (!g_force_backward_fallback.load()) {
      try {
        torch::Tensor ga = at::_grouped_mm(g, b.transpose(-2, -1), offs);
        torch::Tensor gb = at::_grouped_mm(a.transpose(-2, -1), g, offs);
        return {ga, gb, torch::Tensor(), torch::Tensor()};
      } catch (const c10::Error& e) {
        std::string what = e.what_without_backtrace();
        if (auto nl = what.find('\n'); nl != std::string::npos) what.resize(nl);
        if (g_backward_fallbacks.fetch_add(1) == 0)
          std::fprintf(stderr,
                       "syncscope: moe device: at::_grouped_mm backward refused (%s); gradients from the "
                       "capacity-padded GEMM\n",
                       what.c_str());
      }
    } else {
      g_backward_fallbacks.fetch_add(1);
    }
    const std::int64_t capacity = ctx->saved_data["capacity"].toInt();
    const std::int64_t groups = b.size(0);
    const torch::Tensor dest = padded_rows(offs, a.size(0), capacity);
    const torch::Tensor gpad = to_padded(g, dest, groups, capacity);
    const torch::Tensor apad = to_padded(a, dest, groups, capacity);
    const torch::Tensor ga =
        torch::bmm(gpad, b.transpose(1, 2)).reshape({groups * capacity, a.size(1)}).index_select(0, dest);
    const torch::Tensor gb = torch::bmm(apad.transpose(1, 2), gpad);
    return {ga, gb, torch::Tensor(), torch::Tensor()};
  }
};

}  // namespace

torch::Tensor grouped_mm(const torch::Tensor& a, const torch::Tensor& b, const torch::Tensor& offs,
                         std::int64_t capacity) {
  return GroupedMm::apply(a, b, offs, capacity);
}

torch::Tensor grouped_mm_padded(const torch::Tensor& a, const torch::Tensor& b, const torch::Tensor& offs,
                                std::int64_t capacity) {
  const std::int64_t groups = b.size(0);
  const torch::Tensor dest = padded_rows(offs, a.size(0), capacity);
  return torch::bmm(to_padded(a, dest, groups, capacity), b)
      .reshape({groups * capacity, b.size(2)})
      .index_select(0, dest);
}

std::uint64_t grouped_mm_backward_fallbacks() { return g_backward_fallbacks.load(); }

void force_grouped_mm_backward_fallback(bool on) { g_force_backward_fallback.store(on); }

}  // namespace syncscope::fixes::moe_routing

#endif  // SYNCSCOPE_HAVE_GROUPED_MM
