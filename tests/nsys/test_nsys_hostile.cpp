// Hostile input to the Nsight Systems reader: text where an integer belongs is a counted warning and
// the row skipped (it read as 0: wrong figures, exit 0), and a name cut at 1 MiB is said.
#include <gtest/gtest.h>

#include "nsys_fixture.hpp"
#include "syncscope/io/trace_io.hpp"

namespace syncscope {
namespace {

bool warned_of(const Trace& t, const std::string& text) {
  for (const auto& w : t.meta.warnings)
    if (w.find(text) != std::string::npos) return true;
  return false;
}

TEST(NsysHostile, TextInAnIntegerColumnSkipsTheRowWithAWarning) {
  test::TempDir dir;
  const Trace clean = read_trace(test::build_export(dir, "nsys_2024_6"));
  const Trace t =
      read_trace(test::build_export(dir, "nsys_2024_6",
                                    "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET gridX = 'many' WHERE rowid = 1;\n"
                                    "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET correlationId = x'00ff' WHERE rowid = 1;"));
  EXPECT_EQ(t.kernels.size() + 1, clean.kernels.size());
  EXPECT_EQ(t.api_calls.size() + 1, clean.api_calls.size());
  EXPECT_TRUE(warned_of(t, "1 rows of CUPTI_ACTIVITY_KIND_KERNEL skipped: text or a blob where an integer belongs"));
  EXPECT_TRUE(warned_of(t, "1 rows of CUPTI_ACTIVITY_KIND_RUNTIME skipped: text or a blob where an integer belongs"));
  EXPECT_FALSE(warned_of(clean, "text or a blob"));
}

TEST(NsysHostile, ANameCutAtOneMebibyteIsSaid) {
  test::TempDir dir;
  // 1.2 million characters: hex(zeroblob(N)) is 2N zeros.
  const Trace t = read_trace(
      test::build_export(dir, "nsys_2024_6",
                         "UPDATE StringIds SET value = replace(hex(zeroblob(600000)), '0', 'x') WHERE id = 1;"));
  EXPECT_TRUE(warned_of(t, "StringIds names longer than 1 MiB cut to 1 MiB"))
      << ::testing::PrintToString(t.meta.warnings);
}

}  // namespace
}  // namespace syncscope
