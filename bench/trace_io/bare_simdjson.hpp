// The bare simdjson On-Demand pass the trace import benchmark compares against, in a
// translation unit of its own so that it can be built for this CPU (see CMakeLists.txt).
#pragma once

#include <cstdint>
#include <string>

namespace syncscope::bench {

struct BarePass {
  double seconds = 0;           // read the whole (gunzipped) file into memory, then parse it
  double warm_seconds = 0;      // the same parse again: file and parser already in memory
  double cpu_seconds = 0;       // CPU time of the first pass (this process)
  double warm_cpu_seconds = 0;  // CPU time of the warm pass (this thread): steadier than wall under load
  std::uint64_t json_bytes = 0;
  std::uint64_t events = 0;
  std::uint64_t checksum = 0;  // keeps the compiler from dropping the work
};

// One On-Demand pass touching every key and value of every event of FILE's traceEvents.
BarePass bare_simdjson_pass(const std::string& path);

// simdjson's kernels in this pass: the On-Demand iteration's (fixed when this file is
// compiled: "fallback" for baseline x86-64, "haswell" with AVX2, "icelake" with AVX-512)
// and stage 1's (chosen at run time by libsimdjson for this CPU).
const char* bare_ondemand_kernel();
std::string bare_stage1_kernel();
const char* bare_simdjson_version();

// CPU seconds used so far by this process (all threads) or by the calling thread.
double process_cpu_seconds();
double thread_cpu_seconds();

}  // namespace syncscope::bench
