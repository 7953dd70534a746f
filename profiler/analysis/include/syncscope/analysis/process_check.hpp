// `--pid P` (analyze, and the Python module's pid=): a process the trace never mentions is a
// wrong option, not a trace without CUDA calls. One check for every caller.
#pragma once

#include <cstdint>
#include <string>

#include "syncscope/trace/trace.hpp"

namespace syncscope {

// Throws InputError ("--pid P: SOURCE has no host records of that process; its processes:
// ...") when no API call or host range of `trace` belongs to process `pid`.
void require_process(const Trace& trace, std::int64_t pid, const std::string& source);

}  // namespace syncscope
