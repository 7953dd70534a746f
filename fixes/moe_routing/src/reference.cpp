// The MoE routing fix's CPU reference (reference.hpp).
#include "syncscope/fixes/moe_routing/reference.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "syncscope/core/error.hpp"

namespace syncscope::fixes::moe_routing {

Routing route(const std::vector<std::int64_t>& expert_ids, int num_experts) {
  SYNCSCOPE_INPUT_ERROR_IF(num_experts <= 0, "moe routing: num_experts must be positive");
  Routing r;
  r.counts.assign(static_cast<std::size_t>(num_experts), 0);
  for (std::size_t i = 0; i < expert_ids.size(); ++i) {
    SYNCSCOPE_INPUT_ERROR_IF(expert_ids[i] < 0 || expert_ids[i] >= num_experts,
                             fmt::format("moe routing: expert_ids[{}] = {} outside [0, {})", i, expert_ids[i],
                                         num_experts));
    ++r.counts[static_cast<std::size_t>(expert_ids[i])];
  }
  r.offsets.assign(static_cast<std::size_t>(num_experts) + 1, 0);
  for (std::size_t e = 0; e < r.counts.size(); ++e) r.offsets[e + 1] = r.offsets[e] + r.counts[e];
  // Counting sort: stable by construction.
  std::vector<std::int64_t> next(r.offsets.begin(), r.offsets.end() - 1);
  r.order.assign(expert_ids.size(), 0);
  for (std::size_t i = 0; i < expert_ids.size(); ++i)
    r.order[static_cast<std::size_t>(next[static_cast<std::size_t>(expert_ids[i])]++)] = static_cast<std::int64_t>(i);
  return r;
}

std::vector<std::int64_t> capacity_rows(const std::vector<std::int64_t>& expert_ids, int num_experts,
                                        std::int64_t capacity) {
  const Routing r = route(expert_ids, num_experts);
  for (int e = 0; e < num_experts; ++e)
    SYNCSCOPE_INPUT_ERROR_IF(r.counts[static_cast<std::size_t>(e)] > capacity,
                             fmt::format("moe capacity rows: expert {} holds {} entries, capacity is {}", e,
                                         r.counts[static_cast<std::size_t>(e)], capacity));
  std::vector<std::int64_t> rows(expert_ids.size(), 0);
  std::vector<std::int64_t> rank(static_cast<std::size_t>(num_experts), 0);
  for (std::size_t i = 0; i < expert_ids.size(); ++i) {
    const auto e = static_cast<std::size_t>(expert_ids[i]);
    rows[i] = static_cast<std::int64_t>(e) * capacity + rank[e]++;
  }
  return rows;
}

}  // namespace syncscope::fixes::moe_routing
