// The packing fix's what-if edits on a replayed trace (FixSpec::replay_edit), on predict
// --trace's detection (its facts: each layer's rebuild ranges, else its per-layer syncs):
// - packing-cache: every metadata/mask rebuild after the first in a step goes (Unsloth's
//   cache keeps one per batch): with rebuild ranges, their host time, the GPU work launched
//   inside them and their syncs; without, the repeated per-layer syncs (as remove-syncs).
// - packing-device: every rebuild goes, the first of a step too (the device variant builds
//   the mask with one kernel from lengths the host knows: that kernel is not in the trace and
//   is not charged, a note says so).
#include <fmt/format.h>

#include <set>

#include "internal.hpp"
#include "syncscope/fixes/packing/closed_form.hpp"
#include "syncscope/model/trace_predict_facts.hpp"
#include "syncscope/replay/replay_edit.hpp"

namespace syncscope::fixes::packing::detail {

void replay_edit(ReplayEditContext& ctx) {
  const model::detail::TraceFacts& facts = ctx.facts();
  replay::EditResult& r = ctx.result;
  const bool all = ctx.edit.variant == "device";
  if (all) r.notes.push_back("the device variant's one mask kernel per batch is not in the trace: not charged");
  const PackingLayers pl = find_packing_layers(facts);
  std::set<int> seen_step;
  std::set<std::uint32_t> gone;
  for (std::size_t i = 0; i < facts.layers.size(); ++i) {
    if (!pl.has(i)) continue;
    const int step = facts.iteration_of(facts.layers[i].start);
    if (seen_step.insert(step).second && !all) continue;  // the first rebuild of a step fills the cache
    if (!pl.rebuilds[i].empty()) {
      for (const auto& w : pl.rebuilds[i]) {
        ctx.remove_host_window(w.pid, w.tid, w.start, w.end, gone);
        ++r.selected;
      }
    } else {
      for (const SyncPoint* sp : pl.syncs[i]) (void)ctx.remove_sync(*sp);
    }
  }
  ctx.remove_launched(gone);
  if (r.selected == 0)
    r.nothing_selected = fmt::format("--what-if {}: no per-layer metadata rebuild{} ({} layer range(s){}); {}",
                                     ctx.edit.text, all ? "" : " after the first in a step", facts.layers.size(),
                                     facts.layer_glob.empty() ? "" : fmt::format(" matching '{}'", facts.layer_glob),
                                     ctx.holdings(true));
}

}  // namespace syncscope::fixes::packing::detail
