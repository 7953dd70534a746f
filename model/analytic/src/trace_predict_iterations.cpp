// Iterations in a trace without step ranges: a training loop leaves one range per
// iteration that repeats. In order of trust:
// 0. torch.optim's optimizer step: Optimizer.step is wrapped in
//    record_function(f"Optimizer.step#{cls}.step") (torch/optim/optimizer.py,
//    profile_hook_step), once per iteration; an iteration ends where one ends.
// 1. the model's forward: the top module's "nn.Module: <Name>_<i>" range (with_modules) or a
//    range named like "forward" (a record_function or a Python frame); an iteration starts
//    where one starts.
// 2. a backward range: "backward" as a user range or the Python frame of Tensor.backward,
//    not the autograd engine's per-node ops ("autograd::engine::evaluate_function: ...",
//    "MmBackward0"), which repeat many times per iteration.
// A marker qualifies when its name occurs at least twice, on one thread, each occurrence
// after the previous one ended; of the best rank, the name with the largest total duration
// wins (the outermost: a model's forward contains its submodules'). Only whole iterations
// count: the windows between consecutive occurrences.
#include <algorithm>
#include <cctype>
#include <map>

#include <fmt/format.h>

#include "syncscope/model/trace_predict_facts.hpp"

namespace syncscope::model::detail {

namespace {

// "MmBackward0", "CheckpointFunctionBackward": an autograd node, one per op.
bool is_autograd_node(std::string_view name) {
  for (std::size_t i = name.find("Backward"); i != std::string_view::npos; i = name.find("Backward", i + 1))
    if (i > 0 && std::isalpha(static_cast<unsigned char>(name[i - 1]))) return true;
  return false;
}

int marker_rank(std::string_view name) {
  const std::string n = lower(name);
  if (n.rfind("optimizer.step", 0) == 0) return 0;
  if (n.rfind("autograd::", 0) == 0 || n.rfind("profilerstep", 0) == 0) return -1;
  const bool backward = n.find("backward") != std::string::npos;
  if (!backward && (n.rfind("nn.module: ", 0) == 0 || n.find("forward") != std::string::npos)) return 1;
  if (backward && !is_autograd_node(name)) return 2;
  return -1;
}

struct Candidate {
  int rank = -1;
  std::vector<Window> occurrences;
  Ns total = 0;
};

bool qualifies(std::vector<Window>& occ) {
  if (occ.size() < 2) return false;
  std::sort(occ.begin(), occ.end(), [](const Window& a, const Window& b) { return a.start < b.start; });
  for (std::size_t i = 1; i < occ.size(); ++i)
    if (occ[i].tid != occ[0].tid || occ[i].start < occ[i - 1].end) return false;
  return true;
}

}  // namespace

IterationMarkers find_iteration_markers(const Trace& trace) {
  std::map<StringId, Candidate> by_name;
  for (const auto& r : trace.ranges) {
    if (!is_host_range(r)) continue;
    auto it = by_name.find(r.name);
    if (it == by_name.end()) {
      const int rank = marker_rank(trace.str(r.name));
      it = by_name.emplace(r.name, Candidate{rank, {}, 0}).first;
    }
    if (it->second.rank < 0) continue;
    it->second.occurrences.push_back({r.start, r.end, r.pid, r.tid, std::string(trace.str(r.name)), -1});
    it->second.total += r.end - r.start;
  }
  const Candidate* best = nullptr;
  for (auto& [name, c] : by_name) {
    if (c.rank < 0 || !qualifies(c.occurrences)) continue;
    if (!best || c.rank < best->rank || (c.rank == best->rank && c.total > best->total)) best = &c;
  }
  IterationMarkers out;
  if (!best) return out;
  const auto& occ = best->occurrences;
  for (std::size_t i = 1; i < occ.size(); ++i) {
    // An optimizer step closes its iteration; a forward or backward range opens one.
    const Ns a = best->rank == 0 ? occ[i - 1].end : occ[i - 1].start;
    const Ns b = best->rank == 0 ? occ[i].end : occ[i].start;
    out.windows.push_back({a, b, -1, -1, fmt::format("iteration {}", i - 1), -1});
  }
  const char* how = best->rank == 0 ? "optimizer step" : best->rank == 1 ? "forward" : "backward";
  out.description = fmt::format("{} whole iterations between {} repeated {} ranges '{}'", out.windows.size(),
                                occ.size(), how, occ.front().name);
  return out;
}

}  // namespace syncscope::model::detail
