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

#include "graph_internal.hpp"
#include "syncscope/analysis/analysis.hpp"
#include "syncscope/core/glob.hpp"
#include "syncscope/model/replay.hpp"
#include "syncscope/trace/api_classes.hpp"

namespace syncscope::model {
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

// What the stages of build_graph share: the trace, the graph and the joins between them.
struct Builder {
  Builder(const Trace& t, const ReplayOptions& o) : trace(t), options(o) {}
  const Trace& trace;
  const ReplayOptions& options;
  ReplayGraph g;
  std::vector<std::uint32_t> owner;  // api call -> its top-level call's node
  std::map<std::pair<std::int64_t, std::int64_t>, std::int32_t> thread_index;
  std::map<std::pair<std::int32_t, std::int64_t>, std::int32_t> lane_index;
  // Correlation id -> the top-level call's node; the first call of an id, in record order,
  // keeps it. A sorted array, not a hash map: 16 bytes an id instead of about 40 (a heap block
  // per entry and its bucket).
  std::vector<std::pair<std::uint64_t, std::uint32_t>> corr_calls;
  std::size_t first_gpu = 0;
  LaneIndex lanes;
  // Call node -> the GPU nodes it launched, in node order: one flat array and offsets (one
  // vector per call had cost a heap block per launch call).
  std::vector<std::uint32_t> launched_at, launched_flat;
  struct RecordAt {
    std::int32_t lane;
    Ns issued;  // the record call's start
  };
  std::unordered_map<std::uint64_t, RecordAt> record_by_corr;
  std::map<std::uint64_t, std::vector<std::pair<Ns, std::int32_t>>> records_by_event;  // id -> (issued, lane)
  std::unordered_map<std::uint64_t, const SyncRecord*> sync_by_corr;
  std::vector<std::uint8_t> class_of_name;      // a named call's class depends on its name alone
  std::vector<std::uint32_t> unrecorded_waits;  // stream-wait calls whose event record is not in the trace

