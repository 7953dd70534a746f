// The measured backend's parts behind the table of backend_entry.cpp: measuring with the
// LibTorch reference steps under the CUPTI tracer (backend_measure.cpp) and calibrating
// (backend_calibrate.cpp). They throw syncscope errors; the entry turns them into statuses.
#pragma once

#include <cstdint>
#include <string>

#include "syncscope/pipeline/backend_abi.hpp"
#include "syncscope/pipeline/backend_wire.hpp"

namespace syncscope::pipeline::backend {

// Registers the fixes with folders of their own and their LibTorch hooks (fixes/shipped's
// register_shipped_torch_steps) where this build has them; called once at load.
void register_fixes();
std::uint32_t capabilities();
std::string description();  // what this build holds, e.g. "LibTorch 2.11.0, CUPTI tracer, calibration"

bool device_available(std::string* why);
Trace measure(const MeasureRequest& request);
// What registered fix `fix` resolves on the device (its torch_device_choice hook); "" and why
// when this backend has no LibTorch. Error for an id nobody registered or a fix with no choice.
std::string fix_device_choice(const program::StepOptions& options, std::uint32_t fix, std::string* why);
RuntimeVersions runtime_versions();
model::CalibrationMeasurements calibrate(const model::CalibrationOptions& options);

}  // namespace syncscope::pipeline::backend
