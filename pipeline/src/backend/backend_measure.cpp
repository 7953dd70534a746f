// Measuring one variant on a CUDA GPU: the LibTorch reference step (syncscope_kernels) run
// under the in-process CUPTI tracer (syncscope_tracer), each step inside an NVTX range
// "ProfilerStep#<i>". Built with what the build has: SYNCSCOPE_BACKEND_KERNELS (LibTorch)
// and SYNCSCOPE_BACKEND_TRACER (CUDA: tracer and CUDA runtime); measuring needs both.
#include <fmt/format.h>

#include <string>

#include "backend_parts.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/fixes/fix_spec.hpp"

#if SYNCSCOPE_BACKEND_KERNELS
#include "syncscope/kernels/step.hpp"
#endif
#if SYNCSCOPE_BACKEND_FIX_TORCH
#include "syncscope/fixes/shipped.hpp"
#endif
#if SYNCSCOPE_BACKEND_TRACER
#include "syncscope/tracer/nvtx.hpp"
#include "syncscope/tracer/tracer.hpp"
// Versions for provenance, straight from the CUDA runtime the tracer links (declared here
// so this host-only file needs no CUDA header; both return cudaError_t, 0 on success).
extern "C" int cudaDriverGetVersion(int* version);
extern "C" int cudaRuntimeGetVersion(int* version);
#endif

namespace syncscope::pipeline::backend {

void register_fixes() {
  // Every fix, with its LibTorch hooks where this build has them: this module has its own
  // registry (its static libraries stay local), which the executable's registrations do not
  // reach, and a measured run reads every fix's variant from it.
  fixes::register_shipped_fixes();
#if SYNCSCOPE_BACKEND_FIX_TORCH
  fixes::register_shipped_torch_steps();
#endif
}

std::uint32_t capabilities() {
  std::uint32_t c = 0;
#if SYNCSCOPE_BACKEND_KERNELS && SYNCSCOPE_BACKEND_TRACER
  c |= kBackendMeasure;
#endif
#if SYNCSCOPE_BACKEND_CALIBRATE
  c |= kBackendCalibrate;
#endif
  return c;
}

std::string description() {
  std::string d;
#if SYNCSCOPE_BACKEND_KERNELS
  d += "LibTorch " + kernels::torch_version() + " reference steps";
#else
  d += "no LibTorch reference steps";
#endif
#if SYNCSCOPE_BACKEND_TRACER
  d += ", CUPTI tracer";
#else
  d += ", no CUPTI tracer";
#endif
#if SYNCSCOPE_BACKEND_CALIBRATE
  d += ", calibration";
#endif
  return d;
}

bool device_available(std::string* why) {
#if SYNCSCOPE_BACKEND_KERNELS && SYNCSCOPE_BACKEND_TRACER
  std::string reason;
  const bool ok = kernels::cuda_available() && cuda_device_available(&reason);
  if (!ok && reason.empty()) reason = "LibTorch reports no CUDA support or device";
  if (why != nullptr) *why = reason;
  return ok;
#else
  if (why != nullptr)
    *why =
        "the measured backend was built without the LibTorch reference steps (SYNCSCOPE_ENABLE_TORCH with a CUDA "
        "LibTorch) or without the CUPTI tracer (SYNCSCOPE_ENABLE_CUDA)";
  return false;
#endif
}

Trace measure(const MeasureRequest& request) {
#if SYNCSCOPE_BACKEND_KERNELS && SYNCSCOPE_BACKEND_TRACER
  program::StepOptions o = request.options;
  o.device = "cuda";
  kernels::ReferenceStep step(o);
  for (int i = 0; i < request.warmup_steps; ++i) step.run();
  step.synchronize();
  TracerOptions to;
  to.trace_name = request.trace_name;
  // Every variant is traced the same way, so CUPTI stays attached between variants rather
  // than being finalized and re-attached for each (its slowdown after profiling matters
  // only to untraced work, and the process ends after the run).
  to.finalize_on_stop = false;
  Tracer tracer(to);
  tracer.start();
  for (int i = 0; i < request.repeat_steps; ++i) {
    // The analyses find steps by this name, as in torch.profiler traces.
    const std::string range = "ProfilerStep#" + std::to_string(i);
    nvtx::push(range.c_str());
    step.run();
    nvtx::pop();
  }
  tracer.stop();
  Trace t = tracer.take();
  if (!nvtx::kEnabled)
    throw Error("this build has no NVTX: measured steps cannot be delimited (rebuild with the tracer)");
  return t;
#else
  (void)request;
  throw Error(
      "this measured backend cannot measure: it was built without the LibTorch reference steps or the CUPTI "
      "tracer");
#endif
}

std::string fix_device_choice(const program::StepOptions& options, std::uint32_t fix, std::string* why) {
  const fixes::FixSpec& f = fixes::fix_spec(static_cast<fixes::Fix>(fix));  // throws for an unknown id
#if SYNCSCOPE_BACKEND_FIX_TORCH
  if (!f.torch_device_choice) throw Error("fix " + f.name + " resolves nothing on the device");
  return f.torch_device_choice(options, why);
#else
  (void)options;
  if (why != nullptr) *why = "no LibTorch in this measured backend (fix " + f.name + ")";
  return "";
#endif
}

RuntimeVersions runtime_versions() {
  RuntimeVersions v;
#if SYNCSCOPE_BACKEND_TRACER
  int drv = 0, rt = 0;
  if (cudaDriverGetVersion(&drv) == 0) v.driver = fmt::format("{}.{}", drv / 1000, (drv % 1000) / 10);
  if (cudaRuntimeGetVersion(&rt) == 0) v.cuda_runtime = fmt::format("{}.{}", rt / 1000, (rt % 1000) / 10);
#endif
#if SYNCSCOPE_BACKEND_KERNELS
  v.libtorch = kernels::torch_version();
#endif
  return v;
}

}  // namespace syncscope::pipeline::backend
