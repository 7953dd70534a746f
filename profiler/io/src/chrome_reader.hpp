#pragma once

#include <cstddef>
#include <string>

#include "byte_source.hpp"
#include "syncscope/trace/trace.hpp"

namespace syncscope::io_detail {

// Streams Chrome trace JSON (Kineto conventions, or our own writer's) from `source` into a
// finalized Trace. `source_name` names the input in error messages.
Trace read_chrome_json(ByteSource& source, const std::string& source_name, std::size_t chunk_bytes);

}  // namespace syncscope::io_detail
