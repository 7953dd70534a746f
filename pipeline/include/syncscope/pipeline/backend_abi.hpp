// The measured backend's binary interface: what libsyncscope_backend.so (LibTorch reference
// steps, CUDA kernels, the CUPTI tracer, the calibration microbenchmarks) offers the light
// `syncscope` executable, which loads it with dlopen only to measure (backend.hpp).
//
// C types only: one versioned C entry point, syncscope_backend_v3(), returns a table of
// function pointers whose arguments are integers, C strings and byte buffers. Values cross as
// bytes in formats both sides parse (backend_wire.hpp: JSON for requests and results, the
// trace as syncscope's Chrome JSON), so the two sides need not share a compiler, a standard
// library or the layout of any C++ type; they must agree only on this file. Buffers the
// backend fills are the backend's: the loader hands each back through `release`. No
// exception crosses the boundary: each function catches, returns a status and a message.
//
// kBackendLayoutHash records the layout of the two structs below (the offset and size of
// every field, and their sizes); tests/pipeline/test_backend_abi.cpp derives it again with
// offsetof and sizeof and fails when they differ. Changing a struct: bump kBackendAbiVersion
// (the entry point's name follows it) and record the new hash the test prints.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "syncscope/core/version.hpp"

namespace syncscope::pipeline {

// 3: moe_expert_gemm became fix_device_choice (any registered fix's device choice).
inline constexpr std::uint32_t kBackendAbiVersion = 3;
// dlsym name of the entry point; the number is the ABI version.
inline constexpr const char* kBackendEntryPoint = "syncscope_backend_v3";

// What the backend was built with (BackendTable::capabilities bits).
enum BackendCapability : std::uint32_t {
  kBackendMeasure = 1u << 0,    // LibTorch reference steps + CUPTI tracer
  kBackendCalibrate = 1u << 1,  // CUDA microbenchmarks (syncscope_calibrate)
};

// Status of a table function: what the loader rethrows.
enum BackendStatus : std::int32_t {
  kBackendOk = 0,
  kBackendError = 1,       // syncscope::Error (exit 1)
  kBackendInputError = 2,  // syncscope::InputError (exit 2)
};

// Bytes the backend allocated (UTF-8 text for messages, a wire format otherwise); the loader
// passes each filled one to BackendTable::release. Empty: data null, size 0.
struct BackendBytes {
  char* data;
  std::uint64_t size;
};

// The table syncscope_backend_v3() returns; static in the library, never freed. Each
// function fills its outputs, or returns a BackendStatus != 0 with `error` set. Inputs are
// (pointer, size) pairs in the formats of backend_wire.hpp.
struct BackendTable {
  std::uint32_t abi_version;   // kBackendAbiVersion
  std::uint32_t table_size;    // sizeof(BackendTable)
  std::uint64_t layout_hash;   // backend_layout_hash() as the backend computed it
  const char* build_key;       // backend_build_key() as the backend computed it
  const char* description;     // "LibTorch 2.11.0, CUDA runtime, CUPTI tracer, calibration"
  std::uint32_t capabilities;  // BackendCapability bits
  // 1 when a CUDA device can be measured on; else 0 and `why` says why (driver message).
  std::int32_t (*device_available)(BackendBytes* why);
  // request: a MeasureRequest (wire); trace: the measured trace (Chrome JSON).
  std::int32_t (*measure)(const char* request, std::uint64_t request_size, BackendBytes* trace, BackendBytes* error);
  // options: StepOptions (wire); fix: a registered fix's id; choice: what that fix resolves on
  // the device for the options (FixSpec::torch_device_choice: MoE's "grouped" or "padded"), ""
  // when the backend has no LibTorch; why: when not the first choice.
  std::int32_t (*fix_device_choice)(const char* options, std::uint64_t options_size, std::uint32_t fix,
                                    BackendBytes* choice, BackendBytes* why, BackendBytes* error);
  // versions: RuntimeVersions (wire).
  std::int32_t (*runtime_versions)(BackendBytes* versions, BackendBytes* error);
  // options: CalibrationOptions (wire); measurements: CalibrationMeasurements (wire).
  std::int32_t (*calibrate)(const char* options, std::uint64_t options_size, BackendBytes* measurements,
                            BackendBytes* error);
  // Frees what the backend put in `bytes` and empties it.
  void (*release)(BackendBytes* bytes);
};

// FNV-1a over 64-bit words: the layout of BackendBytes and BackendTable as the compiler at
// hand lays them out (every field's offset and size, in order, then each struct's size).
constexpr std::uint64_t backend_layout_hash() {
  std::uint64_t h = 1469598103934665603ull;
  auto mix = [&h](std::uint64_t v) {
    for (int i = 0; i < 8; ++i) {
      h ^= (v >> (8 * i)) & 0xffu;
      h *= 1099511628211ull;
    }
  };
#define SYNCSCOPE_ABI_FIELD(S, f) \
  mix(offsetof(S, f));            \
  mix(sizeof(S::f))
  SYNCSCOPE_ABI_FIELD(BackendBytes, data);
  SYNCSCOPE_ABI_FIELD(BackendBytes, size);
  mix(sizeof(BackendBytes));
  SYNCSCOPE_ABI_FIELD(BackendTable, abi_version);
  SYNCSCOPE_ABI_FIELD(BackendTable, table_size);
  SYNCSCOPE_ABI_FIELD(BackendTable, layout_hash);
  SYNCSCOPE_ABI_FIELD(BackendTable, build_key);
  SYNCSCOPE_ABI_FIELD(BackendTable, description);
  SYNCSCOPE_ABI_FIELD(BackendTable, capabilities);
  SYNCSCOPE_ABI_FIELD(BackendTable, device_available);
  SYNCSCOPE_ABI_FIELD(BackendTable, measure);
  SYNCSCOPE_ABI_FIELD(BackendTable, fix_device_choice);
  SYNCSCOPE_ABI_FIELD(BackendTable, runtime_versions);
  SYNCSCOPE_ABI_FIELD(BackendTable, calibrate);
  SYNCSCOPE_ABI_FIELD(BackendTable, release);
  mix(sizeof(BackendTable));
#undef SYNCSCOPE_ABI_FIELD
  return h;
}

// The layout this ABI version was defined with, on x86-64 and aarch64 Linux (LP64): the
// test above recomputes backend_layout_hash() and compares.
inline constexpr std::uint64_t kBackendLayoutHash = 0xf95cc1d4253b7c53ull;

// What the two sides must agree on beyond the layout: the ABI version and the wire formats
// (backend_wire.hpp), which follow the syncscope version.
inline std::string backend_build_key() {
  return "abi " + std::to_string(kBackendAbiVersion) + "; syncscope " + version();
}

}  // namespace syncscope::pipeline

// The entry point (C linkage, so dlsym finds it by this name).
extern "C" const syncscope::pipeline::BackendTable* syncscope_backend_v3(void);
