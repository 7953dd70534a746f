#include "syncscope/program/reference.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "syncscope/core/error.hpp"

namespace syncscope::program {

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

MoeRouting moe_routing(const std::vector<std::int64_t>& expert_ids, int num_experts) {
  SYNCSCOPE_INPUT_ERROR_IF(num_experts <= 0, "moe routing: num_experts must be positive");
  MoeRouting r;
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

std::vector<std::int64_t> moe_capacity_rows(const std::vector<std::int64_t>& expert_ids, int num_experts,
                                            std::int64_t capacity) {
  const MoeRouting r = moe_routing(expert_ids, num_experts);
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

namespace {

// Index of the value nearest to x in the sorted `map` (ties go up, as bitsandbytes' `x > mid`).
int nearest(const float* map, int n, float x) {
  int lo = 0;
  for (int i = 0; i + 1 < n; ++i)
    if (x > 0.5f * (map[i] + map[i + 1])) lo = i + 1;
  return lo;
}

std::int64_t blocks_of(std::int64_t n, std::int64_t block) { return (n + block - 1) / block; }

}  // namespace

std::vector<float> dynamic_map_signed() {
  // create_dynamic_map: for exponent i in 0..6, 2^i + 1 linearly spaced fraction boundaries
  // in [0.1, 1]; their midpoints scaled by 10^(i-6), with both signs; then 0 and 1.
  std::vector<double> data;
  constexpr int max_exponent_bits = 7;
  for (int i = 0; i < max_exponent_bits; ++i) {
    const int items = (1 << i) + 1;
    const double scale = std::pow(10.0, -(max_exponent_bits - 1) + i);
    for (int j = 0; j + 1 < items; ++j) {
      const double b0 = 0.1 + 0.9 * j / (items - 1), b1 = 0.1 + 0.9 * (j + 1) / (items - 1);
      const double mean = 0.5 * (b0 + b1);
      data.push_back(scale * mean);
      data.push_back(-scale * mean);
    }
  }
  data.push_back(0.0);
  data.push_back(1.0);
  std::sort(data.begin(), data.end());
  SYNCSCOPE_THROW_IF(data.size() != 256, "dynamic map: expected 256 values");
  return {data.begin(), data.end()};
}

Nf4Tensor nf4_quantize(const std::vector<float>& values, bool double_quant) {
  Nf4Tensor t;
  t.numel = static_cast<std::int64_t>(values.size());
  t.double_quant = double_quant;
  const std::int64_t nblocks = blocks_of(t.numel, kNf4BlockSize);
  std::vector<float> absmax(static_cast<std::size_t>(nblocks), 0.0f);
  for (std::int64_t i = 0; i < t.numel; ++i) {
    const float a = std::fabs(values[static_cast<std::size_t>(i)]);
    SYNCSCOPE_INPUT_ERROR_IF(!std::isfinite(a), fmt::format("nf4_quantize: value {} is not finite", i));
    auto& m = absmax[static_cast<std::size_t>(i / kNf4BlockSize)];
    m = std::max(m, a);
  }
  t.codes.assign(static_cast<std::size_t>(blocks_of(t.numel, 2)), 0);
  for (std::int64_t i = 0; i < t.numel; ++i) {
    const float m = absmax[static_cast<std::size_t>(i / kNf4BlockSize)];
    const float x = m > 0 ? values[static_cast<std::size_t>(i)] / m : 0.0f;
    const auto c = static_cast<std::uint8_t>(nearest(kNf4Values, 16, x));
    auto& byte = t.codes[static_cast<std::size_t>(i / 2)];
    byte = static_cast<std::uint8_t>(i % 2 == 0 ? (byte | (c << 4)) : (byte | c));
  }
  if (!double_quant) {
    t.absmax = std::move(absmax);
    return t;
  }
  double sum = 0;
  for (float a : absmax) sum += a;
  t.offset = nblocks > 0 ? static_cast<float>(sum / static_cast<double>(nblocks)) : 0.0f;
  const std::vector<float> map = dynamic_map_signed();
  const std::int64_t n2 = blocks_of(nblocks, kNf4AbsmaxBlockSize);
  t.absmax2.assign(static_cast<std::size_t>(n2), 0.0f);
  for (std::int64_t b = 0; b < nblocks; ++b) {
    auto& m2 = t.absmax2[static_cast<std::size_t>(b / kNf4AbsmaxBlockSize)];
    m2 = std::max(m2, std::fabs(absmax[static_cast<std::size_t>(b)] - t.offset));
  }
  t.absmax_codes.resize(static_cast<std::size_t>(nblocks));
  for (std::int64_t b = 0; b < nblocks; ++b) {
    const float m2 = t.absmax2[static_cast<std::size_t>(b / kNf4AbsmaxBlockSize)];
    const float x = m2 > 0 ? (absmax[static_cast<std::size_t>(b)] - t.offset) / m2 : 0.0f;
    t.absmax_codes[static_cast<std::size_t>(b)] = static_cast<std::uint8_t>(nearest(map.data(), 256, x));
  }
  return t;
}

std::vector<float> nf4_block_absmax(const Nf4Tensor& t) {
  const std::int64_t nblocks = blocks_of(t.numel, kNf4BlockSize);
  if (!t.double_quant) {
    SYNCSCOPE_INPUT_ERROR_IF(static_cast<std::int64_t>(t.absmax.size()) != nblocks, "nf4: absmax size mismatch");
    return t.absmax;
  }
  SYNCSCOPE_INPUT_ERROR_IF(static_cast<std::int64_t>(t.absmax_codes.size()) != nblocks ||
                               static_cast<std::int64_t>(t.absmax2.size()) != blocks_of(nblocks, kNf4AbsmaxBlockSize),
                           "nf4: double-quantized absmax size mismatch");
  const std::vector<float> map = dynamic_map_signed();
  std::vector<float> out(static_cast<std::size_t>(nblocks));
  for (std::int64_t b = 0; b < nblocks; ++b)
    out[static_cast<std::size_t>(b)] = map[t.absmax_codes[static_cast<std::size_t>(b)]] *
                                           t.absmax2[static_cast<std::size_t>(b / kNf4AbsmaxBlockSize)] +
                                       t.offset;
  return out;
}

std::vector<float> nf4_dequantize(const Nf4Tensor& t) {
  SYNCSCOPE_INPUT_ERROR_IF(static_cast<std::int64_t>(t.codes.size()) != blocks_of(t.numel, 2),
                           "nf4: code size mismatch");
  const std::vector<float> absmax = nf4_block_absmax(t);
  std::vector<float> out(static_cast<std::size_t>(t.numel));
  for (std::int64_t i = 0; i < t.numel; ++i) {
    const std::uint8_t byte = t.codes[static_cast<std::size_t>(i / 2)];
    const int c = i % 2 == 0 ? byte >> 4 : byte & 0x0F;
    out[static_cast<std::size_t>(i)] = kNf4Values[c] * absmax[static_cast<std::size_t>(i / kNf4BlockSize)];
  }
  return out;
}

}  // namespace syncscope::program
