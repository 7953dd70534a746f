// The packing fix's CPU reference (reference.hpp).
#include "syncscope/fixes/packing/reference.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "syncscope/core/error.hpp"

namespace syncscope::fixes::packing {

PackedMetadata packed_metadata(const std::vector<std::int32_t>& lengths) {
  PackedMetadata m;
  m.cu_seqlens.reserve(lengths.size() + 1);
  m.cu_seqlens.push_back(0);
  std::int64_t total = 0;
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    SYNCSCOPE_INPUT_ERROR_IF(lengths[i] <= 0,
                             fmt::format("packed metadata: lengths[{}] = {}: lengths must be positive", i, lengths[i]));
    total += lengths[i];
    SYNCSCOPE_INPUT_ERROR_IF(total > (1ll << 31) - 1, "packed metadata: more than 2^31-1 tokens");
    m.cu_seqlens.push_back(static_cast<std::int32_t>(total));
    m.max_seqlen = std::max(m.max_seqlen, lengths[i]);
  }
  SYNCSCOPE_INPUT_ERROR_IF(total == 0, "packed metadata: no sequences");
  m.total = static_cast<std::int32_t>(total);
  m.positions.reserve(static_cast<std::size_t>(total));
  for (std::int32_t len : lengths)
    for (std::int32_t p = 0; p < len; ++p) m.positions.push_back(p);
  return m;
}

std::vector<float> packed_causal_mask(const std::vector<std::int32_t>& lengths, int sliding_window) {
  SYNCSCOPE_INPUT_ERROR_IF(sliding_window < 0, "packed mask: sliding window must be >= 0");
  const PackedMetadata m = packed_metadata(lengths);
  const auto t = static_cast<std::size_t>(m.total);
  std::vector<float> mask(t * t, -std::numeric_limits<float>::infinity());
  for (std::size_t s = 0; s + 1 < m.cu_seqlens.size(); ++s) {
    const auto begin = static_cast<std::size_t>(m.cu_seqlens[s]);
    const auto end = static_cast<std::size_t>(m.cu_seqlens[s + 1]);
    for (std::size_t i = begin; i < end; ++i)
      for (std::size_t j = begin; j <= i; ++j)
        if (sliding_window == 0 || i - j < static_cast<std::size_t>(sliding_window)) mask[i * t + j] = 0.0f;
  }
  return mask;
}

}  // namespace syncscope::fixes::packing
