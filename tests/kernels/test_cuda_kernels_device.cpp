// Our CUDA kernels against their CPU references, llm.c dev/cuda style: outputs poisoned
// first, fresh random inputs each run (seed printed), results compared bit for bit (the
// kernels produce exact values: integers, 0 and -inf). Skips without a CUDA device.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "cuda/cuda_api.h"
#include "syncscope/fixes/moe_routing/moe_histogram.h"
#include "syncscope/fixes/moe_routing/reference.hpp"
#include "syncscope/fixes/packing/packing_mask.h"
#include "syncscope/fixes/packing/reference.hpp"
#include "syncscope/program/reference.hpp"

namespace syncscope::kernels {
namespace {

bool have_device() {
  int n = 0;
  return ss_cuda_device_count(&n) == 0 && n > 0;
}

#define SS_CHECK(call)                                               \
  do {                                                               \
    const int rc_ = (call);                                          \
    ASSERT_EQ(rc_, 0) << #call << ": " << ss_cuda_error_string(rc_); \
  } while (0)

std::uint64_t fresh_seed() {
  const std::uint64_t s = std::random_device{}();
  std::printf("seed %llu\n", static_cast<unsigned long long>(s));
  return s;
}

// Expected bit pattern of 0 / -inf in each mask dtype.
std::uint32_t expect_bits(bool allowed, int dtype) {
  if (allowed) return 0u;
  switch (dtype) {
    case SS_DTYPE_F32: {
      const float f = -INFINITY;
      std::uint32_t u;
      std::memcpy(&u, &f, 4);
      return u;
    }
    case SS_DTYPE_BF16: return 0xFF80u;
    default: return 0xFC00u;  // fp16 -inf
  }
}

void check_mask(const std::vector<std::int32_t> &lengths, int window, int dtype) {
  const fixes::packing::PackedMetadata meta = fixes::packing::packed_metadata(lengths);
  const auto ref = fixes::packing::packed_causal_mask(lengths, window);
  const std::size_t T = static_cast<std::size_t>(meta.total), n = lengths.size();
  const std::size_t esize = dtype == SS_DTYPE_F32 ? 4 : 2;
  void *d_len = nullptr, *d_cu = nullptr, *d_mask = nullptr;
  SS_CHECK(ss_cuda_malloc(&d_len, n * 4));
  SS_CHECK(ss_cuda_malloc(&d_cu, (n + 1) * 4));
  SS_CHECK(ss_cuda_malloc(&d_mask, T * T * esize));
  SS_CHECK(ss_cuda_memcpy(d_len, lengths.data(), n * 4, 1));
  SS_CHECK(ss_cuda_memset(d_cu, 0xFF, (n + 1) * 4));      // poison
  SS_CHECK(ss_cuda_memset(d_mask, 0x7F, T * T * esize));  // poison: a NaN/garbage pattern
  SS_CHECK(ss_packed_mask(static_cast<const std::int32_t *>(d_len), static_cast<int>(n), static_cast<int>(T), window,
                          static_cast<std::int32_t *>(d_cu), d_mask, dtype, nullptr));
  SS_CHECK(ss_cuda_device_synchronize());
  std::vector<std::int32_t> cu(n + 1);
  std::vector<unsigned char> mask(T * T * esize);
  SS_CHECK(ss_cuda_memcpy(cu.data(), d_cu, (n + 1) * 4, 2));
  SS_CHECK(ss_cuda_memcpy(mask.data(), d_mask, mask.size(), 2));
  EXPECT_EQ(cu, meta.cu_seqlens);
  std::size_t bad = 0;
  for (std::size_t i = 0; i < T * T; ++i) {
    std::uint32_t got = 0;
    std::memcpy(&got, mask.data() + i * esize, esize);
    if (got != expect_bits(fixes::packing::mask_allows(ref[i]), dtype) && bad++ < 5)
      ADD_FAILURE() << "mask[" << i / T << "," << i % T << "] = 0x" << std::hex << got;
  }
  EXPECT_EQ(bad, 0u) << "T=" << T << " window=" << window << " dtype=" << dtype;
  ss_cuda_free(d_len);
  ss_cuda_free(d_cu);
  ss_cuda_free(d_mask);
}

TEST(PackedMaskKernel, MatchesCpuReference) {
  if (!have_device()) GTEST_SKIP() << "skipped: no CUDA device";
  std::mt19937_64 rng(fresh_seed());
  for (int T : {1, 96, 2048}) {
    std::vector<std::int32_t> lengths;
    for (int left = T; left > 0;) {
      const int len = std::min(left, 1 + static_cast<int>(rng() % 700));
      lengths.push_back(len);
      left -= len;
    }
    for (int window : {0, 128})
      for (int dtype : {SS_DTYPE_F32, SS_DTYPE_BF16, SS_DTYPE_F16}) check_mask(lengths, window, dtype);
  }
}

TEST(PackedMaskKernel, RejectsBadArguments) {
  if (!have_device()) GTEST_SKIP() << "skipped: no CUDA device";
  EXPECT_NE(ss_packed_mask(nullptr, 1, 1, 0, nullptr, nullptr, SS_DTYPE_F32, nullptr), 0);
}

TEST(MoeHistogramKernel, MatchesCpuReference) {
  if (!have_device()) GTEST_SKIP() << "skipped: no CUDA device";
  std::mt19937_64 rng(fresh_seed());
  for (int E : {1, 4, 32, 128})
    for (std::int64_t n : {std::int64_t{0}, std::int64_t{1}, std::int64_t{8192}}) {
      std::vector<std::int64_t> ids(static_cast<std::size_t>(n));
      for (auto &id : ids) id = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(E));
      const fixes::moe_routing::Routing ref = fixes::moe_routing::route(ids, E);
      void *d_ids = nullptr, *d_counts = nullptr, *d_offsets = nullptr;
      SS_CHECK(ss_cuda_malloc(&d_ids, std::max<std::size_t>(1, ids.size()) * 8));
      SS_CHECK(ss_cuda_malloc(&d_counts, static_cast<std::size_t>(E) * 8));
      SS_CHECK(ss_cuda_malloc(&d_offsets, static_cast<std::size_t>(E + 1) * 8));
      if (n > 0) SS_CHECK(ss_cuda_memcpy(d_ids, ids.data(), ids.size() * 8, 1));
      SS_CHECK(ss_cuda_memset(d_counts, 0xFF, static_cast<std::size_t>(E) * 8));
      SS_CHECK(ss_cuda_memset(d_offsets, 0xFF, static_cast<std::size_t>(E + 1) * 8));
      SS_CHECK(ss_moe_histogram(static_cast<const std::int64_t *>(d_ids), n, E, static_cast<std::int64_t *>(d_counts),
                                static_cast<std::int64_t *>(d_offsets), nullptr));
      SS_CHECK(ss_cuda_device_synchronize());
      std::vector<std::int64_t> counts(static_cast<std::size_t>(E)), offsets(static_cast<std::size_t>(E + 1));
      SS_CHECK(ss_cuda_memcpy(counts.data(), d_counts, counts.size() * 8, 2));
      SS_CHECK(ss_cuda_memcpy(offsets.data(), d_offsets, offsets.size() * 8, 2));
      EXPECT_EQ(counts, ref.counts) << "E=" << E << " n=" << n;
      EXPECT_EQ(offsets, ref.offsets) << "E=" << E << " n=" << n;
      ss_cuda_free(d_ids);
      ss_cuda_free(d_counts);
      ss_cuda_free(d_offsets);
    }
}

// bf16 of an fp32 value, round to nearest even (as __float2bfloat16).
std::uint16_t bf16_bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  const std::uint32_t rounding = 0x7FFFu + ((u >> 16) & 1u);
  return static_cast<std::uint16_t>((u + rounding) >> 16);
}

