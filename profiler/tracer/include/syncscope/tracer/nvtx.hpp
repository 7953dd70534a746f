// NVTX ranges for step / forward / backward / layer boundaries, so any tracer (syncscope,
// nsys, torch.profiler with emit_nvtx) sees where a step or a layer starts and ends.
//
//   syncscope::nvtx::ScopedRange step("step", i);      // "step_03"
//   syncscope::nvtx::ScopedRange layer("layer", l);    // "layer_07"
//   syncscope::nvtx::ScopedRange fwd("forward");
//
// Names with an index are "<name>_<index>" with at least two digits, like the record_function
// names of tests/device/item_loop.py ("layer_00"), so one --layer-range glob ("layer_*")
// matches both. Ranges are push/pop ranges in NVTX's default domain, on the calling thread.
//
// Real only when the build defines SYNCSCOPE_HAVE_NVTX (linking syncscope_tracer or
// syncscope_nvtx does); otherwise every call compiles to nothing, so CPU-only code may use
// these freely. With NVTX, a call costs a few ns unless a tool is attached (NVTX's loader
// sees no injection library and turns the calls into no-ops).
#pragma once

#if defined(SYNCSCOPE_HAVE_NVTX) && SYNCSCOPE_HAVE_NVTX
#include <nvtx3/nvToolsExt.h>

#include <cstdio>
#endif

namespace syncscope::nvtx {

#if defined(SYNCSCOPE_HAVE_NVTX) && SYNCSCOPE_HAVE_NVTX
inline constexpr bool kEnabled = true;

inline void push(const char* name) { nvtxRangePushA(name); }
inline void push(const char* name, long long index) {
  char buf[128];
  std::snprintf(buf, sizeof buf, "%s_%02lld", name, index);
  nvtxRangePushA(buf);
}
inline void pop() { nvtxRangePop(); }
#else
inline constexpr bool kEnabled = false;

inline void push(const char*) {}
inline void push(const char*, long long) {}
inline void pop() {}
#endif

// Pushes on construction, pops on destruction (also when unwinding).
class ScopedRange {
 public:
  explicit ScopedRange(const char* name) { push(name); }
  ScopedRange(const char* name, long long index) { push(name, index); }
  ~ScopedRange() { pop(); }
  ScopedRange(const ScopedRange&) = delete;
  ScopedRange& operator=(const ScopedRange&) = delete;
};

}  // namespace syncscope::nvtx
