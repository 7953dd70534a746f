// syncscope_grouped_mm_probe: may the MoE "device" variant use the grouped GEMM on this
// machine? A tiny forward and backward through grouped_mm (at::_grouped_mm, bf16, on CUDA),
// then a device synchronize, then the results against per-group matmuls. scripts/gpu-check
// keeps the grouped path only when this exits 0; otherwise it rebuilds with
// SYNCSCOPE_ENABLE_GROUPED_MM=OFF (the capacity-padded GEMM).
// Exit: 0 works; 1 fails (the reason printed); 77 cannot be tried here (no CUDA device, or a
// LibTorch without at::_grouped_mm), printed as "skipped: ...".
#include <cstdio>
#include <exception>

#include "syncscope/fixes/moe_routing/torch_step.hpp"
#include "syncscope/fixes/shipped.hpp"
#include "syncscope/kernels/step.hpp"

int main() {
  syncscope::fixes::register_shipped_fixes();  // the variants' names (shipped.hpp)
  namespace sk = syncscope::kernels;
#ifndef SYNCSCOPE_HAVE_GROUPED_MM
  std::printf("skipped: LibTorch %s without at::_grouped_mm (or SYNCSCOPE_ENABLE_GROUPED_MM=OFF)\n",
              sk::torch_version().c_str());
  return 77;
#else
  if (!sk::cuda_available()) {
    std::printf("skipped: no CUDA device (LibTorch %s)\n", sk::torch_version().c_str());
    return 77;
  }
  try {
    torch::manual_seed(3);
    const auto dev = torch::TensorOptions().device(torch::kCUDA).dtype(torch::kBFloat16);
    const std::vector<std::int64_t> ends = {16, 16, 40, 64};  // an empty group included
    const std::int64_t N = 64, K = 64, M = 32, E = 4;
    torch::Tensor a = torch::randn({N, K}, dev).requires_grad_(true);
    torch::Tensor b = torch::randn({E, K, M}, dev).requires_grad_(true);
    const torch::Tensor offs =
        torch::tensor(std::vector<std::int32_t>(ends.begin(), ends.end()), torch::TensorOptions().dtype(torch::kInt32))
            .to(torch::kCUDA);
    const torch::Tensor y = syncscope::fixes::moe_routing::grouped_mm(a, b, offs, N);
    y.sum().backward();  // a stride-0 gradient, the case the stride rules refuse
    torch::cuda::synchronize();
    // Reference: per-group matmuls in fp32.
    torch::Tensor a32 = a.detach().to(torch::kFloat32).requires_grad_(true);
    torch::Tensor b32 = b.detach().to(torch::kFloat32).requires_grad_(true);
    std::vector<torch::Tensor> parts;
    std::int64_t start = 0;
    for (std::int64_t e = 0; e < E; ++e) {
      parts.push_back(a32.narrow(0, start, ends[static_cast<std::size_t>(e)] - start).mm(b32[e]));
      start = ends[static_cast<std::size_t>(e)];
    }
    torch::cat(parts).sum().backward();
    auto rel = [](const torch::Tensor& got, const torch::Tensor& want) {
      return ((got.to(torch::kFloat32) - want).abs().max() / want.abs().max()).item<double>();
    };
    const double dy = rel(y.detach(), torch::cat(parts).detach()), da = rel(a.grad(), a32.grad()),
                 db = rel(b.grad(), b32.grad());
    std::printf("grouped_mm on CUDA: max relative difference y %.3g, dA %.3g, dB %.3g; backward fallbacks %llu\n", dy,
                da, db,
                static_cast<unsigned long long>(syncscope::fixes::moe_routing::grouped_mm_backward_fallbacks()));
    if (!(dy < 2e-2 && da < 2e-2 && db < 2e-2)) {
      std::printf("grouped_mm disagrees with per-group matmuls\n");
      return 1;
    }
    if (syncscope::fixes::moe_routing::grouped_mm_backward_fallbacks() != 0) {
      std::printf("the grouped backward refused and fell back to the padded GEMM\n");
      return 1;
    }
    return 0;
  } catch (const std::exception& e) {
    std::printf("grouped_mm failed: %s\n", e.what());
    return 1;
  }
#endif
}
