// What the replay engine hands a registered fix's what-if edit (FixSpec::replay_edit): the
// trace, its replay graph, predict --trace's facts about it, the edit as spelled, and the
// operations an edit may perform on the graph. A fix in a folder of its own (fixes/<name>/)
// finds its pattern in the facts and edits the graph through this, never through the graph's
// private helpers (model/replay/src/edit_util.hpp).
#pragma once

#include <cstddef>
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
  ReplayEditContext(const Trace& trace, replay::ReplayGraph& graph, const model::detail::TraceFacts& facts,
                    const replay::WhatIfEdit& edit, replay::EditResult& result);

  const Trace& trace;
  replay::ReplayGraph& graph;
  const model::detail::TraceFacts& facts;
  const replay::WhatIfEdit& edit;  // text, the registered spelling's variant, argument
  replay::EditResult& result;      // count what the edit changed in result.selected; notes

  // Removes the wait of the sync point the analysis found at `sp` and the device-to-host
  // copies that only serve it; the op around it keeps its own time (as remove-syncs does).
  // Counts it in result.selected. False when the graph holds no such sync.
  bool remove_sync(const SyncPoint& sp);

 private:
  std::unordered_map<Ns, std::vector<std::size_t>> by_start_;  // graph.syncs by recorded start
};

}  // namespace syncscope::fixes
