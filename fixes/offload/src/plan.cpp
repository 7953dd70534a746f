// The offload fix's memory-aware plan (plan.hpp).
#include "syncscope/fixes/offload/plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "syncscope/core/error.hpp"

namespace syncscope::fixes::offload {

OffloadPlan plan_offload(Variant variant, int layers, double activation_bytes, double budget_bytes, int prefetch_depth,
                         bool first_pass, double min_offload_bytes) {
  SYNCSCOPE_INPUT_ERROR_IF(layers <= 0, fmt::format("offload plan: layers must be positive, got {}", layers));
  SYNCSCOPE_INPUT_ERROR_IF(!(activation_bytes > 0),
                           fmt::format("offload plan: activation bytes must be positive, got {}", activation_bytes));
  OffloadPlan plan;
  plan.variant = variant;
  plan.layers = layers;
  if (variant == Variant::Single || variant == Variant::Double) {
    // Unsloth: offload only inputs above MINIMUM_SIZE; keep the last layer's after the first pass.
    const int offloaded = activation_bytes <= min_offload_bytes ? 0 : first_pass ? layers : layers - 1;
    plan.first_resident = offloaded;
    plan.ring_buffers = std::min(variant == Variant::Single ? 1 : 2, offloaded);
    return plan;
  }
  SYNCSCOPE_INPUT_ERROR_IF(variant != Variant::Prefetch,
                           fmt::format("offload plan: variant {}: expected single, double or prefetch",
                                       static_cast<int>(variant)));
  SYNCSCOPE_INPUT_ERROR_IF(prefetch_depth < 1,
                           fmt::format("offload plan: prefetch depth must be positive, got {}", prefetch_depth));
  const double budget = std::max(0.0, budget_bytes);
  if (budget >= static_cast<double>(layers) * activation_bytes) {
    plan.first_resident = 0;  // every checkpoint fits: nothing to offload or reload
    return plan;
  }
  int depth = std::clamp(prefetch_depth, 1, layers);
  const double left = budget - static_cast<double>(depth + 1) * activation_bytes;
  const int resident = left > 0 ? std::clamp(static_cast<int>(std::floor(left / activation_bytes)), 0, layers - 1) : 0;
  const int offloaded = layers - resident;
  depth = std::min(depth, offloaded);
  plan.first_resident = offloaded;
  plan.depth = depth;
  plan.ring_buffers = depth + 1;
  return plan;
}

}  // namespace syncscope::fixes::offload
