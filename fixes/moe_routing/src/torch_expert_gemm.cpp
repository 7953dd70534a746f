// Which expert GEMM MoE "device" can run here without a host read (torch_step.hpp:
// resolve_expert_gemm). Built only with LibTorch (syncscope_fix_moe_routing_torch).
#include <fmt/format.h>

#include "syncscope/core/error.hpp"
#include "syncscope/fixes/moe_routing/options.hpp"
#include "syncscope/fixes/moe_routing/torch_step.hpp"
#include "syncscope/kernels/step.hpp"

#ifdef SYNCSCOPE_KERNELS_CUDA
#include "cuda/cuda_api.h"  // ss_cuda_device_capability
#endif

namespace syncscope::fixes::moe_routing {

std::string resolve_expert_gemm(const program::StepOptions& o, std::string* why) {
  std::string reason;
#ifndef SYNCSCOPE_HAVE_GROUPED_MM
#ifdef SYNCSCOPE_NO_GROUPED_MM
  reason = "built with -DSYNCSCOPE_ENABLE_GROUPED_MM=OFF";
#else
  reason = fmt::format("LibTorch {} has no at::_grouped_mm (it needs 2.8 or later)", kernels::torch_version());
#endif
#endif
  if (reason.empty() && o.device != "cuda") reason = "at::_grouped_mm's sync-free path runs on CUDA only";
  if (reason.empty() && o.dtype != "bf16")
    reason = fmt::format("at::_grouped_mm takes bf16, the step runs {}", o.dtype);
  if (reason.empty() && (o.model.hidden_size % 8 != 0 || o.model.intermediate_size % 8 != 0))
    reason = fmt::format(
        "at::_grouped_mm needs 16-byte aligned rows: hidden_size {} and intermediate_size {} must be "
        "multiples of 8",
        o.model.hidden_size, o.model.intermediate_size);
#ifdef SYNCSCOPE_KERNELS_CUDA
  if (reason.empty()) {
    int major = 0, minor = 0;
    if (!kernels::cuda_available() || ss_cuda_device_capability(&major, &minor) != 0)
      reason = "no CUDA device to ask for its compute capability";
    else if (major < 9)
      // Below sm90 ATen's grouped GEMM is a fallback that loops over the groups after reading
      // the offsets back (offs.cpu(): pytorch/pytorch PRs #161717 and #184334).
      reason = fmt::format("compute capability {}.{} < 9.0: at::_grouped_mm would read the group offsets back", major,
                           minor);
  }
#else
  if (reason.empty()) reason = "syncscope was built without CUDA";
#endif
  if (why) *why = reason;
  const std::string asked = expert_gemm(o);
  if (asked == "grouped" && !reason.empty())
    throw InputError("step options: moe_routing expert_gemm \"grouped\" is not available here: " + reason);
  return asked == "padded" || !reason.empty() ? "padded" : "grouped";
}

}  // namespace syncscope::fixes::moe_routing
