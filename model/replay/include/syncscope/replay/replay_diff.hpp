// `syncscope diff BEFORE AFTER`: what changed between two traces of a run (step time, syncs
// per cause, bubbles, copy/compute overlap per direction, GPU busy, kernel time by name), and,
// given what-if edits, the replayed prediction of AFTER from BEFORE against the real AFTER:
// the accuracy of a what-if (model/README.md, "Replay").
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "syncscope/replay/replay.hpp"
#include "syncscope/trace/trace.hpp"

namespace syncscope::replay {

// Per-step medians of one trace (analysis windows: steps matching the glob, else the whole
// trace as one window).
struct TraceDigest {
  std::string source;
  std::size_t steps = 0;
  double step_ns = 0;
  double syncs = 0;
  std::map<std::string, double> syncs_by_cause;  // per step (mean over steps)
  double bubble_ns = 0;
  double blocked_ns = 0;
  double h2d_overlap = 0, d2h_overlap = 0;  // fractions
  double gpu_busy_ns = 0;
  std::map<std::string, double> kernel_ns_by_name;  // kernels starting in steps, per step (mean)
};

struct DiffReport {
  TraceDigest before, after;
  std::vector<std::string> edits;
  std::optional<double> predicted_after_step_ns;  // replay of BEFORE with the edits (median step)
  std::optional<double> what_if_error;            // (predicted - real AFTER) / real AFTER
  std::vector<std::string> warnings;
};

TraceDigest digest_trace(const Trace& trace, const std::string& step_glob, const std::string& source);
DiffReport diff_traces(const Trace& before, const Trace& after, const std::vector<std::string>& edits,
                       const model::TracePredictOptions& options, const std::string& before_name,
                       const std::string& after_name);
std::string diff_to_json(const DiffReport& d);

}  // namespace syncscope::replay
