// The memory analysis (syncscope/analysis/memory.hpp) on traces built by hand, with the peak and
// its owners worked out in the comments, and its printers (JSON, CSV, table).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <sstream>

#include "../../reports/src/analysis_memory_printers.hpp"
#include "syncscope/analysis/analysis.hpp"
#include "syncscope/analysis/memory.hpp"

namespace syncscope {
namespace {

struct MemTrace {
  Trace t;
  void op(std::string_view name, Ns start, Ns end, std::int64_t tid = 1, std::int64_t pid = 100) {
    Range r;
    r.kind = RangeKind::CpuOp;
    r.name = t.intern(name);
    r.pid = pid;
    r.tid = tid;
    r.start = start;
    r.end = end;
    t.ranges.push_back(r);
  }
  void mem(Ns ts, std::int64_t bytes, std::uint64_t addr, std::int64_t total, std::int64_t reserved,
           std::int64_t tid = 1, std::int32_t device = 0, std::int64_t pid = 100) {
    MemoryEvent m;
    m.pid = pid;
    m.tid = tid;
    m.timestamp = ts;
    m.bytes = bytes;
    m.address = addr;
    m.total_allocated = total;
    m.total_reserved = reserved;
    m.device_type = 1;
    m.device = device;
    t.memory.push_back(m);
  }
};

// 5000 bytes were allocated before the trace. On thread 1:
//   aten::linear [100, 400] > aten::addmm [150, 300] > aten::empty [160, 170]
//   CompiledFunction [500, 700] (not aten::)
// and on thread 2 an aten::zeros [0, 2000] that must not own thread 1's allocations.
//   t=160  A +1000 in aten::empty < addmm < linear: owner aten::linear (outermost aten::)  total 6000
//   t=600  B  +500 in CompiledFunction only: owner CompiledFunction (innermost)              total 6500
//   t=800  C  +200 in no op: "(no op)"                                                         total 6700 = peak
//   t=900  A -1000                                                                            total 5700
//   t=1000 D  +300, reserved grows 8000 -> 10000                                              total 6000
// Peak allocated 6700 at 800; live then: A, B, C = 1700 bytes; unattributed 5000.
MemTrace worked_example() {
  MemTrace m;
  m.op("aten::linear", 100, 400);
  m.op("aten::addmm", 150, 300);
  m.op("aten::empty", 160, 170);
  m.op("CompiledFunction", 500, 700);
  m.op("aten::zeros", 0, 2000, 2);
  m.mem(160, 1000, 0xA, 6000, 8000);
  m.mem(600, 500, 0xB, 6500, 8000);
  m.mem(800, 200, 0xC, 6700, 8000);
  m.mem(900, -1000, 0xA, 5700, 8000);
  m.mem(1000, 300, 0xD, 6000, 10000);
  m.t.finalize();
  return m;
}

TEST(Memory, PeakAndWhoHoldsIt) {
  const MemoryAnalysis r = analyze_memory(worked_example().t);
  EXPECT_EQ(r.events, 5u);
  ASSERT_EQ(r.devices.size(), 1u);
  const DeviceMemory& d = r.devices[0];
  EXPECT_EQ(d.name, "cuda:0");
  EXPECT_EQ(d.allocations, 4u);
  EXPECT_EQ(d.frees, 1u);
  EXPECT_EQ(d.allocated_bytes, 2000);
  EXPECT_EQ(d.freed_bytes, 1000);
  EXPECT_TRUE(d.totals_from_trace);
  EXPECT_EQ(d.peak_allocated_bytes, 6700);
  EXPECT_EQ(d.peak_allocated_ns, 800);
  EXPECT_EQ(d.peak_reserved_bytes, 10000);
  EXPECT_EQ(d.peak_reserved_ns, 1000);
  EXPECT_EQ(d.live_at_peak_bytes, 1700);
  EXPECT_EQ(d.unattributed_bytes, 5000);
  ASSERT_EQ(d.owners.size(), 3u);
  EXPECT_EQ(d.owners[0].op, "aten::linear");
  EXPECT_EQ(d.owners[0].bytes, 1000);
  EXPECT_EQ(d.owners[1].op, "CompiledFunction");
  EXPECT_EQ(d.owners[1].bytes, 500);
  EXPECT_EQ(d.owners[2].op, "(no op)");
  EXPECT_EQ(d.owners[2].bytes, 200);
  ASSERT_EQ(d.series.size(), 5u);  // few events: every one
  EXPECT_EQ(d.series[2].time_ns, 800);
  EXPECT_EQ(d.series[2].allocated_bytes, 6700);
  EXPECT_EQ(d.series[4].reserved_bytes, 10000);
}

// Without "Total Allocated" (Kineto of 2021), allocated is the running sum of Bytes from 0:
// +1000, +500, +200 = 1700 at 800, the same owners; reserved stays unknown.
TEST(Memory, WithoutTotalsRunningSums) {
  MemTrace m = worked_example();
  for (auto& e : m.t.memory) e.total_allocated = e.total_reserved = -1;
  const DeviceMemory d = analyze_memory(m.t).devices.at(0);
  EXPECT_FALSE(d.totals_from_trace);
  EXPECT_EQ(d.peak_allocated_bytes, 1700);
  EXPECT_EQ(d.peak_allocated_ns, 800);
  EXPECT_EQ(d.peak_reserved_bytes, -1);
  EXPECT_EQ(d.live_at_peak_bytes, 1700);
  EXPECT_EQ(d.unattributed_bytes, 0);
  EXPECT_EQ(d.series.back().reserved_bytes, -1);
}

// Devices apart; a free of a block allocated before the trace is counted, not matched; the pid
// filter keeps one process.
TEST(Memory, DevicesFreesOfOlderBlocksAndPidFilter) {
  MemTrace m = worked_example();
  m.mem(50, -64, 0xF, 100, 200, 1, 1);  // device 1: frees a block from before the trace
  m.mem(60, 32, 0xE, 132, 200, 1, 1);
  m.mem(70, 4096, 0x1, 4096, 4096, 5, 0, 200);  // another process
  m.t.finalize();
  const MemoryAnalysis all = analyze_memory(m.t);
  ASSERT_EQ(all.devices.size(), 2u);
  const DeviceMemory& d1 = all.devices[1];
  EXPECT_EQ(d1.name, "cuda:1");
  EXPECT_EQ(d1.unmatched_frees, 1u);  // the free at 50 comes before the peak (132 at 60)
  EXPECT_EQ(d1.peak_allocated_bytes, 132);
  const MemoryAnalysis only = analyze_memory(m.t, 100);
  EXPECT_EQ(only.events, 7u);
  EXPECT_EQ(only.devices[0].peak_allocated_bytes, 6700);
  const MemoryAnalysis other = analyze_memory(m.t, 200);
  ASSERT_EQ(other.devices.size(), 1u);
  EXPECT_EQ(other.devices[0].owners.at(0).op, "(no op)");  // process 200 has no ops
}

TEST(Memory, UnmatchedFreeBeforeThePeakIsCounted) {
  MemTrace m;
  m.mem(10, -64, 0xF, 0, 64);
  m.mem(20, 128, 0x1, 128, 192);
  m.t.finalize();
  const DeviceMemory d = analyze_memory(m.t).devices.at(0);
  EXPECT_EQ(d.unmatched_frees, 1u);
  EXPECT_EQ(d.live_at_peak_bytes, 128);
}

// Many events: at most kMemorySeriesPoints points, and the peak survives the thinning.
TEST(Memory, SeriesIsBoundedAndKeepsThePeak) {
  MemTrace m;
  std::int64_t total = 0;
  for (int i = 0; i < 10000; ++i) {
    const std::int64_t b = i == 7777 ? 1'000'000 : (i % 2 == 0 ? 64 : -64);
    total += b;
    const int block = i == 7777 || i % 2 == 0 ? i : i - 1;  // odd events free the block before them
    m.mem(1'000'000'000'000'000'000 + i * 997, b, 0x100 + static_cast<std::uint64_t>(block), total, 1 << 30);
    if (i == 7777) {
      m.mem(1'000'000'000'000'000'000 + i * 997 + 1, -1'000'000, 0x100 + 7777, total - 1'000'000, 1 << 30);
      total -= 1'000'000;
    }
  }
  m.t.finalize();
  const DeviceMemory d = analyze_memory(m.t).devices.at(0);
  EXPECT_LE(d.series.size(), kMemorySeriesPoints);
  EXPECT_GE(d.series.size(), kMemorySeriesPoints / 2);
  std::int64_t best = 0;
  Ns at = 0;
  for (const auto& p : d.series)
    if (p.allocated_bytes > best) {
      best = p.allocated_bytes;
      at = p.time_ns;
    }
  EXPECT_EQ(best, d.peak_allocated_bytes);
  EXPECT_EQ(at, d.peak_allocated_ns);
  EXPECT_EQ(d.peak_allocated_ns, 1'000'000'000'000'000'000 + 7777 * 997);
  for (std::size_t i = 1; i < d.series.size(); ++i) EXPECT_LT(d.series[i - 1].time_ns, d.series[i].time_ns);
  EXPECT_EQ(d.series.front().time_ns, 1'000'000'000'000'000'000);  // the first event, kept as it is
  EXPECT_EQ(d.series.front().allocated_bytes, 64);
}

TEST(Memory, NoEventsNoDevices) {
  Trace t;
  const MemoryAnalysis r = analyze_memory(t);
  EXPECT_EQ(r.events, 0u);
  EXPECT_TRUE(r.devices.empty());
  std::ostringstream out;
  reports_detail::print_memory_table(r, out);
  EXPECT_EQ(out.str(), "");
  EXPECT_EQ(reports_detail::memory_json(r).dump(), R"({"events":0,"devices":[]})");
}

TEST(Memory, DeviceNames) {
  EXPECT_EQ(memory_device_name(0, -1), "cpu");
  EXPECT_EQ(memory_device_name(1, 3), "cuda:3");
  EXPECT_EQ(memory_device_name(6, 0), "hip:0");
  EXPECT_EQ(memory_device_name(42, 0), "type 42:0");
  EXPECT_EQ(memory_device_name(-1, -1), "unknown");
}

// In `analyze`: the JSON at gpu.memory, CSV rows and the table block.
TEST(Memory, InAnalyzeEveryForm) {
  const AnalysisResult r = analyze(worked_example().t);
  ASSERT_EQ(r.gpu.memory.devices.size(), 1u);
  const auto j = reports_detail::memory_json(r.gpu.memory);
  const auto& d = j["devices"][0];
  EXPECT_EQ(d["peak_allocated_bytes"], 6700);
  EXPECT_EQ(d["owners"][0]["op"], "aten::linear");
  EXPECT_EQ(d["series"]["time_ns"].size(), 5u);
  CsvWriter csv;
  reports_detail::memory_rows(r.gpu.memory, csv, "1");
  const std::string rows = csv.str();
  EXPECT_NE(rows.find("memory,cuda:0,0,peak_allocated_bytes,6700,1"), std::string::npos) << rows;
  EXPECT_NE(rows.find("memory_owner,cuda:0,1,op,CompiledFunction,1"), std::string::npos) << rows;
  EXPECT_NE(rows.find("memory_series,cuda:0,4,reserved_bytes,10000,1"), std::string::npos) << rows;
  std::ostringstream out;
  reports_detail::print_memory_table(r.gpu.memory, out);
  EXPECT_NE(out.str().find("aten::linear"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("cuda:0"), std::string::npos) << out.str();
}

}  // namespace
}  // namespace syncscope
