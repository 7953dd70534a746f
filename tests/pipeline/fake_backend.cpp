// A stand-in measured backend for tests/pipeline: the real table interface of
// backend_abi.hpp, built from this tree, whose "measurement" is the simulator's trace of the
// step program (H200 profile) on a device named "Fake NVIDIA H200 (test backend)". It lets
// the measured path of the pipeline (loading, producing, GPU matching, simulator checks,
// provenance) run on a CPU machine. Never installed; a test fixture only.
//
// FAKE_BACKEND_KIND: 0 the fake above; 1 a table of another ABI version; 2 a table with
// another build key. SYNCSCOPE_FAKE_BACKEND_NO_DEVICE=1 makes it report no device.
#include <cstdlib>
#include <string>

#include "syncscope/kernels/step_program.hpp"
#include "syncscope/model/gpu_profile.hpp"
#include "syncscope/pipeline/backend_abi.hpp"
#include "syncscope/sim/simulator.hpp"

#ifndef FAKE_BACKEND_KIND
#define FAKE_BACKEND_KIND 0
#endif

namespace {

using namespace syncscope;
using namespace syncscope::pipeline;

int device_available(std::string* why) {
  const char* e = std::getenv("SYNCSCOPE_FAKE_BACKEND_NO_DEVICE");
  if (e != nullptr && std::string(e) == "1") {
    *why = "fake backend: no device (SYNCSCOPE_FAKE_BACKEND_NO_DEVICE=1)";
    return 0;
  }
  return 1;
}

int measure(const MeasureRequest* request, Trace* out, std::string* error) {
  try {
    if (request->options.model.name == "fail-input") {
      *error = "fake backend: bad input for " + request->trace_name;
      return kBackendInputError;
    }
    sim::SimOptions so;
    so.steps = request->repeat_steps;
    *out = sim::simulate(kernels::build_step_program(request->options), load_gpu_profile("H200"), so);
    out->meta.trace_name = request->trace_name;
    out->meta.extra["fake_backend"] = "1";
    out->devices.front().name = "Fake NVIDIA H200 (test backend)";
    return kBackendOk;
  } catch (const std::exception& e) {
    *error = e.what();
    return kBackendError;
  }
}

int moe_expert_gemm(const kernels::StepOptions*, std::string* out, std::string* why, std::string*) {
  *out = "padded";
  *why = "fake backend pads";
  return kBackendOk;
}

int runtime_versions(RuntimeVersions* out, std::string*) {
  out->driver = "fake-driver";
  out->cuda_runtime = "fake-cuda";
  out->libtorch = "fake-torch";
  return kBackendOk;
}

int calibrate(const CalibrationOptions*, CalibrationMeasurements*, std::string* error) {
  *error = "fake backend: calibrate is not faked";
  return kBackendError;
}

const BackendTable* table() {
#if FAKE_BACKEND_KIND == 2
  static const std::string key = "another build";
#else
  static const std::string key = backend_build_key();
#endif
#if FAKE_BACKEND_KIND == 1
  const std::uint32_t abi = kBackendAbiVersion + 100;
#else
  const std::uint32_t abi = kBackendAbiVersion;
#endif
  static const BackendTable t{abi, sizeof(BackendTable), key.c_str(), "fake backend (tests/pipeline)",
                              kBackendMeasure, &device_available, &measure, &moe_expert_gemm, &runtime_versions,
                              &calibrate};
  return &t;
}

}  // namespace

extern "C" const BackendTable* syncscope_backend_v1(void) { return table(); }
