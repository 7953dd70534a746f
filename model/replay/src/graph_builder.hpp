// The replay graph builder's shared state (graph.cpp builds the nodes; graph_edges.cpp
// adds the waits, sync times, launch latencies and sync points). Private to model/replay/src.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "graph_internal.hpp"
#include "syncscope/replay/replay.hpp"
#include "syncscope/trace/api_classes.hpp"

namespace syncscope::replay::graph_detail {

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

// The edge stages of build_graph, in the order it calls them (graph_edges.cpp).
void event_records(Builder& bld);
void wait_edges(Builder& bld);
void sync_times(Builder& bld);
void launch_latencies(Builder& bld);
void sync_points(Builder& bld, const std::vector<SyncPoint>* points);

}  // namespace syncscope::replay::graph_detail
