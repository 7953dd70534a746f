// A simulated trace's deviceProperties, as Kineto writes them for a real GPU, filled from
// what the GPU profile says (simulated traces used to carry zeros, which Holistic Trace
// Analysis and other Kineto readers take at face value). Only what the profile gives or
// what CUDA fixes for every NVIDIA GPU is written; the rest stays 0 ("not known").
// - name: the profile's description ("NVIDIA H200 SXM 141 GB HBM3e (Hopper, sm_90)"),
//   else its name, marked "(simulated)".
// - computeMajor/computeMinor: from the "sm_XY" the description names (sm_90 -> 9.0,
//   sm_121 -> 12.1: the last digit is the minor version, as nvcc's -arch=sm_XY spells it).
// - numSms, totalGlobalMem: the profile's sm_count and memory_bytes.
// - warpSize 32 and maxThreadsPerBlock 1024: the same for every compute capability from 2.0
//   on (CUDA C++ Programming Guide, "Compute Capabilities", technical specifications table).
// The per-SM limits (threads, registers, shared memory) differ between compute capabilities
// and are not in the profile: left 0 rather than guessed.
#include "sim_device.hpp"

#include <algorithm>
#include <cctype>
#include <string>

namespace syncscope::sim_detail {

namespace {

// "sm_90" -> {9, 0}; {0, 0} when the text names none.
std::pair<std::int32_t, std::int32_t> compute_capability(const std::string& text) {
  for (std::size_t at = text.find("sm_"); at != std::string::npos; at = text.find("sm_", at + 1)) {
    std::size_t end = at + 3;
    while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) ++end;
    const std::string digits = text.substr(at + 3, end - at - 3);
    if (digits.size() < 2 || digits.size() > 3) continue;
    return {std::stoi(digits.substr(0, digits.size() - 1)), digits.back() - '0'};
  }
  return {0, 0};
}

}  // namespace

DeviceProperties simulated_device(const model::GpuProfile& p, std::int32_t device) {
  DeviceProperties d;
  d.id = device;
  d.name = (p.description.empty() ? p.name : p.description) + " (simulated)";
  const auto [major, minor] = compute_capability(p.description);
  d.compute_major = major;
  d.compute_minor = minor;
  d.sm_count = std::max(0, p.sm_count);
  d.total_memory_bytes = static_cast<std::uint64_t>(std::max(0.0, p.memory_bytes));
  d.warp_size = 32;
  d.max_threads_per_block = 1024;
  return d;
}

}  // namespace syncscope::sim_detail