// Every numbered NF4 variant against the CPU reference before anything times it (llm.c
// dev/cuda style): odd sizes and partial blocks, fp32 bit for bit (one fp32 multiply each
// side) and bf16 as the reference's value rounded; double quantization through ss_nf4_absmax.
TEST(Nf4DequantKernel, EveryVariantMatchesCpuReference) {
  if (!have_device()) GTEST_SKIP() << "skipped: no CUDA device";
  std::mt19937_64 rng(fresh_seed());
  std::normal_distribution<float> normal(0.0f, 0.02f);
  for (bool dq : {false, true})
    for (std::int64_t n : {std::int64_t{2}, std::int64_t{64}, std::int64_t{130}, std::int64_t{64 * 300 + 18},
                           std::int64_t{5120 * 1024}}) {
      std::vector<float> w(static_cast<std::size_t>(n));
      for (auto &x : w) x = normal(rng);
      const program::Nf4Tensor q = program::nf4_quantize(w, dq);
      const std::vector<float> ref = program::nf4_dequantize(q);
      const std::vector<float> absmax = program::nf4_block_absmax(q);
      void *d_codes = nullptr, *d_absmax = nullptr, *d_out = nullptr;
      SS_CHECK(ss_cuda_malloc(&d_codes, q.codes.size()));
      SS_CHECK(ss_cuda_malloc(&d_absmax, absmax.size() * 4));
      SS_CHECK(ss_cuda_malloc(&d_out, static_cast<std::size_t>(n) * 4));
      SS_CHECK(ss_cuda_memcpy(d_codes, q.codes.data(), q.codes.size(), 1));
      if (dq) {
        // The absmax the kernels read comes from the 8-bit codes on the device.
        const std::vector<float> map = program::dynamic_map_signed();
        void *d_q = nullptr, *d_map = nullptr, *d_a2 = nullptr;
        SS_CHECK(ss_cuda_malloc(&d_q, q.absmax_codes.size()));
        SS_CHECK(ss_cuda_malloc(&d_map, map.size() * 4));
        SS_CHECK(ss_cuda_malloc(&d_a2, q.absmax2.size() * 4));
        SS_CHECK(ss_cuda_memcpy(d_q, q.absmax_codes.data(), q.absmax_codes.size(), 1));
        SS_CHECK(ss_cuda_memcpy(d_map, map.data(), map.size() * 4, 1));
        SS_CHECK(ss_cuda_memcpy(d_a2, q.absmax2.data(), q.absmax2.size() * 4, 1));
        SS_CHECK(ss_nf4_absmax(static_cast<const std::uint8_t *>(d_q), static_cast<const float *>(d_map),
                               static_cast<const float *>(d_a2), q.offset, static_cast<std::int64_t>(absmax.size()),
                               static_cast<float *>(d_absmax), nullptr));
        SS_CHECK(ss_cuda_device_synchronize());
        std::vector<float> got(absmax.size());
        SS_CHECK(ss_cuda_memcpy(got.data(), d_absmax, got.size() * 4, 2));
        for (std::size_t b = 0; b < got.size(); ++b) EXPECT_NEAR(got[b], absmax[b], 1e-6f * std::fabs(absmax[b])) << b;
        SS_CHECK(ss_cuda_memcpy(d_absmax, absmax.data(), absmax.size() * 4, 1));  // compare the 4-bit step exactly
        ss_cuda_free(d_q);
        ss_cuda_free(d_map);
        ss_cuda_free(d_a2);
      } else {
        SS_CHECK(ss_cuda_memcpy(d_absmax, absmax.data(), absmax.size() * 4, 1));
      }
      for (int variant = 1; variant <= SS_NF4_VARIANTS; ++variant) {
        SCOPED_TRACE(testing::Message() << "variant " << variant << " n=" << n << " dq=" << dq);
        SS_CHECK(ss_cuda_memset(d_out, 0xFF, static_cast<std::size_t>(n) * 4));  // poison
        SS_CHECK(ss_nf4_dequantize(static_cast<const std::uint8_t *>(d_codes), static_cast<const float *>(d_absmax), n,
                                   d_out, SS_DTYPE_F32, variant, nullptr));
        SS_CHECK(ss_cuda_device_synchronize());
        std::vector<float> got(static_cast<std::size_t>(n));
        SS_CHECK(ss_cuda_memcpy(got.data(), d_out, got.size() * 4, 2));
        std::int64_t bad = 0;
        for (std::size_t i = 0; i < got.size(); ++i) bad += std::memcmp(&got[i], &ref[i], 4) != 0;
        EXPECT_EQ(bad, 0);
        SS_CHECK(ss_nf4_dequantize(static_cast<const std::uint8_t *>(d_codes), static_cast<const float *>(d_absmax), n,
                                   d_out, SS_DTYPE_BF16, variant, nullptr));
        SS_CHECK(ss_cuda_device_synchronize());
        std::vector<std::uint16_t> half(static_cast<std::size_t>(n));
        SS_CHECK(ss_cuda_memcpy(half.data(), d_out, half.size() * 2, 2));
        bad = 0;
        for (std::size_t i = 0; i < half.size(); ++i) bad += half[i] != bf16_bits(ref[i]);
        EXPECT_EQ(bad, 0);
      }
      ss_cuda_free(d_codes);
      ss_cuda_free(d_absmax);
      ss_cuda_free(d_out);
    }
}

TEST(Nf4DequantKernel, RejectsBadArguments) {
  if (!have_device()) GTEST_SKIP() << "skipped: no CUDA device";
  EXPECT_NE(ss_nf4_dequantize(nullptr, nullptr, 4, nullptr, SS_DTYPE_F32, 1, nullptr), 0);
  EXPECT_NE(ss_nf4_dequantize(nullptr, nullptr, 0, nullptr, SS_DTYPE_F32, SS_NF4_VARIANTS + 1, nullptr), 0);
}

}  // namespace
}  // namespace syncscope::kernels
