// The replay graph's edges (build_graph's later stages): event records, stream and event
// waits, sync times, launch latencies and sync points (graph_builder.hpp).
#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <tuple>
#include <unordered_map>

#include <fmt/format.h>

#include "graph_builder.hpp"
#include "syncscope/analysis/analysis.hpp"
#include "syncscope/core/glob.hpp"

namespace syncscope::replay::graph_detail {

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

namespace {

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

}  // namespace

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
  // The end of the last work a sync waits for (the minimum Ns when it waits for none).
  auto awaited_end = [&g](const ReplayNode& n) {
    Ns awaited = std::numeric_limits<Ns>::min();
    for (std::uint32_t w : n.waits) awaited = std::max(awaited, g.nodes[w].rec_end);
    return awaited;
  };
  std::vector<Ns> rt, own;
  for (ReplayNode& n : g.nodes) {
    if (!n.sync) continue;
    const Ns awaited = awaited_end(n);
    if (!n.waits.empty() && awaited > n.rec_start) {
      if (n.rec_end >= awaited) rt.push_back(n.rec_end - awaited);
    } else {
      own.push_back(n.rec_end - n.rec_start);
    }
  }
  g.round_trip_samples = rt.size();
  g.round_trip_ns = median_of(rt, 0);
  g.sync_own_ns = median_of(own, 0);
  // Syncs held on the host: returned later after their work than the round trips explain. The
  // spread, as for launch latencies (launch_latencies): three median absolute deviations, plus
  // the slack a GPU start gets (kWaitSlackNs); too few round trips (under 4) call none an
  // outlier. On the MNIST nsys trace (bench/replay/pairs, secondOptimization) one
  // cudaStreamSynchronize returned 443 us after its 3 MB copy ended, nothing else on the GPU,
  // against a 11.4 us median: its step replayed 6.2% short.
  Ns limit = std::numeric_limits<Ns>::max();
  if (rt.size() >= 4) {
    std::vector<Ns> dev;
    dev.reserve(rt.size());
    for (Ns r : rt) dev.push_back(r > g.round_trip_ns ? r - g.round_trip_ns : g.round_trip_ns - r);
    limit = g.round_trip_ns + kWaitSlackNs + 3 * median_of(std::move(dev), 0);
  }
  for (std::uint32_t i = 0; i < g.nodes.size(); ++i) {
    ReplayNode& n = g.nodes[i];
    if (!n.sync || n.waits.empty()) continue;
    const Ns awaited = awaited_end(n);
    if (awaited <= n.rec_start) continue;
    // A sync that waited: its own time is what a sync that did not wait takes, never more
    // than it was recorded to take.
    n.own_ns = std::min(n.rec_end - n.rec_start, g.sync_own_ns);
    if (n.rec_end - awaited <= limit) continue;
    n.held = true;
    g.sync_holds.emplace_back(i, n.rec_end - awaited - g.round_trip_ns);
    ++g.problems.held_syncs;
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

}  // namespace syncscope::replay::graph_detail
