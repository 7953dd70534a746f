// The --pid check (process_check.hpp): the processes a trace's host records name.
#include "syncscope/analysis/process_check.hpp"

#include <set>

#include "syncscope/core/error.hpp"

namespace syncscope {

void require_process(const Trace& trace, std::int64_t pid, const std::string& source) {
  std::set<std::int64_t> pids;
  for (const auto& c : trace.api_calls) pids.insert(c.pid);
  for (const auto& r : trace.ranges) pids.insert(r.pid);
  if (pids.count(pid)) return;
  std::string list;
  for (auto p : pids) list += (list.empty() ? "" : ", ") + std::to_string(p);
  throw InputError("--pid " + std::to_string(pid) + ": " + source +
                   " has no host records of that process; its processes: " + (list.empty() ? "none" : list));
}

}  // namespace syncscope
