// Which of each layer's syncs and host ranges are packed-sequence metadata rebuilds: the
// detector (detect.cpp) and the replay edit (replay_edit.cpp) read the same classification.
#include <map>
#include <set>
#include <string>
#include <utility>

#include "internal.hpp"

namespace syncscope::fixes::packing::detail {

using model::detail::contains_any;
using model::detail::lower;
using model::detail::same_thread;
using model::detail::Window;

bool is_rebuild_name(const std::string& lowered) {
  return contains_any(lowered, {"mask", "seqlen", "seq_len", "cu_seq", "packed_seq", "packing_metadata"});
}

// A layer's packing syncs are those inside a rebuild range when the trace has such ranges,
// else those whose cause repeats in at least 75% of the layers. Syncs of data-dependent-shape
// ops (nonzero, unique, ...: an MoE's routing) are never packing's.
PackingLayers find_packing_layers(const model::detail::TraceFacts& facts) {
  const std::size_t n = facts.layers.size();
  PackingLayers p;
  p.syncs.assign(n, {});
  p.rebuilds.assign(n, {});
  std::vector<Window> rebuild_ranges;
  {
    std::vector<Window> rr;
    for (const auto& r : facts.trace.ranges) {
      if (!model::detail::is_host_range(r)) continue;
      if (is_rebuild_name(lower(facts.trace.str(r.name))))
        rr.push_back({r.start, r.end, r.pid, r.tid, std::string(facts.trace.str(r.name)), -1});
    }
    rebuild_ranges = model::detail::outermost(std::move(rr));
  }
  std::map<std::string, int> cause_layers;  // cause -> layers it appears in (not data-dependent)
  for (std::size_t i = 0; i < n; ++i) {
    const Window& layer = facts.layers[i];
    for (const auto& r : rebuild_ranges)
      if (layer.start <= r.start && r.end <= layer.end && same_thread(layer.tid, r.tid)) p.rebuilds[i].push_back(r);
    std::set<std::string> seen;
    for (const auto* s : facts.ls[i].syncs)
      if (!model::detail::is_data_dependent_shape_cause(lower(s->cause))) seen.insert(s->cause);
    for (const auto& c : seen) cause_layers[c]++;
    p.any_rebuild_range = p.any_rebuild_range || !p.rebuilds[i].empty();
  }
  std::set<std::string> repeated_causes;
  for (const auto& [c, k] : cause_layers)
    if (n >= 2 && k >= 0.75 * static_cast<double>(n)) repeated_causes.insert(c);
  for (std::size_t i = 0; i < n; ++i) {
    for (const auto* s : facts.ls[i].syncs) {
      if (model::detail::is_data_dependent_shape_cause(lower(s->cause))) continue;
      bool in_rebuild = false;
      for (const auto& r : p.rebuilds[i])
        if (r.start <= s->start && s->start < r.end && same_thread(r.tid, s->tid)) in_rebuild = true;
      if (p.any_rebuild_range ? in_rebuild : repeated_causes.count(s->cause) > 0) p.syncs[i].push_back(s);
    }
  }
  return p;
}

}  // namespace syncscope::fixes::packing::detail
