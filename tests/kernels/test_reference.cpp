// CPU references of the device-side computations, checked against their definitions.
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "syncscope/core/error.hpp"
#include "syncscope/program/reference.hpp"

namespace syncscope::kernels {
namespace {

TEST(PackedMetadata, PrefixSumsAndPositions) {
  const program::PackedMetadata m = program::packed_metadata({3, 1, 4});
  EXPECT_EQ(m.cu_seqlens, (std::vector<std::int32_t>{0, 3, 4, 8}));
  EXPECT_EQ(m.positions, (std::vector<std::int64_t>{0, 1, 2, 0, 0, 1, 2, 3}));
  EXPECT_EQ(m.max_seqlen, 4);
  EXPECT_EQ(m.total, 8);
  EXPECT_THROW(program::packed_metadata({3, 0}), InputError);
  EXPECT_THROW(program::packed_metadata({}), InputError);
}

TEST(PackedMask, MatchesTheDefinition) {
  std::mt19937 rng(3);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<std::int32_t> lengths;
    const int n = 1 + static_cast<int>(rng() % 5);
    for (int i = 0; i < n; ++i) lengths.push_back(1 + static_cast<std::int32_t>(rng() % 12));
    const int window = trial % 3 == 0 ? 0 : 1 + static_cast<int>(rng() % 6);
    const auto mask = program::packed_causal_mask(lengths, window);
    std::vector<int> seq;
    for (int s = 0; s < n; ++s)
      for (int i = 0; i < lengths[static_cast<std::size_t>(s)]; ++i) seq.push_back(s);
    const auto t = seq.size();
    ASSERT_EQ(mask.size(), t * t);
    for (std::size_t i = 0; i < t; ++i)
      for (std::size_t j = 0; j < t; ++j) {
        const bool allowed = seq[i] == seq[j] && j <= i && (window == 0 || i - j < static_cast<std::size_t>(window));
        const float v = mask[i * t + j];
        EXPECT_EQ(program::mask_allows(v), allowed) << i << "," << j;
        if (!allowed) {
          EXPECT_TRUE(std::isinf(v) && v < 0);
        }
      }
  }
  EXPECT_THROW(program::packed_causal_mask({2}, -1), InputError);
}

TEST(MoeRouting, CountsOffsetsAndStableOrder) {
  // ids for T = 3 tokens, k = 2: token-major.
  const std::vector<std::int64_t> ids = {2, 0, 0, 1, 2, 0};
  const program::MoeRouting r = program::moe_routing(ids, 4);
  EXPECT_EQ(r.counts, (std::vector<std::int64_t>{3, 1, 2, 0}));
  EXPECT_EQ(r.offsets, (std::vector<std::int64_t>{0, 3, 4, 6, 6}));
  // Expert 0 entries in flat order 1, 2, 5; expert 1: 3; expert 2: 0, 4.
  EXPECT_EQ(r.order, (std::vector<std::int64_t>{1, 2, 5, 3, 0, 4}));
  EXPECT_THROW(program::moe_routing({4}, 4), InputError);
  EXPECT_THROW(program::moe_routing({0}, 0), InputError);
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
  const auto rows = program::moe_capacity_rows(ids, E, T);
  std::set<std::int64_t> seen(rows.begin(), rows.end());
  EXPECT_EQ(seen.size(), rows.size());
  const program::MoeRouting r = program::moe_routing(ids, E);
  for (std::size_t i = 0; i < ids.size(); ++i) {
    EXPECT_EQ(rows[i] / T, ids[i]);
    EXPECT_LT(rows[i] % T, r.counts[static_cast<std::size_t>(ids[i])]);
  }
  EXPECT_THROW(program::moe_capacity_rows({1, 1, 1}, 2, 2), InputError);
}

}  // namespace
}  // namespace syncscope::kernels
