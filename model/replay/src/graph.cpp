// Builds the replay graph from a trace (replay.hpp gives the model). O(n log n): calls and
// activities are sorted once; every join is a binary search or a hash lookup.
#include <algorithm>
#include <array>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <span>
#include <tuple>
#include <unordered_map>

#include <fmt/format.h>

#include "graph_builder.hpp"
#include "syncscope/analysis/analysis.hpp"
#include "syncscope/core/glob.hpp"
#include "syncscope/replay/replay.hpp"
#include "syncscope/trace/api_classes.hpp"

namespace syncscope::replay {
namespace {

using namespace graph_detail;

// Sorts `v` by `less`, whose keys all differ (so there is one sorted order). A lane's list is
// its kernels, then its copies, then its memsets, each run already in order of start
// (Trace::finalize sorts every record kind): a few runs are merged, which costs a pass each
// instead of a sort; more fall back to a sort.
template <class Less>
void sort_runs(std::vector<std::uint32_t>& v, const Less& less) {
  std::size_t runs = 1;
  for (std::size_t k = 1; k < v.size() && runs <= 8; ++k) runs += less(v[k], v[k - 1]) ? 1 : 0;
  if (runs > 8) {
    std::sort(v.begin(), v.end(), less);
    return;
  }
  std::size_t start = 0;  // [0, start) is in order; [start, k) is the run being read
  for (std::size_t k = 1; k <= v.size(); ++k) {
    if (k < v.size() && !less(v[k], v[k - 1])) continue;
    if (start > 0)
      std::inplace_merge(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(start),
                         v.begin() + static_cast<std::ptrdiff_t>(k), less);
    start = k;
  }
}

}  // namespace

namespace {

std::vector<Range> read_step_ranges(Builder& bld) {
  ReplayGraph& g = bld.g;
  const Trace& trace = bld.trace;
  const auto& calls = trace.api_calls;
  (void)g;
  (void)trace;
  (void)calls;
  const ReplayOptions& options = bld.options;
  // The ranges that delimit steps, first.
  std::vector<Range> step_ranges;
  {
    std::vector<std::int8_t> is_step(trace.strings.size(), -1);  // by name id: matches the glob
    auto step_name = [&](StringId id) {
      if (id >= is_step.size()) return glob_match(options.step_glob, trace.str(id));
      if (is_step[id] < 0) is_step[id] = glob_match(options.step_glob, trace.str(id)) ? 1 : 0;
      return is_step[id] == 1;
    };
    for (const Range& r : trace.ranges)
      if (r.kind != RangeKind::GpuUserAnnotation && (!options.pid || r.pid == *options.pid) && step_name(r.name))
        step_ranges.push_back(r);
  }
  return step_ranges;
}

void host_calls(Builder& bld) {
  ReplayGraph& g = bld.g;
  const Trace& trace = bld.trace;
  const auto& calls = trace.api_calls;
  (void)g;
  (void)trace;
  (void)calls;
  const ReplayOptions& options = bld.options;
  auto& owner = bld.owner;
  auto& thread_index = bld.thread_index;
  // ---- host: top-level calls per thread ----
  std::vector<std::uint32_t> order;
  order.reserve(calls.size());
  for (std::size_t i = 0; i < calls.size(); ++i)
    if (!options.pid || calls[i].pid == *options.pid) order.push_back(static_cast<std::uint32_t>(i));
  // Every key differs (the index breaks ties), so the sorted order is one order; traces arrive
  // sorted by start (Trace::finalize), which for one thread is usually this order already.
  auto by_thread = [&](std::uint32_t a, std::uint32_t b) {
    const auto &x = calls[a], &y = calls[b];
    return std::tie(x.pid, x.tid, x.start, y.end, a) < std::tie(y.pid, y.tid, y.start, x.end, b);
  };
  if (!std::is_sorted(order.begin(), order.end(), by_thread)) std::sort(order.begin(), order.end(), by_thread);
  owner.assign(calls.size(), kNoNode);
  // At most this many nodes: reserved once, so the node array is never copied while it grows
  // (pages reserved but not used cost no memory).
  g.nodes.reserve(order.size() + trace.kernels.size() + trace.memcpys.size() + trace.memsets.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    const ApiCall& c = calls[order[i]];
    auto [it, fresh] = thread_index.try_emplace({c.pid, c.tid}, static_cast<std::int32_t>(g.threads.size()));
    if (fresh) {
      g.threads.push_back({c.pid, c.tid});
      g.thread_calls.emplace_back();
    }
    auto& list = g.thread_calls[static_cast<std::size_t>(it->second)];
    if (!list.empty()) {
      ReplayNode& outer = g.nodes[list.back()];
      if (c.start < outer.rec_end && c.end <= outer.rec_end) {  // a call it made: part of it
        owner[order[i]] = list.back();
        continue;
      }
    }
    ReplayNode n;
    n.kind = ReplayNode::Kind::Call;
    n.record = order[i];
    n.rec_start = c.start;
    n.rec_end = std::max(c.start, c.end);
    n.own_ns = n.rec_end - n.rec_start;
    n.thread = it->second;
    if (!list.empty()) {
      const ReplayNode& p = g.nodes[list.back()];
      n.prev = list.back();
      if (c.start < p.rec_end) ++g.problems.overlapping_calls;
      n.gap_ns = std::max<Ns>(0, c.start - p.rec_end);
    }
    owner[order[i]] = static_cast<std::uint32_t>(g.nodes.size());
    list.push_back(static_cast<std::uint32_t>(g.nodes.size()));
    g.nodes.push_back(std::move(n));
  }
}

void correlations(Builder& bld) {
  ReplayGraph& g = bld.g;
  const Trace& trace = bld.trace;
  const auto& calls = trace.api_calls;
  (void)g;
  (void)trace;
  (void)calls;
  auto& owner = bld.owner;
  auto& corr_calls = bld.corr_calls;
  for (std::size_t i = 0; i < calls.size(); ++i)
    if (calls[i].correlation != 0 && owner[i] != kNoNode) corr_calls.push_back({calls[i].correlation, owner[i]});
  std::stable_sort(corr_calls.begin(), corr_calls.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  corr_calls.erase(std::unique(corr_calls.begin(), corr_calls.end(),
                               [](const auto& a, const auto& b) { return a.first == b.first; }),
                   corr_calls.end());
}

void gpu_activities(Builder& bld) {
  ReplayGraph& g = bld.g;
  const Trace& trace = bld.trace;
  const auto& calls = trace.api_calls;
  (void)g;
  (void)trace;
  (void)calls;
  auto call_of_corr = [&](std::uint64_t corr) { return bld.call_of_corr(corr); };
  auto& lane_index = bld.lane_index;
  auto& first_gpu = bld.first_gpu;
  // ---- GPU activities ----
  auto lane_of = [&](std::int32_t device, std::int64_t stream) {
    auto [it, fresh] = lane_index.try_emplace({device, stream}, static_cast<std::int32_t>(g.lanes.size()));
    if (fresh) g.lanes.push_back({device, stream});
    return it->second;
  };
  first_gpu = g.nodes.size();
  auto add_gpu = [&](ReplayNode::Kind kind, std::size_t index, const GpuActivity& a, CopyKind dir) {
    ReplayNode n;
    n.kind = kind;
    n.record = static_cast<std::uint32_t>(index);
    n.rec_start = a.start;
    n.rec_end = std::max(a.start, a.end);
    n.own_ns = n.rec_end - n.rec_start;
    n.lane = lane_of(a.device, a.stream);
    n.direction = dir;
    if (const std::uint32_t launcher = call_of_corr(a.correlation); launcher != kNoNode) {
      n.launch = launcher;
    } else {
      // Anchored at its recorded start (replay.cpp): what issued it is not on a traced thread.
      ++g.problems.gpu_without_launch;
      ++(kind == ReplayNode::Kind::Kernel ? g.problems.anchored_kernels
         : kind == ReplayNode::Kind::Copy ? g.problems.anchored_copies
                                          : g.problems.anchored_memsets);
    }
    g.nodes.push_back(std::move(n));
  };
  for (std::size_t i = 0; i < trace.kernels.size(); ++i) {
    add_gpu(ReplayNode::Kind::Kernel, i, trace.kernels[i], CopyKind::Unknown);
    if (is_communication_kernel(trace.str(trace.kernels[i].name))) {
      g.nodes.back().comm = true;
      ++g.problems.comm_kernels;
    }
  }
  for (std::size_t i = 0; i < trace.memcpys.size(); ++i)
    add_gpu(ReplayNode::Kind::Copy, i, trace.memcpys[i], trace.memcpys[i].kind);
  for (std::size_t i = 0; i < trace.memsets.size(); ++i)
    add_gpu(ReplayNode::Kind::Memset, i, trace.memsets[i], CopyKind::Unknown);
  g.problems.no_gpu_records = g.nodes.size() == first_gpu;
}

void stream_order(Builder& bld) {
  ReplayGraph& g = bld.g;
  const Trace& trace = bld.trace;
  const auto& calls = trace.api_calls;
  (void)g;
  (void)trace;
  (void)calls;
  auto& lanes = bld.lanes;
  auto& first_gpu = bld.first_gpu;
  auto issue_time = [&](std::uint32_t n) {
    const ReplayNode& x = g.nodes[n];
    return x.launch != kNoNode ? g.nodes[x.launch].rec_start : x.rec_start;
  };
  // Stream order and copy engines, by recorded start.
  lanes.nodes.resize(g.lanes.size());
  lanes.issue_max.resize(g.lanes.size());
  std::map<std::pair<std::int32_t, int>, std::vector<std::uint32_t>> engines;  // (device, direction)
  for (std::size_t i = first_gpu; i < g.nodes.size(); ++i) {
    const ReplayNode& n = g.nodes[i];
    lanes.nodes[static_cast<std::size_t>(n.lane)].push_back(static_cast<std::uint32_t>(i));
    if (n.kind == ReplayNode::Kind::Copy && (n.direction == CopyKind::HtoD || n.direction == CopyKind::DtoH))
      engines[{g.lanes[static_cast<std::size_t>(n.lane)].first, static_cast<int>(n.direction)}].push_back(
          static_cast<std::uint32_t>(i));
  }
  auto by_start = [&](std::uint32_t a, std::uint32_t b) {
    return std::tie(g.nodes[a].rec_start, g.nodes[a].rec_end, a) <
           std::tie(g.nodes[b].rec_start, g.nodes[b].rec_end, b);
  };
  for (std::size_t l = 0; l < lanes.nodes.size(); ++l) {
    auto& v = lanes.nodes[l];
    sort_runs(v, by_start);
    Ns running = std::numeric_limits<Ns>::min();
    for (std::size_t k = 0; k < v.size(); ++k) {
      if (k > 0) g.nodes[v[k]].prev = v[k - 1];
      running = std::max(running, issue_time(v[k]));
      lanes.issue_max[l].push_back(running);
    }
  }
  for (auto& [key, v] : engines) {
    sort_runs(v, by_start);
    for (std::size_t k = 1; k < v.size(); ++k) g.nodes[v[k]].engine_prev = v[k - 1];
  }
}

void launched_index(Builder& bld) {
  ReplayGraph& g = bld.g;
  const Trace& trace = bld.trace;
  const auto& calls = trace.api_calls;
  (void)g;
  (void)trace;
  (void)calls;
  auto& launched_at = bld.launched_at;
  auto& launched_flat = bld.launched_flat;
  auto& first_gpu = bld.first_gpu;
  launched_at.assign(first_gpu + 1, 0);
  for (std::size_t i = first_gpu; i < g.nodes.size(); ++i)
    if (g.nodes[i].launch != kNoNode) ++launched_at[g.nodes[i].launch + 1];
  for (std::size_t c = 0; c < first_gpu; ++c) launched_at[c + 1] += launched_at[c];
  launched_flat.resize(launched_at[first_gpu]);
  {
    std::vector<std::uint32_t> fill(launched_at.begin(), launched_at.end() - 1);
    for (std::size_t i = first_gpu; i < g.nodes.size(); ++i)
      if (g.nodes[i].launch != kNoNode) launched_flat[fill[g.nodes[i].launch]++] = static_cast<std::uint32_t>(i);
  }
}

void steps(Builder& bld, const std::vector<Range>& step_ranges) {
  ReplayGraph& g = bld.g;
  const Trace& trace = bld.trace;
  auto& thread_index = bld.thread_index;
  for (const Range& r : step_ranges) {
    ReplayStepWindow w;
    w.name = std::string(trace.str(r.name));
    auto it = thread_index.find({r.pid, r.tid});
    w.thread = it != thread_index.end() ? it->second : -1;
    if (w.thread < 0 && g.threads.size() == 1) w.thread = 0;  // a range without thread ids in a one-thread trace
    w.rec_start = r.start;
    w.rec_end = std::max(r.start, r.end);
    g.steps.push_back(std::move(w));
  }
  std::sort(g.steps.begin(), g.steps.end(),
            [](const ReplayStepWindow& a, const ReplayStepWindow& b) { return a.rec_start < b.rec_start; });
  if (g.steps.empty()) {
    g.problems.no_steps = true;
    // One window: the busiest thread's first call to its last.
    std::size_t best = 0;
    for (std::size_t t = 0; t < g.thread_calls.size(); ++t)
      if (g.thread_calls[t].size() > g.thread_calls[best].size()) best = t;
    if (!g.thread_calls.empty() && !g.thread_calls[best].empty()) {
      ReplayStepWindow w;
      w.name = "whole trace";
      w.thread = static_cast<std::int32_t>(best);
      w.rec_start = g.nodes[g.thread_calls[best].front()].rec_start;
      w.rec_end = g.nodes[g.thread_calls[best].back()].rec_end;
      g.steps.push_back(std::move(w));
    }
  }
}

// `points`: the analysis's sync points when the caller has them, else found here.
// `consume`: the trace itself, when the caller is done with it (then `points` is given, and
// the graph reads no range but the steps): its ranges, the largest of its records, are released
// once the steps are read from them, and the rest once the graph is built.
ReplayGraph build_graph(const Trace& trace, const ReplayOptions& options, const std::vector<SyncPoint>* points,
                        Trace* consume) {
  Builder bld(trace, options);
  bld.g.step_glob = options.step_glob;
  const std::vector<Range> step_ranges = read_step_ranges(bld);
  if (consume && points) std::vector<Range>().swap(consume->ranges);
  host_calls(bld);
  link_threads(bld.g);
  correlations(bld);
  gpu_activities(bld);
  stream_order(bld);
  launched_index(bld);
  event_records(bld);
  wait_edges(bld);
  sync_times(bld);
  launch_latencies(bld);
  sync_points(bld, points);
  steps(bld, step_ranges);
  if (consume) {
    const Trace released = std::move(*consume);
  }
  return std::move(bld.g);
}

}  // namespace

ReplayGraph build_replay_graph(const Trace& trace, const ReplayOptions& options) {
  return build_graph(trace, options, nullptr, nullptr);
}

ReplayGraph build_replay_graph(const Trace& trace, const ReplayOptions& options,
                               const std::vector<SyncPoint>& sync_points) {
  return build_graph(trace, options, &sync_points, nullptr);
}

ReplayGraph build_replay_graph(Trace&& trace, const ReplayOptions& options, const std::vector<SyncPoint>& sync_points) {
  return build_graph(trace, options, &sync_points, &trace);
}

}  // namespace syncscope::replay
