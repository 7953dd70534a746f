// The memory analysis on a real torch.profiler trace recorded with profile_memory=True (HTA's
// df_index_resolver test trace, tests/fixtures/memory/README.md), against figures computed from
// the file by tests/analysis/memory_fixture_expectations.py with the json module alone.
#include <gtest/gtest.h>

#include "syncscope/analysis/memory.hpp"
#include "syncscope/io/trace_io.hpp"
#include "test_paths.hpp"

namespace syncscope {
namespace {

TEST(MemoryFixture, PeaksAndOwnersAsComputedFromTheFile) {
  const Trace t = read_trace(test::fixture("memory/hta_df_index_resolver_rank1.json.gz"));
  const MemoryAnalysis r = analyze_memory(t);
  EXPECT_EQ(r.events, 28010u);
  ASSERT_EQ(r.devices.size(), 2u);
  const DeviceMemory& cpu = r.devices[0];
  EXPECT_EQ(cpu.name, "cpu");
  EXPECT_EQ(cpu.events, 1240u);
  EXPECT_EQ(cpu.allocations, 620u);
  EXPECT_EQ(cpu.frees, 620u);
  EXPECT_EQ(cpu.peak_allocated_bytes, 8);
  EXPECT_EQ(cpu.peak_allocated_ns, 1669783687405327000);
  const DeviceMemory& gpu = r.devices[1];
  EXPECT_EQ(gpu.name, "cuda:1");
  EXPECT_EQ(gpu.events, 26770u);
  EXPECT_EQ(gpu.allocations, 13385u);
  EXPECT_EQ(gpu.frees, 13385u);
  EXPECT_TRUE(gpu.totals_from_trace);
  EXPECT_EQ(gpu.peak_allocated_bytes, 6629508096);
  EXPECT_EQ(gpu.peak_allocated_ns, 1669783687579130000);
  EXPECT_EQ(gpu.peak_reserved_bytes, 12782141440);
  EXPECT_EQ(gpu.peak_reserved_ns, 1669783687404093000);
  EXPECT_EQ(gpu.live_at_peak_bytes, 2532893696);
  EXPECT_EQ(gpu.owner_ops, 15u);
  ASSERT_GE(gpu.owners.size(), 3u);
  EXPECT_EQ(gpu.owners[0].op, "aten::mm");
  EXPECT_EQ(gpu.owners[0].allocations, 143u);
  EXPECT_EQ(gpu.owners[0].bytes, 1037459456);
  EXPECT_EQ(gpu.owners[1].op, "aten::add");
  EXPECT_EQ(gpu.owners[1].bytes, 591224832);
  EXPECT_EQ(gpu.owners[2].op, "aten::addmm");
  EXPECT_EQ(gpu.owners[2].bytes, 428302336);
  EXPECT_LE(gpu.series.size(), kMemorySeriesPoints);
}

}  // namespace
}  // namespace syncscope
