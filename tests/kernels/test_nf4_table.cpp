// The NF4 codebook (nf4_table.hpp) and the signed dynamic map of double quantization
// (dynamic_map_signed) against values from outside this repository's code, on the CPU.
// The CUDA kernels read the same codebook (nf4_dequant.cu initializes its __constant__
// copy from kNf4Codebook); the last test checks that no .cu file keeps a table of its own,
// since the device tests that compare kernel and reference have not run on a GPU yet.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "syncscope/core/file_io.hpp"
#include "syncscope/program/nf4_table.hpp"
#include "syncscope/program/reference.hpp"
#include "test_paths.hpp"

namespace syncscope::program {
namespace {

// QLoRA (Dettmers et al. 2023, arXiv:2305.14314), appendix E, "NormalFloat 4-bit data type":
// the 16 values as printed there (bitsandbytes-foundation/bitsandbytes,
// bitsandbytes/functional.py get_4bit_type("nf4"), holds the same literal list). Typed here
// from the paper, not copied from nf4_table.hpp.
constexpr double kPaperNf4[16] = {-1.0,
                                  -0.6961928009986877,
                                  -0.5250730514526367,
                                  -0.39491748809814453,
                                  -0.28444138169288635,
                                  -0.18477343022823334,
                                  -0.09105003625154495,
                                  0.0,
                                  0.07958029955625534,
                                  0.16093020141124725,
                                  0.24611230194568634,
                                  0.33791524171829224,
                                  0.44070982933044434,
                                  0.5626170039176941,
                                  0.7229568362236023,
                                  1.0};

TEST(Nf4Table, IsTheQloraPapersCodebook) {
  static_assert(sizeof(kNf4Codebook.values) / sizeof(float) == 16);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(kNf4Values[i], static_cast<float>(kPaperNf4[i])) << "code " << i;
  // Code 7 is exact zero and codes 0 and 15 the block's -absmax and +absmax.
  EXPECT_EQ(kNf4Values[7], 0.0f);
  EXPECT_EQ(kNf4Values[0], -1.0f);
  EXPECT_EQ(kNf4Values[15], 1.0f);
}

// The standard normal quantile by bisection on the CDF, 0.5 erfc(-x / sqrt 2) (double).
double normal_quantile(double p) {
  double lo = -10, hi = 10;
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    (0.5 * std::erfc(-mid / std::sqrt(2.0)) < p ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

// The construction the paper describes (bitsandbytes' create_normal_map, offset
// delta = 1/2 (1/30 + 1/32) from 1: 0.9677083): 8 quantiles of N(0,1) at probabilities
// linearly spaced from delta to 1/2 (the last, 1/2, left out) for the positive side, 7 for
// the negative side, and zero; normalized by the largest. Computed here in double;
// bitsandbytes spaced the probabilities in float32. Tolerance from that: a float32
// probability near 0.968 is off by at most 2^-24 x 0.968 = 5.8e-8, the quantile's slope there
// is 1/phi(1.848) = 13.8, so each unnormalized value is off by at most 8e-7, 4.3e-7 after
// dividing by 1.848, plus the float32 rounding of the stored value (6e-8): 5e-7 in all.
TEST(Nf4Table, FollowsFromTheNormalQuantiles) {
  const double delta = 0.9677083;
  std::vector<double> v;
  for (int i = 0; i < 8; ++i) v.push_back(normal_quantile(delta + (0.5 - delta) * i / 8.0));
  for (int j = 0; j < 7; ++j) v.push_back(-normal_quantile(delta + (0.5 - delta) * j / 7.0));
  v.push_back(0.0);
  const double top = normal_quantile(delta);
  std::sort(v.begin(), v.end());
  ASSERT_EQ(v.size(), 16u);
  for (int i = 0; i < 16; ++i) EXPECT_NEAR(kNf4Values[i], v[static_cast<std::size_t>(i)] / top, 5e-7) << "code " << i;
}

// bitsandbytes' create_dynamic_map(signed=True, max_exponent_bits=7, total_bits=8), by hand:
// for exponent i = 0..6 there are 2^i + 1 boundaries linearly spaced in [0.1, 1]; each pair's
// midpoint times 10^(i-6), with both signs (2 x 127 values), then 0 and 1; sorted.
//   smallest magnitude: i = 0, one interval [0.1, 1], midpoint 0.55, x 1e-6 = 5.5e-7
//   largest below 1:   i = 6, 64 intervals, the last [0.9859375, 1], midpoint 0.99296875
//   i = 1: boundaries 0.1, 0.55, 1, midpoints 0.325 and 0.775, x 1e-5
// so sorted: map[0] = -0.99296875, map[126] = -5.5e-7, map[127] = 0, map[128] = 5.5e-7,
// map[129] = 3.25e-6 and map[130] = 7.75e-6 (i = 1), map[254] = 0.99296875, map[255] = 1.
TEST(DynamicMap, IsBitsandbytesSignedDynamicMap) {
  const std::vector<float> map = program::dynamic_map_signed();
  ASSERT_EQ(map.size(), 256u);
  EXPECT_FLOAT_EQ(map[0], -0.99296875f);
  EXPECT_FLOAT_EQ(map[126], -5.5e-7f);
  EXPECT_EQ(map[127], 0.0f);
  EXPECT_FLOAT_EQ(map[128], 5.5e-7f);
  EXPECT_FLOAT_EQ(map[129], 3.25e-6f);
  EXPECT_FLOAT_EQ(map[130], 7.75e-6f);
  EXPECT_FLOAT_EQ(map[254], 0.99296875f);
  EXPECT_EQ(map[255], 1.0f);
  // Symmetric apart from the extra 1: map[k] = -map[254 - k] for k < 127.
  for (int k = 0; k < 127; ++k)
    EXPECT_EQ(map[static_cast<std::size_t>(k)], -map[static_cast<std::size_t>(254 - k)]) << k;
}

// One table: the CUDA source takes the codebook from nf4_table.hpp and writes none of its
// values itself (a second literal copy could drift from the one the tests above pin).
TEST(Nf4Table, CudaKernelsUseTheSharedTable) {
  const std::string cu = read_file(test::source_dir() / "kernels/src/cuda/nf4_dequant.cu");
  EXPECT_NE(cu.find("#include \"syncscope/program/nf4_table.hpp\""), std::string::npos);
  EXPECT_NE(cu.find("= syncscope::program::kNf4Codebook;"), std::string::npos);
  for (const char* literal : {"0.6961928", "0.5250730", "0.0795802", "0.7229568"})
    EXPECT_EQ(cu.find(literal), std::string::npos) << literal << " written in nf4_dequant.cu";
}

}  // namespace
}  // namespace syncscope::program
