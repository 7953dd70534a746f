// A stand-in measured backend for tests/pipeline: the real C table interface of
// backend_abi.hpp (values as backend_wire.hpp bytes), built from this tree, whose "measurement" is the simulator's
// trace of the step program (H200 profile) on a device named "Fake NVIDIA H200 (test backend)". It lets the measured
// path of the pipeline (loading, producing, GPU matching, simulator checks, provenance) run on a CPU machine. Never
// installed; a test fixture only.
//
// FAKE_BACKEND_KIND: 0 the fake above; 1 a table of another ABI version; 2 a table with
// another build key. SYNCSCOPE_FAKE_BACKEND_NO_DEVICE=1 makes it report no device.
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "syncscope/kernels/step_program.hpp"
#include "syncscope/model/gpu_profile.hpp"
#include "syncscope/pipeline/backend_abi.hpp"
#include "syncscope/pipeline/backend_wire.hpp"
#include "syncscope/sim/simulator.hpp"

#ifndef FAKE_BACKEND_KIND
#define FAKE_BACKEND_KIND 0
#endif

namespace {

using namespace syncscope;
using namespace syncscope::pipeline;

void put(BackendBytes* out, const std::string& s) {
  out->data = new char[s.size() + 1];
  std::memcpy(out->data, s.data(), s.size());
  out->size = s.size();
}

void release(BackendBytes* b) {
  delete[] b->data;
  b->data = nullptr;
  b->size = 0;
}

std::int32_t device_available(BackendBytes* why) {
  const char* e = std::getenv("SYNCSCOPE_FAKE_BACKEND_NO_DEVICE");
  if (e != nullptr && std::string(e) == "1") {
    put(why, "fake backend: no device (SYNCSCOPE_FAKE_BACKEND_NO_DEVICE=1)");
    return 0;
  }
  return 1;
}

std::int32_t measure(const char* request, std::uint64_t size, BackendBytes* out, BackendBytes* error) {
  try {
    const MeasureRequest r = measure_request_from_wire(std::string_view(request, size));
    if (r.options.model.name == "fail-input") {
      put(error, "fake backend: bad input for " + r.trace_name);
      return kBackendInputError;
    }
    sim::SimOptions so;
    so.steps = r.repeat_steps;
    Trace t = sim::simulate(kernels::build_step_program(r.options), load_gpu_profile("H200"), so);
    t.meta.trace_name = r.trace_name;
    t.meta.extra["fake_backend"] = "1";
    t.devices.front().name = "Fake NVIDIA H200 (test backend)";
    put(out, trace_to_wire(t));
    return kBackendOk;
  } catch (const std::exception& e) {
    put(error, e.what());
    return kBackendError;
  }
}

std::int32_t moe_expert_gemm(const char*, std::uint64_t, BackendBytes* out, BackendBytes* why, BackendBytes*) {
  put(out, "padded");
  put(why, "fake backend pads");
  return kBackendOk;
}

std::int32_t runtime_versions(BackendBytes* out, BackendBytes*) {
  RuntimeVersions v;
  v.driver = "fake-driver";
  v.cuda_runtime = "fake-cuda";
  v.libtorch = "fake-torch";
  put(out, to_wire(v));
  return kBackendOk;
}

std::int32_t calibrate(const char*, std::uint64_t, BackendBytes*, BackendBytes* error) {
  put(error, "fake backend: calibrate is not faked");
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
  static const BackendTable t{abi,
                              sizeof(BackendTable),
                              backend_layout_hash(),
                              key.c_str(),
                              "fake backend (tests/pipeline)",
                              kBackendMeasure,
                              &device_available,
                              &measure,
                              &moe_expert_gemm,
                              &runtime_versions,
                              &calibrate,
                              &release};
  return &t;
}

}  // namespace

extern "C" const BackendTable* syncscope_backend_v2(void) { return table(); }
