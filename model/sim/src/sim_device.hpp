// The simulated trace's deviceProperties entry, from the GPU profile (sim_device.cpp).
#pragma once

#include <cstdint>

#include "syncscope/model/gpu_profile.hpp"
#include "syncscope/trace/trace.hpp"

namespace syncscope::sim_detail {

DeviceProperties simulated_device(const model::GpuProfile& p, std::int32_t device);

}  // namespace syncscope::sim_detail
