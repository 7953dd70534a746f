// The packing fix's CPU reference (reference.hpp), checked against its definition.
#include "syncscope/fixes/packing/reference.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "syncscope/core/error.hpp"

namespace syncscope::fixes::packing {
namespace {

TEST(PackedMetadata, PrefixSumsAndPositions) {
  const PackedMetadata m = packed_metadata({3, 1, 4});
  EXPECT_EQ(m.cu_seqlens, (std::vector<std::int32_t>{0, 3, 4, 8}));
  EXPECT_EQ(m.positions, (std::vector<std::int64_t>{0, 1, 2, 0, 0, 1, 2, 3}));
  EXPECT_EQ(m.max_seqlen, 4);
  EXPECT_EQ(m.total, 8);
  EXPECT_THROW(packed_metadata({3, 0}), InputError);
  EXPECT_THROW(packed_metadata({}), InputError);
}

TEST(PackedMask, MatchesTheDefinition) {
  std::mt19937 rng(3);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<std::int32_t> lengths;
    const int n = 1 + static_cast<int>(rng() % 5);
    for (int i = 0; i < n; ++i) lengths.push_back(1 + static_cast<std::int32_t>(rng() % 12));
    const int window = trial % 3 == 0 ? 0 : 1 + static_cast<int>(rng() % 6);
    const auto mask = packed_causal_mask(lengths, window);
    std::vector<int> seq;
    for (int s = 0; s < n; ++s)
      for (int i = 0; i < lengths[static_cast<std::size_t>(s)]; ++i) seq.push_back(s);
    const auto t = seq.size();
    ASSERT_EQ(mask.size(), t * t);
    for (std::size_t i = 0; i < t; ++i)
      for (std::size_t j = 0; j < t; ++j) {
        const bool allowed = seq[i] == seq[j] && j <= i && (window == 0 || i - j < static_cast<std::size_t>(window));
        const float v = mask[i * t + j];
        EXPECT_EQ(mask_allows(v), allowed) << i << "," << j;
        if (!allowed) {
          EXPECT_TRUE(std::isinf(v) && v < 0);
        }
      }
  }
  EXPECT_THROW(packed_causal_mask({2}, -1), InputError);
}

}  // namespace
}  // namespace syncscope::fixes::packing
