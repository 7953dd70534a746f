// Turning a calibration into a GPU profile (CPU code: tested without a GPU).
#pragma once

#include <string>

#include "syncscope/model/calibration.hpp"
#include "syncscope/model/gpu_profile.hpp"

namespace syncscope::model {

// A measured profile: measured = true, measured_on = "<date_utc>, <GPU name>, driver <v>",
// every value's source "measured: <method>". Throws InputError when a required value was not
// measured (<= 0), naming it: a profile with holes must not be written.
GpuProfile profile_from_calibration(const CalibrationMeasurements& m, const std::string& name,
                                    const std::string& date_utc);

// A file-name-safe profile name from a GPU's name: "NVIDIA H200" -> "nvidia-h200"; "gpu"
// when nothing is left.
std::string profile_slug(const std::string& gpu_name);

// Reads the NVIDIA kernel driver version from a /proc/driver/nvidia/version-style text
// ("... Kernel Module  580.159.04  ..."); "" when absent.
std::string parse_nvidia_driver_version(const std::string& proc_text);

}  // namespace syncscope::model
