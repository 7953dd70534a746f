// split_processes (trace/split_processes.hpp) on a hand-built trace of two ranks' processes and
// a launcher, as one Nsight Systems report of a torchrun job holds them: host records by pid,
// GPU records by their launch's correlation id, else by the device's one process; the launcher
// (no GPU work) dropped and counted; ranks by device where each process ran on one.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "syncscope/trace/split_processes.hpp"

namespace syncscope {
namespace {

// Correlation ids as the nsys reader makes them unique across processes: (pid << 32) | id.
std::uint64_t corr(std::int64_t pid, std::uint64_t id) { return (static_cast<std::uint64_t>(pid) << 32) | id; }

struct TwoRanks {
  Trace t;

  void call(std::int64_t pid, const char* name, Ns a, Ns b, std::uint64_t c) {
    ApiCall x;
    x.name = t.intern(name);
    x.pid = pid;
    x.tid = pid + 1;
    x.start = a;
    x.end = b;
    x.correlation = c;
    t.api_calls.push_back(x);
  }
  void kernel(std::int32_t device, std::uint64_t c, Ns a, Ns b) {
    Kernel k;
    k.name = t.intern("k");
    k.device = device;
    k.stream = 7;
    k.start = a;
    k.end = b;
    k.correlation = c;
    t.kernels.push_back(k);
  }
  void host_range(std::int64_t pid, const char* name, Ns a, Ns b) {
    Range r;
    r.kind = RangeKind::NvtxPushPop;
    r.name = t.intern(name);
    r.pid = pid;
    r.tid = pid + 1;
    r.start = a;
    r.end = b;
    t.ranges.push_back(r);
  }

