// What the replay engine hands a fix's what-if edit (FixSpec::replay_edit): the trace, its
// replay graph, predict --trace's options and (computed at first use) its facts about the
// trace, the edit as spelled, and the operations an edit may perform on the graph. Every
// fix's edits live in its folder (fixes/<name>/src/replay_edit.cpp): each finds its pattern
// in the facts or the graph and edits the graph through this, never through the engine's
// private helpers (model/replay/src/edit_util.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "syncscope/analysis/analysis.hpp"
#include "syncscope/fixes/fix_spec.hpp"
#include "syncscope/replay/replay.hpp"

namespace syncscope::model::detail {
class TraceFacts;  // syncscope/model/trace_predict_facts.hpp
}

namespace syncscope::fixes {

struct ReplayEditContext {
  ReplayEditContext(const Trace& trace, replay::ReplayGraph& graph, const model::TracePredictOptions& options,
                    const replay::WhatIfEdit& edit, replay::EditResult& result);
  ~ReplayEditContext();
  ReplayEditContext(const ReplayEditContext&) = delete;
  ReplayEditContext& operator=(const ReplayEditContext&) = delete;

  const Trace& trace;
  replay::ReplayGraph& graph;
  const model::TracePredictOptions& options;  // predict --trace's (prefetch_depth, the layer glob, ...)
  const replay::WhatIfEdit& edit;             // text, the registered spelling's variant, argument
  replay::EditResult& result;                 // count what the edit changed in result.selected; notes

  // predict --trace's facts about the trace (layers, iterations, the syncs each fix's
  // detector classifies), built on first use: an edit that reads only the graph (offload's)
  // does not pay for them.
  const model::detail::TraceFacts& facts();

  // Removes the wait of the sync point the analysis found at `sp` and the device-to-host
  // copies that only serve it; the op around it keeps its own time (as remove-syncs does).
  // Counts it in result.selected. False when the graph holds no such sync.
  bool remove_sync(const SyncPoint& sp);
  // The graph's sync (an index into graph.syncs) for an analysis sync point, if any.
  std::optional<std::size_t> graph_sync(const SyncPoint& sp) const;
  // As remove_sync, for a sync of the graph, without counting it.
  void remove_graph_sync(const replay::ReplaySync& s);
  // Removes the host time thread (pid, tid) spent in [start, end): the calls inside it
  // (collected in `gone`), the parts of calls and gaps overlapping it, and the syncs that
  // start inside it. remove_launched(gone) then removes the GPU work the gone calls launched.
  void remove_host_window(std::int64_t pid, std::int64_t tid, Ns start, Ns end, std::set<std::uint32_t>& gone);
  void remove_launched(const std::set<std::uint32_t>& gone);
  // The graph's host thread of (pid, tid) (pid < 0: any), -1 when none.
  std::int32_t thread_of(std::int64_t pid, std::int64_t tid) const;
  // The outermost CPU-op range on the sync's thread named like its cause and holding its start.
  const Range* enclosing_op(const replay::ReplaySync& s) const;
  // "the trace's sync points by cause: 24 x aten::item, ..." (by API when !by_cause), for
  // result.nothing_selected.
  std::string holdings(bool by_cause) const;

 private:
  std::unique_ptr<model::PredictionReport> scratch_;  // what building the facts reports (unused)
  std::unique_ptr<model::detail::TraceFacts> facts_;
  // graph.syncs by recorded start, built at the first graph_sync (the graph's syncs keep their
  // starts: edits remove syncs, never move them).
  mutable std::optional<std::unordered_map<Ns, std::vector<std::size_t>>> by_start_;
};

}  // namespace syncscope::fixes
