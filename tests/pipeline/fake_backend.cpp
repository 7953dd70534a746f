// A stand-in measured backend for tests/pipeline: the real C table interface of
// backend_abi.hpp (values as backend_wire.hpp bytes), built from this tree, whose "measurement" is the simulator's
// trace of the step program (H200 profile) on a device named "Fake NVIDIA H200 (test backend)", altered in two known
// ways (distort_like_a_measurement) so that the pipeline's comparison of measured and simulated traces (sim_check.json)
// has differences to find, and the test knows them:
//   1. every timestamp doubled: a device that runs everything at half the simulated speed;
//   2. one extra zero-length cudaStreamSynchronize per step, on a host thread of its own, at
//      the middle of a kernel of that step: one more sync point per step that blocks for 0 ns
//      and leaves no bubble (the GPU is busy when it returns; analysis.hpp's definitions).
// It lets the measured path of the pipeline (loading, producing, GPU matching, simulator
// checks, provenance) run on a CPU machine. Never installed; a test fixture only.
//
// FAKE_BACKEND_KIND: 0 the fake above; 1 a table of another ABI version; 2 a table with
// another build key. SYNCSCOPE_FAKE_BACKEND_NO_DEVICE=1 makes it report no device.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "syncscope/fixes/shipped.hpp"
#include "syncscope/model/gpu_profile.hpp"
#include "syncscope/pipeline/backend_abi.hpp"
#include "syncscope/pipeline/backend_wire.hpp"
#include "syncscope/program/step_program.hpp"
#include "syncscope/sim/simulator.hpp"

#ifndef FAKE_BACKEND_KIND
#define FAKE_BACKEND_KIND 0
#endif

namespace {

using namespace syncscope;
using namespace syncscope::pipeline;

// The two known differences described at the top (tests/pipeline/test_run.cpp asserts each
// metric of the comparison against them).
void distort_like_a_measurement(Trace& t) {
  auto twice = [](auto& records) {
    for (auto& r : records) {
      r.start *= 2;
      r.end *= 2;
    }
  };
  twice(t.api_calls);
  twice(t.kernels);
  twice(t.memcpys);
  twice(t.memsets);
  twice(t.syncs);
  twice(t.ranges);
  twice(t.overheads);
  for (auto& e : t.cuda_events) e.timestamp *= 2;
  for (auto& o : t.others) {
    o.start *= 2;
    o.duration *= 2;
  }
  std::int64_t pid = 0, tid = 0;
  for (const auto& c : t.api_calls) {
    pid = c.pid;
    tid = std::max(tid, c.tid);
  }
  const StringId sync_name = t.intern("cudaStreamSynchronize");
  std::vector<ApiCall> extra;
  for (const auto& r : t.ranges) {
    if (r.kind == RangeKind::GpuUserAnnotation || t.str(r.name).rfind("ProfilerStep#", 0) != 0) continue;
    // The longest kernel whose middle lies in the step: the middle is strictly inside the
    // kernel (doubled durations are >= 2 ns), so the sync's bubble is 0, and inside the
    // step, so the step counts it.
    const Kernel* k = nullptr;
    for (const auto& x : t.kernels) {
      const Ns mid = x.start + (x.end - x.start) / 2;
      if (mid >= r.start && mid < r.end && x.end - x.start >= 2 &&
          (k == nullptr || x.end - x.start > k->end - k->start))
        k = &x;
    }
    if (k == nullptr) continue;
    ApiCall c;
    c.name = sync_name;
    c.pid = pid;
    c.tid = tid + 1;  // its own thread: never merged with the step's copies or calls
    c.device = k->device;
    c.start = c.end = k->start + (k->end - k->start) / 2;
    extra.push_back(c);
  }
  t.api_calls.insert(t.api_calls.end(), extra.begin(), extra.end());
  t.finalize();
}

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
    Trace t = sim::simulate(program::build_step_program(r.options), model::load_gpu_profile("H200"), so);
    distort_like_a_measurement(t);
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

std::int32_t fix_device_choice(const char*, std::uint64_t, std::uint32_t fix, BackendBytes* out, BackendBytes* why,
                               BackendBytes*) {
  put(out, "padded");
  put(why, "fake backend pads (fix " + std::to_string(fix) + ")");
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
  // A module keeps its own registry, as the real backend does (backend_entry.cpp): at load.
  static const bool fixes_registered = (syncscope::fixes::register_shipped_fixes(), true);
  (void)fixes_registered;
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
                              &fix_device_choice,
                              &runtime_versions,
                              &calibrate,
                              &release};
  return &t;
}

}  // namespace

extern "C" const BackendTable* syncscope_backend_v3(void) { return table(); }
