// The GPU profile's sections written by `calibrate --from-trace`: `kernels` (a list of
// fitted kernel durations) and `provenance` (where the profile came from). Private to
// gpu_profile.cpp's loader and writer.
#pragma once

#include <string>

#include <yaml-cpp/yaml.h>

#include "syncscope/model/gpu_profile.hpp"

namespace syncscope::model {

// Reads `node` (the value of `key`, "kernels" or "provenance") into `profile`; InputError
// naming file:line:column and the field on anything malformed.
void parse_fitted_section(const std::string& file, const std::string& key, const YAML::Node& node, GpuProfile& profile);

// The two sections as YAML ("" when the profile has neither).
std::string fitted_sections_to_yaml(const GpuProfile& profile);

}  // namespace syncscope::model
