// The measured backend's binary interface: what libsyncscope_backend.so (LibTorch reference
// steps, CUDA kernels, the CUPTI tracer, the calibration microbenchmarks) offers the light
// `syncscope` executable, which loads it with dlopen only to measure (backend.hpp).
//
// Torch-free and CUDA-free, like every public header. One versioned C entry point,
// syncscope_backend_v1(), returns a table of function pointers. The table passes C++ types
// (Trace, StepOptions, CalibrationMeasurements) by pointer, so both sides must be built by
// the same compiler from the same headers: the table carries a build key (ABI version,
// syncscope version, compiler, libstdc++ ABI, sanitizer, the sizes of the types passed),
// and the loader refuses a library whose key differs. No exception crosses the boundary:
// each function catches, returns a status and a message, and the loader rethrows.
//
// Change anything here (a field, a function, a type passed): bump kBackendAbiVersion.
#pragma once

#include <cstdint>
#include <string>

#include "syncscope/core/version.hpp"
#include "syncscope/kernels/step_options.hpp"
#include "syncscope/model/calibration.hpp"
#include "syncscope/trace/trace.hpp"

namespace syncscope::pipeline {

inline constexpr std::uint32_t kBackendAbiVersion = 1;
// dlsym name of the entry point; the number is the ABI version.
inline constexpr const char* kBackendEntryPoint = "syncscope_backend_v1";

// What the backend was built with (BackendTable::capabilities bits).
enum BackendCapability : std::uint32_t {
  kBackendMeasure = 1u << 0,    // LibTorch reference steps + CUPTI tracer
  kBackendCalibrate = 1u << 1,  // CUDA microbenchmarks (syncscope_calibrate)
};

// One measured variant: run `warmup_steps` untraced steps, then `repeat_steps` traced steps
// delimited by NVTX ranges "ProfilerStep#<i>" (the names torch.profiler gives steps).
struct MeasureRequest {
  kernels::StepOptions options;  // device is set to "cuda" by the backend
  int warmup_steps = 0;
  int repeat_steps = 1;
  std::string trace_name;
};

// Provenance of a measured run ("" where unknown).
struct RuntimeVersions {
  std::string driver;        // cudaDriverGetVersion, "13.0"
  std::string cuda_runtime;  // cudaRuntimeGetVersion, "13.0"
  std::string libtorch;      // "2.11.0"
};

// Status of a table function: what the loader rethrows.
enum BackendStatus : int {
  kBackendOk = 0,
  kBackendError = 1,       // syncscope::Error (exit 1)
  kBackendInputError = 2,  // syncscope::InputError (exit 2)
};

// The table syncscope_backend_v1() returns; static in the library, never freed. Each
// function fills its output, or returns a BackendStatus != 0 with `error` set.
struct BackendTable {
  std::uint32_t abi_version;  // kBackendAbiVersion
  std::uint32_t table_size;   // sizeof(BackendTable)
  const char* build_key;      // backend_build_key() as the backend computed it
  const char* description;    // "LibTorch 2.11.0, CUDA runtime, CUPTI tracer, calibration"
  std::uint32_t capabilities;  // BackendCapability bits
  // 1 when a CUDA device can be measured on; else 0 and `why` says why (driver message).
  int (*device_available)(std::string* why);
  int (*measure)(const MeasureRequest* request, Trace* out, std::string* error);
  // kernels::resolve_moe_expert_gemm: "grouped" or "padded", `why` when not grouped.
  int (*moe_expert_gemm)(const kernels::StepOptions* options, std::string* out, std::string* why,
                         std::string* error);
  int (*runtime_versions)(RuntimeVersions* out, std::string* error);
  int (*calibrate)(const CalibrationOptions* options, CalibrationMeasurements* out, std::string* error);
};

#if defined(__SANITIZE_ADDRESS__)
#define SYNCSCOPE_BACKEND_ASAN "asan"
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SYNCSCOPE_BACKEND_ASAN "asan"
#endif
#endif
#ifndef SYNCSCOPE_BACKEND_ASAN
#define SYNCSCOPE_BACKEND_ASAN "plain"
#endif

// Everything the two sides must agree on for the C++ types in the table to mean the same.
inline std::string backend_build_key() {
  return "abi " + std::to_string(kBackendAbiVersion) + "; syncscope " + version() + "; compiler " + __VERSION__ +
         "; cxx11abi " + std::to_string(_GLIBCXX_USE_CXX11_ABI) + "; " + SYNCSCOPE_BACKEND_ASAN + "; sizes " +
         std::to_string(sizeof(Trace)) + "," + std::to_string(sizeof(TraceMetadata)) + "," +
         std::to_string(sizeof(Kernel)) + "," + std::to_string(sizeof(Memcpy)) + "," + std::to_string(sizeof(ApiCall)) +
         "," + std::to_string(sizeof(Range)) + "," +
         std::to_string(sizeof(kernels::StepOptions)) + "," + std::to_string(sizeof(ModelShape)) + "," +
         std::to_string(sizeof(MeasureRequest)) + "," + std::to_string(sizeof(RuntimeVersions)) + "," +
         std::to_string(sizeof(CalibrationOptions)) + "," + std::to_string(sizeof(CalibrationMeasurements)) + "," +
         std::to_string(sizeof(BackendTable));
}

}  // namespace syncscope::pipeline

// The entry point (C linkage, so dlsym finds it by this name).
extern "C" const syncscope::pipeline::BackendTable* syncscope_backend_v1(void);
