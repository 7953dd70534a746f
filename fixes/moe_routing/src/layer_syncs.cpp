// What an MoE loop's routing looks like in a trace: each layer's run of data-dependent-shape
// syncs (one count read per expert) and the kernels of its per-expert query. The detector
// (detect.cpp) and the replay edit (replay_edit.cpp) read the same classification.
#include "internal.hpp"

namespace syncscope::fixes::moe_routing::detail {

bool is_routing_query_kernel(const std::string& lowered) {
  return model::detail::contains_any(lowered,
                                     {"nonzero", "where", "expert_mask", "token_slot", "deviceselect", "one_hot"});
}

std::vector<std::vector<const SyncPoint*>> routing_syncs(const model::detail::TraceFacts& facts) {
  std::vector<std::vector<const SyncPoint*>> out(facts.layers.size());
  for (std::size_t i = 0; i < facts.ls.size(); ++i)
    for (const auto* s : facts.ls[i].syncs)
      if (model::detail::is_data_dependent_shape_cause(model::detail::lower(s->cause))) out[i].push_back(s);
  return out;
}

std::unordered_map<std::uint64_t, Ns> query_work_by_corr(const Trace& trace) {
  std::unordered_map<std::uint64_t, Ns> out;
  std::unordered_map<StringId, bool> query;  // by kernel name: names repeat per launch
  for (const auto& x : trace.kernels) {
    if (!x.correlation) continue;
    auto [q, fresh] = query.try_emplace(x.name, false);
    if (fresh) q->second = is_routing_query_kernel(model::detail::lower(trace.str(x.name)));
    if (q->second) out[x.correlation] += x.end - x.start;
  }
  return out;
}

}  // namespace syncscope::fixes::moe_routing::detail
