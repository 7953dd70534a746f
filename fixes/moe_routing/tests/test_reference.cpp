// The MoE routing fix's CPU reference (reference.hpp), checked against its definition.
#include "syncscope/fixes/moe_routing/reference.hpp"

#include <gtest/gtest.h>

#include <random>
#include <set>

#include "syncscope/core/error.hpp"

namespace syncscope::fixes::moe_routing {
namespace {

TEST(MoeRouting, CountsOffsetsAndStableOrder) {
  // ids for T = 3 tokens, k = 2: token-major.
  const std::vector<std::int64_t> ids = {2, 0, 0, 1, 2, 0};
  const Routing r = route(ids, 4);
  EXPECT_EQ(r.counts, (std::vector<std::int64_t>{3, 1, 2, 0}));
  EXPECT_EQ(r.offsets, (std::vector<std::int64_t>{0, 3, 4, 6, 6}));
  // Expert 0 entries in flat order 1, 2, 5; expert 1: 3; expert 2: 0, 4.
  EXPECT_EQ(r.order, (std::vector<std::int64_t>{1, 2, 5, 3, 0, 4}));
  EXPECT_THROW(route({4}, 4), InputError);
  EXPECT_THROW(route({0}, 0), InputError);
}

TEST(MoeRouting, CapacityRowsAreUniqueAndInsideTheirExpert) {
  std::mt19937 rng(5);
  const int E = 8, T = 50, k = 2;
  std::vector<std::int64_t> ids;
  for (int t = 0; t < T; ++t) {
    std::set<std::int64_t> picked;
    while (static_cast<int>(picked.size()) < k) picked.insert(static_cast<std::int64_t>(rng() % E));
    ids.insert(ids.end(), picked.begin(), picked.end());
  }
  const auto rows = capacity_rows(ids, E, T);
  std::set<std::int64_t> seen(rows.begin(), rows.end());
  EXPECT_EQ(seen.size(), rows.size());
  const Routing r = route(ids, E);
  for (std::size_t i = 0; i < ids.size(); ++i) {
    EXPECT_EQ(rows[i] / T, ids[i]);
    EXPECT_LT(rows[i] % T, r.counts[static_cast<std::size_t>(ids[i])]);
  }
  EXPECT_THROW(capacity_rows({1, 1, 1}, 2, 2), InputError);
}

}  // namespace
}  // namespace syncscope::fixes::moe_routing
