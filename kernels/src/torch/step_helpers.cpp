// Shared helpers of the LibTorch step and the fixes' LibTorch hooks (torch_step_point.hpp):
// NVTX ranges, counted host reads, CUDA checks, free device memory.
#include <fmt/format.h>

#include "syncscope/core/error.hpp"
#include "torch/internal.hpp"

#ifdef SYNCSCOPE_KERNELS_CUDA
#include "cuda/cuda_api.h"
#endif

namespace syncscope::kernels {

bool cuda_available() {
#ifdef SYNCSCOPE_KERNELS_CUDA
  return torch::cuda::is_available() && torch::cuda::device_count() > 0;
#else
  return false;
#endif
}

std::string torch_version() {
  return fmt::format("{}.{}.{}", TORCH_VERSION_MAJOR, TORCH_VERSION_MINOR, TORCH_VERSION_PATCH);
}

namespace detail {

void Ranges::push(const std::string& name) {
#ifdef SYNCSCOPE_KERNELS_CUDA
  if (nvtx_) ss_nvtx_push(name.c_str());
#endif
  if (record_) names_.push_back(name);
  ++depth_;
}

void Ranges::pop() {
  SYNCSCOPE_THROW_IF(depth_ == 0, "NVTX range pop without push");
#ifdef SYNCSCOPE_KERNELS_CUDA
  if (nvtx_) ss_nvtx_pop();
#endif
  --depth_;
}

std::vector<std::string> Ranges::take() {
  std::vector<std::string> out;
  out.swap(names_);
  return out;
}

std::int64_t read_item_int(const torch::Tensor& t, int& counter) {
  ++counter;  // aten::item -> _local_scalar_dense: D2H + cudaStreamSynchronize on CUDA
  return t.item<std::int64_t>();
}

std::vector<std::int64_t> read_list_int(const torch::Tensor& t, int& counter) {
  ++counter;  // .tolist() / .cpu(): D2H into pageable memory, synchronous on CUDA
  const torch::Tensor h = t.to(torch::kCPU).to(torch::kLong).contiguous();
  const auto* p = h.data_ptr<std::int64_t>();
  return {p, p + h.numel()};
}

void check_cuda(int rc, const char* what) {
#ifdef SYNCSCOPE_KERNELS_CUDA
  if (rc != 0) throw CudaError(fmt::format("{} failed: {} ({})", what, ss_cuda_error_string(rc), rc), rc);
#else
  if (rc != 0) throw CudaError(fmt::format("{} failed with CUDA error {}", what, rc), rc);
#endif
}

std::optional<double> device_free_bytes(const Ctx& ctx) {
  if (!ctx.cuda) return std::nullopt;
#ifdef SYNCSCOPE_KERNELS_CUDA
  size_t free_bytes = 0, total_bytes = 0;
  check_cuda(ss_cuda_mem_get_info(&free_bytes, &total_bytes), "cudaMemGetInfo");
  return static_cast<double>(free_bytes);
#else
  SYNCSCOPE_THROW_IF(true, "device memory on CUDA needs a CUDA build of syncscope");
#endif
}

torch::ScalarType parse_dtype(const std::string& dtype) {
  if (dtype == "fp32") return torch::kFloat32;
  if (dtype == "bf16") return torch::kBFloat16;
  if (dtype == "fp16") return torch::kFloat16;
  throw InputError(fmt::format("dtype \"{}\": expected \"fp32\", \"bf16\" or \"fp16\"", dtype));
}

}  // namespace detail
}  // namespace syncscope::kernels