  // pid 145 runs on device 0 and pid 144 on device 1 (so device order is not pid order); pid 7
  // is torchrun: a host call and its name, no GPU work.
  TwoRanks() {
    t.meta.source_tool = "nsys";
    t.meta.extra["nsys.correlation"] = "(pid << 32) | correlationId";
    t.track_names = {{"144", "", "python3"}, {"145", "", "python3"}, {"7", "", "torchrun"}, {"144", "145", "main"}};
    call(144, "cudaLaunchKernel", 10, 15, corr(144, 1));
    kernel(1, corr(144, 1), 20, 40);
    call(145, "cudaLaunchKernel", 11, 16, corr(145, 1));
    kernel(0, corr(145, 1), 21, 45);
    call(7, "cudaGetDeviceCount", 1, 2, 0);
    host_range(144, "step", 0, 100);
    host_range(145, "step", 0, 100);
    host_range(7, "launcher", 0, 200);
    // A copy joined by correlation, a memset with no call (device 1: pid 144's), a sync record
    // whose device is wrong (pid 145's call, deviceId 1 as real exports write it): by correlation.
    call(144, "cudaMemcpyAsync", 50, 52, corr(144, 2));
    Memcpy m;
    m.device = 1;
    m.start = 55;
    m.end = 60;
    m.correlation = corr(144, 2);
    t.memcpys.push_back(m);
    Memset s;
    s.device = 1;
    s.start = 61;
    s.end = 62;
    s.correlation = corr(144, 99);  // no such call
    t.memsets.push_back(s);
    call(145, "cudaStreamSynchronize", 50, 70, corr(145, 3));
    SyncRecord y;
    y.type = SyncType::StreamSync;
    y.device = 1;
    y.stream = 7;
    y.start = 50;
    y.end = 70;
    y.correlation = corr(145, 3);
    t.syncs.push_back(y);
    // A kernel on a device no launch ran on, with no call: nobody's, counted.
    kernel(5, 0, 80, 90);
    t.finalize();
  }
};

TEST(SplitProcesses, GpuProcessesAreThoseWithLaunchesJoinedByCorrelation) {
  const TwoRanks b;
  EXPECT_EQ(gpu_processes(b.t), (std::vector<std::int64_t>{144, 145}));
  EXPECT_TRUE(holds_several_processes(b.t));
  // Calls of two processes, GPU work of one: not several ranks.
  TwoRanks one;
  for (Kernel& k : one.t.kernels)
    if (k.correlation == corr(145, 1)) k.correlation = corr(144, 1);
  EXPECT_EQ(gpu_processes(one.t), (std::vector<std::int64_t>{144}));
  EXPECT_FALSE(holds_several_processes(one.t));
}

TEST(SplitProcesses, EachProcessTakesItsHostRecordsAndItsGpuWork) {
  const TwoRanks b;
  const ProcessSplit split = split_processes(b.t);
  ASSERT_EQ(split.processes.size(), 2u);
  EXPECT_EQ(split.rank_rule, RankRule::Device);
  // By rank: pid 145 ran on device 0, so it is rank 0.
  const ProcessTrace& r0 = split.processes[0];
  const ProcessTrace& r1 = split.processes[1];
  EXPECT_EQ(r0.pid, 145);
  EXPECT_EQ(r0.rank, 0);
  EXPECT_EQ(r0.name, "python3");
  EXPECT_EQ(r0.devices, (std::vector<std::int32_t>{0}));
  EXPECT_EQ(r1.pid, 144);
  EXPECT_EQ(r1.rank, 1);
  EXPECT_EQ(r1.devices, (std::vector<std::int32_t>{1}));

  // Host records by pid.
  for (const ProcessTrace* p : {&r0, &r1}) {
    for (const ApiCall& c : p->trace.api_calls) EXPECT_EQ(c.pid, p->pid);
    ASSERT_EQ(p->trace.ranges.size(), 1u);
    EXPECT_EQ(p->trace.ranges[0].pid, p->pid);
    EXPECT_EQ(p->trace.str(p->trace.ranges[0].name), "step");
  }
  EXPECT_EQ(r0.trace.api_calls.size(), 2u);
  EXPECT_EQ(r1.trace.api_calls.size(), 2u);
  // Kernels and the copy by correlation; the memset with no call by its device's owner.
  ASSERT_EQ(r0.trace.kernels.size(), 1u);
  EXPECT_EQ(r0.trace.kernels[0].device, 0);
  ASSERT_EQ(r1.trace.kernels.size(), 1u);
  EXPECT_EQ(r1.trace.kernels[0].device, 1);
  EXPECT_EQ(r1.trace.memcpys.size(), 1u);
  EXPECT_EQ(r1.trace.memsets.size(), 1u);
  EXPECT_TRUE(r0.trace.memsets.empty());
  // The sync record names device 1 but its call is pid 145's: correlation decides.
  EXPECT_EQ(r0.trace.syncs.size(), 1u);
  EXPECT_TRUE(r1.trace.syncs.empty());
  // Track names of its own process only; the metadata kept, with where the trace came from.
  for (const TrackName& n : r1.trace.track_names) EXPECT_EQ(n.pid, "144");
  EXPECT_EQ(r1.trace.track_names.size(), 2u);
  EXPECT_EQ(r1.trace.meta.source_tool, "nsys");
  EXPECT_EQ(r1.trace.meta.extra.at("nsys.correlation"), "(pid << 32) | correlationId");
  EXPECT_NE(r1.trace.meta.extra.at("syncscope.process").find("pid 144 (python3) as rank 1 (device 1)"),
            std::string::npos);
}

TEST(SplitProcesses, ProcessesWithoutGpuWorkAndOrphanRecordsAreCounted) {
  const TwoRanks b;
  const ProcessSplit split = split_processes(b.t);
  EXPECT_EQ(split.dropped_pids, (std::vector<std::int64_t>{7}));
  EXPECT_EQ(split.unassigned_gpu_records, 1u);  // the kernel on device 5
  ASSERT_GE(split.warnings.size(), 3u);
  EXPECT_NE(split.warnings[0].find("ranks from the device each process ran on"), std::string::npos);
  EXPECT_NE(split.warnings[0].find("pid 145 (python3) as rank 0 (device 0)"), std::string::npos);
  EXPECT_NE(split.warnings[1].find("1 process(es) with no GPU work left out: 7 (torchrun)"), std::string::npos);
  EXPECT_NE(split.warnings[2].find("1 GPU record(s) left out"), std::string::npos);
  // Nothing of the launcher in any output.
  for (const ProcessTrace& p : split.processes)
    for (const Range& r : p.trace.ranges) EXPECT_NE(p.trace.str(r.name), "launcher");
}

// Two processes on one device: that device owns nothing (a record with no call there is left
// out), and the devices give no rank: pid order, said.
TEST(SplitProcesses, ASharedDeviceOwnsNothingAndRanksFollowPids) {
  TwoRanks b;
  b.call(144, "cudaLaunchKernel", 300, 301, corr(144, 10));
  b.kernel(0, corr(144, 10), 302, 303);  // pid 144 now runs on devices 0 and 1
  b.kernel(0, 0, 304, 305);              // no call, device 0: two processes ran there
  b.t.finalize();
  const ProcessSplit split = split_processes(b.t);
  ASSERT_EQ(split.processes.size(), 2u);
  EXPECT_EQ(split.rank_rule, RankRule::PidOrder);
  EXPECT_EQ(split.processes[0].pid, 144);
  EXPECT_EQ(split.processes[0].rank, 0);
  EXPECT_EQ(split.processes[1].pid, 145);
  EXPECT_EQ(split.processes[1].rank, 1);
  EXPECT_EQ(split.unassigned_gpu_records, 2u);  // device 5's kernel and device 0's orphan
  EXPECT_NE(split.warnings[0].find("ranks in the order of the process ids"), std::string::npos);
  EXPECT_EQ(split.processes[0].trace.kernels.size(), 2u);
}

// Processes that cannot be told apart: no call carries a pid. No process, a warning, no throw.
TEST(SplitProcesses, ATraceWhoseProcessesCannotBeToldApartGivesNone) {
  TwoRanks b;
  for (ApiCall& c : b.t.api_calls) c.pid = -1;
  EXPECT_TRUE(gpu_processes(b.t).empty());
  const ProcessSplit split = split_processes(b.t);
  EXPECT_TRUE(split.processes.empty());
  ASSERT_EQ(split.warnings.size(), 1u);
  EXPECT_NE(split.warnings[0].find("cannot be told apart"), std::string::npos);
}

// Two processes numbering their correlation ids alike (a merged trace whose reader did not make
// them unique): an id both carry decides nothing; the device does.
TEST(SplitProcesses, ACorrelationIdOfTwoProcessesFallsBackToTheDevice) {
  Trace t;
  for (const std::int64_t pid : {10, 20}) {
    ApiCall c;
    c.name = t.intern("cudaLaunchKernel");
    c.pid = pid;
    c.correlation = 1;  // the same id in both
    t.api_calls.push_back(c);
    ApiCall d = c;
    d.correlation = static_cast<std::uint64_t>(pid);  // one of its own
    t.api_calls.push_back(d);
    Kernel k;
    k.device = pid == 10 ? 0 : 1;
    k.correlation = static_cast<std::uint64_t>(pid);
    t.kernels.push_back(k);
    k.correlation = 1;
    t.kernels.push_back(k);
  }
  const ProcessSplit split = split_processes(t);
  ASSERT_EQ(split.processes.size(), 2u);
  EXPECT_EQ(split.processes[0].trace.kernels.size(), 2u);
  EXPECT_EQ(split.processes[1].trace.kernels.size(), 2u);
  for (const Kernel& k : split.processes[1].trace.kernels) EXPECT_EQ(k.device, 1);
  EXPECT_EQ(split.unassigned_gpu_records, 0u);
}

}  // namespace
}  // namespace syncscope
