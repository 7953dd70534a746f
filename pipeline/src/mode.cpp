// Measured or simulated (mode.hpp).
#include "syncscope/pipeline/mode.hpp"

#include <algorithm>
#include <cctype>
#include <vector>

#include "syncscope/core/error.hpp"
#include "syncscope/model/gpu_profile.hpp"

namespace syncscope::pipeline {

ModeChoice choose_mode(const std::string& device, const std::filesystem::path& backend_library) {
  if (device != "auto" && device != "cuda" && device != "sim")
    throw InputError("--device: expected auto, cuda or sim, got " + device);
  ModeChoice c;
  if (device == "sim") {
    c.mode = "simulated";
    return c;
  }
  // Measuring needs the backend (LibTorch, CUDA, CUPTI): loaded only now.
  const BackendLoad load = load_measured_backend(backend_library);
  bool have_device = false;
  if (!load.backend) {
    c.why_no_cuda = load.error;
  } else if (!load.backend->can_measure()) {
    c.why_no_cuda = load.backend->file().string() + " cannot measure (" + load.backend->description() + ")";
  } else {
    have_device = load.backend->device_available(&c.why_no_cuda);
  }
  if (device == "cuda") {
    if (!load.backend || !load.backend->can_measure())
      throw Error("--device cuda is unavailable: " + c.why_no_cuda +
                  "; measuring needs the measured backend built with the LibTorch reference steps "
                  "(SYNCSCOPE_ENABLE_TORCH with a CUDA LibTorch) and the CUPTI tracer (SYNCSCOPE_ENABLE_CUDA)");
    if (!have_device) throw Error("--device cuda: no CUDA device (" + c.why_no_cuda + ")");
  }
  if (have_device) {
    c.mode = "measured";
    c.backend = load.backend;
    c.why_no_cuda.clear();
  } else {
    c.mode = "simulated";
  }
  return c;
}

std::optional<std::string> gpu_profile_for_device(const std::string& device_name) {
  // Shipped profiles are named by the GPU ("H200", "H100", "B200", ...): the first whose
  // name the device name contains.
  std::vector<std::string> names;
  try {
    names = model::shipped_gpu_profiles();
  } catch (const Error&) {
    return std::nullopt;
  }
  std::sort(names.begin(), names.end(), [](const auto& a, const auto& b) { return a.size() > b.size(); });
  auto upper = [](std::string s) {
    for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return s;
  };
  for (const auto& n : names)
    if (upper(device_name).find(upper(n)) != std::string::npos) return n;
  return std::nullopt;
}

}  // namespace syncscope::pipeline