  std::uint32_t call_of_corr(std::uint64_t corr) const {  // kNoNode: none
    if (corr == 0) return kNoNode;
    auto it = std::lower_bound(corr_calls.begin(), corr_calls.end(), corr,
                               [](const auto& a, std::uint64_t v) { return a.first < v; });
    return it != corr_calls.end() && it->first == corr ? it->second : kNoNode;
  }
  std::span<const std::uint32_t> launched(std::uint32_t call) const {
    return std::span<const std::uint32_t>(launched_flat.data() + launched_at[call],
                                          launched_flat.data() + launched_at[call + 1]);
  }
  ApiClass classify(const ApiCall& c) {
    if (c.name == kNoString || c.name >= class_of_name.size()) return classify_api(c.kind, trace.str(c.name), c.cbid);
    std::uint8_t& k = class_of_name[c.name];
    if (k == 0xFF) k = static_cast<std::uint8_t>(classify_api(c.kind, trace.str(c.name), c.cbid));
    return static_cast<ApiClass>(k);
  }
  std::optional<RecordAt> find_record(const SyncRecord& s, Ns before) const;
};

// The record a wait or event sync refers to: Kineto names its record call's correlation;
// otherwise the event's most recent record before the call (CUDA's semantics).
std::optional<Builder::RecordAt> Builder::find_record(const SyncRecord& s, Ns before) const {
  if (s.wait_on_event_record_correlation > 0) {
    auto it = record_by_corr.find(static_cast<std::uint64_t>(s.wait_on_event_record_correlation));
    if (it != record_by_corr.end()) return it->second;
  }
  if (s.event_id) {
    auto it = records_by_event.find(s.event_id);
    if (it != records_by_event.end()) {
      auto p = std::lower_bound(it->second.begin(), it->second.end(), std::make_pair(before, std::int32_t{-1}));
      if (p != it->second.begin()) {
        --p;
        return RecordAt{p->second, p->first};
      }
    }
  }
  return std::nullopt;
}

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

void event_records(Builder& bld) {
  ReplayGraph& g = bld.g;
  const Trace& trace = bld.trace;
  const auto& calls = trace.api_calls;
  (void)g;
  (void)trace;
  (void)calls;
  auto call_of_corr = [&](std::uint64_t corr) { return bld.call_of_corr(corr); };
  auto& record_by_corr = bld.record_by_corr;
  auto& records_by_event = bld.records_by_event;
  auto& sync_by_corr = bld.sync_by_corr;
  auto& lane_index = bld.lane_index;
  // ---- events: record calls (stream, issue time) by correlation and by event id ----
  for (const auto& e : trace.cuda_events) {
    const std::uint32_t record_call = call_of_corr(e.correlation);
    const Ns issued = record_call != kNoNode ? g.nodes[record_call].rec_start : e.timestamp;
    auto li = lane_index.find({e.device, e.stream});
    const std::int32_t lane = li != lane_index.end() ? li->second : -1;
    if (e.correlation) record_by_corr[e.correlation] = {lane, issued};
    if (e.event_id) records_by_event[e.event_id].push_back({issued, lane});
  }
  for (auto& [id, v] : records_by_event) std::sort(v.begin(), v.end());
  for (const auto& s : trace.syncs)
    if (s.correlation && !s.is_query) sync_by_corr.try_emplace(s.correlation, &s);
}

// One call's edges: a sync's waits, a blocking copy's copy, a stream wait's edge.
void wait_edges_of(Builder& bld, std::size_t t, std::uint32_t ni, std::vector<std::int32_t>& last_lane_of_thread) {
  ReplayGraph& g = bld.g;
  const Trace& trace = bld.trace;
  const auto& calls = trace.api_calls;
  (void)g;
  (void)trace;
  (void)calls;
  auto launched = [&](std::uint32_t call) { return bld.launched(call); };
  auto classify = [&](const ApiCall& c) { return bld.classify(c); };
  auto find_record = [&](const SyncRecord& r, Ns before) { return bld.find_record(r, before); };
  auto& sync_by_corr = bld.sync_by_corr;
  auto& unrecorded_waits = bld.unrecorded_waits;
  auto& lanes = bld.lanes;
  ReplayNode& n = g.nodes[ni];
  const ApiCall& c = calls[n.record];
  const ApiClass cls = classify(c);
  const SyncRecord* rec = nullptr;
  if (auto it = sync_by_corr.find(c.correlation); c.correlation && it != sync_by_corr.end()) rec = it->second;
  std::int32_t device = rec && rec->device >= 0 ? rec->device : c.device;
  switch (cls) {
    case ApiClass::StreamSync: {
      n.sync = true;
      std::int32_t lane = -1;
      if (rec && rec->stream >= 0) {
        for (std::size_t l = 0; l < g.lanes.size(); ++l)
          if (g.lanes[l].second == rec->stream && (device < 0 || g.lanes[l].first == device || g.lanes[l].first < 0))
            lane = static_cast<std::int32_t>(l);
      } else {
        lane = last_lane_of_thread[t];  // the stream this thread last gave work to
      }
      if (auto w = lanes.last_before(lane, n.rec_start); w != kNoNode) n.waits.push_back(w);
      else if (lane < 0) n.unbuilt = true;
      break;
    }
    case ApiClass::DeviceSync:
      n.sync = true;
      for (std::size_t l = 0; l < g.lanes.size(); ++l)
        if (device < 0 || g.lanes[l].first == device || g.lanes[l].first < 0)
          if (auto w = lanes.last_before(static_cast<std::int32_t>(l), n.rec_start); w != kNoNode) n.waits.push_back(w);
      break;
    case ApiClass::EventSync: {
      n.sync = true;
      auto r = rec ? find_record(*rec, n.rec_start) : std::nullopt;
      if (r && r->lane >= 0) {
        if (auto w = lanes.last_before(r->lane, r->issued); w != kNoNode) n.waits.push_back(w);
      } else {
        n.unbuilt = true;
      }
      break;
    }
    case ApiClass::StreamWaitEvent: {
      auto r = rec ? find_record(*rec, n.rec_start) : std::nullopt;
      std::int32_t target = -1;
      if (rec && rec->stream >= 0)
        for (std::size_t l = 0; l < g.lanes.size(); ++l)
          if (g.lanes[l].second == rec->stream && (device < 0 || g.lanes[l].first == device))
            target = static_cast<std::int32_t>(l);
      if (!r || target < 0) {
        unrecorded_waits.push_back(ni);  // inferred from the timeline below, or left unbuilt
        break;
      }
      const std::uint32_t src = lanes.last_before(r->lane, r->issued);
      const std::uint32_t dst = lanes.first_at_or_after(target, n.rec_start);
      if (src != kNoNode && dst != kNoNode && src != dst) g.nodes[dst].waits.push_back(src);
      break;
    }
    case ApiClass::SyncCopy:
    case ApiClass::AsyncCopy: {
      // Blocking: a synchronous host<->device copy; an async device-to-host copy into
      // pageable memory (analysis.hpp's rules).
      for (std::uint32_t a : launched(ni)) {
        const ReplayNode& x = g.nodes[a];
        if (x.kind != ReplayNode::Kind::Copy) continue;
        const Memcpy& m = trace.memcpys[x.record];
        const bool host = m.kind == CopyKind::HtoD || m.kind == CopyKind::DtoH;
        // An async copy into pageable memory blocks (CUDA docs, "API synchronization
        // behavior"), unless the trace shows the call returning before its copy started:
        // then the wait fell to the sync after it (the analysis's merged copy+sync).
        const bool blocks =
            cls == ApiClass::SyncCopy
                ? host
                : m.kind == CopyKind::DtoH && m.dst_kind == MemoryKind::Pageable && n.rec_end > x.rec_start;
        if (blocks) {
          n.sync = true;
          n.waits.push_back(a);
        }
      }
      break;
    }
    default: break;
  }
  if (n.sync && n.waits.empty() && cls != ApiClass::SyncCopy && cls != ApiClass::AsyncCopy &&
      !g.problems.no_gpu_records && n.unbuilt)
    ++g.problems.syncs_without_work;
}

void wait_edges(Builder& bld) {
  ReplayGraph& g = bld.g;
  const Trace& trace = bld.trace;
  const auto& calls = trace.api_calls;
  (void)g;
  (void)trace;
  (void)calls;
  bld.class_of_name.assign(trace.strings.size(), 0xFF);
  auto launched = [&](std::uint32_t call) { return bld.launched(call); };
  // ---- host calls that wait: syncs, blocking copies; stream waits ----
  std::vector<std::int32_t> last_lane_of_thread(g.threads.size(), -1);
  for (std::size_t t = 0; t < g.thread_calls.size(); ++t) {
    for (std::uint32_t ni : g.thread_calls[t]) {
      wait_edges_of(bld, t, ni, last_lane_of_thread);
      for (std::uint32_t a : launched(ni)) last_lane_of_thread[t] = g.nodes[a].lane;
    }
  }
}

void sync_times(Builder& bld) {
  ReplayGraph& g = bld.g;
  const Trace& trace = bld.trace;
  const auto& calls = trace.api_calls;
  (void)g;
  (void)trace;
  (void)calls;
  // ---- medians: round trip, a sync's own time, launch latency per kind ----
  std::vector<Ns> rt, own;
  for (ReplayNode& n : g.nodes) {
    if (!n.sync) continue;
    Ns awaited = std::numeric_limits<Ns>::min();
    for (std::uint32_t w : n.waits) awaited = std::max(awaited, g.nodes[w].rec_end);
    if (!n.waits.empty() && awaited > n.rec_start) {
      if (n.rec_end >= awaited) rt.push_back(n.rec_end - awaited);
    } else {
      own.push_back(n.rec_end - n.rec_start);
    }
  }
  g.round_trip_samples = rt.size();
  g.round_trip_ns = median_of(rt, 0);
  g.sync_own_ns = median_of(own, 0);
  for (ReplayNode& n : g.nodes) {
    if (!n.sync || n.waits.empty()) continue;
    Ns awaited = std::numeric_limits<Ns>::min();
    for (std::uint32_t w : n.waits) awaited = std::max(awaited, g.nodes[w].rec_end);
    // A sync that waited: its own time is what a sync that did not wait takes, never more
    // than it was recorded to take.
    if (awaited > n.rec_start) n.own_ns = std::min(n.rec_end - n.rec_start, g.sync_own_ns);
  }
}

void launch_latencies(Builder& bld) {
  ReplayGraph& g = bld.g;
  const Trace& trace = bld.trace;
  const auto& calls = trace.api_calls;
  (void)g;
  (void)trace;
  (void)calls;
  auto launched = [&](std::uint32_t call) { return bld.launched(call); };
  auto& lanes = bld.lanes;
  auto& first_gpu = bld.first_gpu;
  auto& unrecorded_waits = bld.unrecorded_waits;
  std::vector<Ns> lat[4], lat_queued[4];
  for (std::size_t i = first_gpu; i < g.nodes.size(); ++i) {
    const ReplayNode& n = g.nodes[i];
    if (n.launch == kNoNode) continue;
    Ns ready = std::numeric_limits<Ns>::min();
    if (n.prev != kNoNode) ready = std::max(ready, g.nodes[n.prev].rec_end);
    if (n.engine_prev != kNoNode) ready = std::max(ready, g.nodes[n.engine_prev].rec_end);
    for (std::uint32_t w : n.waits) ready = std::max(ready, g.nodes[w].rec_end);
    // A sample only where its stream (and engine) had nothing left to run when the call was
    // made: work launched behind a backlog, or behind a cross-stream wait the trace does not
    // show, starts long after its launch for reasons that are not launch latency (issue 36: on
    // a 16-rank NCCL trace every kernel was put 164 ms after its launch, the host that far ahead).
    // Work issued behind a backlog that still started later than its stream allowed is a sample
    // only for a kind that has no clean one.
    const Ns issued = g.nodes[n.launch].rec_start;
    if (n.rec_start > ready)
      (ready <= issued ? lat : lat_queued)[static_cast<int>(n.kind)].push_back(n.rec_start - issued);
  }
  for (int k = 1; k < 4; ++k)
    if (lat[k].empty()) lat[k] = std::move(lat_queued[k]);
  for (int k = 1; k < 4; ++k) g.launch_latency_ns[k] = median_of(lat[k], median_of(lat[1], 0));
  LatencySpread spread{0, 0, 0, 0};
  for (int k = 1; k < 4; ++k) {
    const auto& v = lat[k].empty() ? lat[1] : lat[k];
    std::vector<Ns> dev;
    dev.reserve(v.size());
    for (Ns x : v) dev.push_back(x > g.launch_latency_ns[k] ? x - g.launch_latency_ns[k] : g.launch_latency_ns[k] - x);
    spread[k] = 3 * median_of(std::move(dev), 0);
  }
  comm_transfer_times(trace, g);
  model_launch_queue(g, first_gpu, launched);
  infer_stream_waits(g, lanes, unrecorded_waits, spread);
  explain_gpu_starts(g, lanes, spread);
}

void sync_points(Builder& bld, const std::vector<SyncPoint>* points) {
  ReplayGraph& g = bld.g;
  const Trace& trace = bld.trace;
  const auto& calls = trace.api_calls;
  (void)g;
  (void)trace;
  (void)calls;
  auto launched = [&](std::uint32_t call) { return bld.launched(call); };
  auto classify = [&](const ApiCall& c) { return bld.classify(c); };
  auto& thread_index = bld.thread_index;
  const ReplayOptions& options = bld.options;
  // ---- the analysis's sync points, as nodes ----
  {
    AnalysisOptions ao;
    ao.pid = options.pid;
    auto node_at = [&](std::int32_t thread, Ns t) -> std::uint32_t {  // the last call starting at or before t
      const auto& list = g.thread_calls[static_cast<std::size_t>(thread)];
      auto it = std::upper_bound(list.begin(), list.end(), t,
                                 [&](Ns x, std::uint32_t n) { return x < g.nodes[n].rec_start; });
      return it == list.begin() ? kNoNode : *(it - 1);
    };
    auto d2h_copies = [&](std::uint32_t call) {
      std::vector<std::uint32_t> out;
      if (call == kNoNode) return out;
      for (std::uint32_t a : launched(call))
        if (g.nodes[a].kind == ReplayNode::Kind::Copy && g.nodes[a].direction == CopyKind::DtoH) out.push_back(a);
      return out;
    };
    std::vector<SyncPoint> found;
    if (!points) {
      found = find_sync_points(trace, ao);
      points = &found;
    }
    for (const SyncPoint& sp : *points) {
      auto ti = thread_index.find({sp.pid, sp.tid});
      if (ti == thread_index.end()) continue;
      ReplaySync s;
      s.node = node_at(ti->second, std::max(sp.start, sp.end - 1));
      if (s.node == kNoNode) continue;
      s.cause = sp.cause;
      s.api = sp.api;
      s.pid = sp.pid;
      s.tid = sp.tid;
      s.rec_start = sp.start;
      s.bubble_ns = sp.bubble_ns;
      // The device-to-host copy that only serves this sync: the merged copy's own, or (the
      // .item() pattern into pinned memory) the call right before the sync when it is a
      // non-blocking (*Async) copy device-to-host. A call that itself waits (a synchronous
      // cudaMemcpy/cudaMemcpyFromSymbol, a pageable async copy, hipMemcpyWithStream) is a wait
      // the program still needs without this sync: it is not this sync's to remove (issue 36:
      // removing a redundant cudaDeviceSynchronize after a blocking cudaMemcpyFromSymbol saved
      // the sync's own time when measured, 3.3-4.6x less than the edit predicted with it).
      std::uint32_t copy_call = kNoNode;
      if (sp.merged_copy) {
        copy_call = node_at(ti->second, sp.start);
      } else if (const std::uint32_t p = g.nodes[s.node].prev;
                 p != kNoNode && !g.nodes[p].sync && classify(calls[g.nodes[p].record]) == ApiClass::AsyncCopy) {
        copy_call = p;
      }
      if (!d2h_copies(s.node).empty()) copy_call = s.node;  // a blocking copy: its own copy
      auto copies = d2h_copies(copy_call);
      if (!copies.empty()) {
        s.copy_call = copy_call;
        s.copies = std::move(copies);
      }
      g.syncs.push_back(std::move(s));
    }
  }
}

void steps(Builder& bld, const std::vector<Range>& step_ranges) {
  ReplayGraph& g = bld.g;
  const Trace& trace = bld.trace;
  const auto& calls = trace.api_calls;
  (void)g;
  (void)trace;
  (void)calls;
  auto& thread_index = bld.thread_index;
  // ---- steps ----
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

}  // namespace syncscope::model
