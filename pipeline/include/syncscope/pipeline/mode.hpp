// Measured or simulated: what `--device` asks for and what this machine allows. Measuring
// needs the measured backend (loaded here, on demand) and a CUDA device; `auto` falls back
// to the simulator and says why.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "syncscope/pipeline/backend.hpp"

namespace syncscope::pipeline {

struct ModeChoice {
  std::string mode;                                // "measured" | "simulated"
  std::string why_no_cuda;                         // why not measured (device auto or sim: "" when not probed)
  std::shared_ptr<const MeasuredBackend> backend;  // set when measured
};

// device: auto | cuda | sim (InputError otherwise). "cuda" without a backend or device is an
// Error naming the backend file or the driver's message. "sim" loads nothing.
ModeChoice choose_mode(const std::string& device, const std::filesystem::path& backend_library = {});

// The shipped GPU profile named like this device ("NVIDIA H200" -> "H200"), if any.
std::optional<std::string> gpu_profile_for_device(const std::string& device_name);

}  // namespace syncscope::pipeline
