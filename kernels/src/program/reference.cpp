#include "syncscope/program/reference.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "syncscope/core/error.hpp"

namespace syncscope::program {

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
