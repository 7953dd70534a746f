// Whole-job replay of one trace holding two ranks' processes (as one Nsight Systems report of a
// torchrun job holds them), split by trace/split_processes.hpp: the two ranks' collective is
// matched across the processes, where the unsplit trace anchors it; and the real 2-GPU reports
// from nsys-ai (bench/replay/pairs/mfu_2gpu_*.sqlite.xz) with their collectives matched.
//
// The hand-built ranks are those of test_replay_job.cpp (times in us, worked out there): rank 1
// waits in an .item() and reaches the all-reduce last; both steps are 0-545.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "syncscope/core/error.hpp"
#include "syncscope/io/trace_io.hpp"
#include "syncscope/replay/replay.hpp"
#include "syncscope/replay/replay_job.hpp"
#include "syncscope/trace/split_processes.hpp"
#include "test_paths.hpp"

#if SYNCSCOPE_HAVE_LZMA
#include <lzma.h>
#include "test_units.hpp"
#endif

namespace syncscope {
namespace {

using test::us;
constexpr const char* kAllReduce = "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)";

// One rank's process in the shared trace: its pid, its device, its own correlation ids (made
// unique across processes as the nsys reader does: (pid << 32) | id).
struct Process {
  Trace& t;
  std::int64_t pid;
  std::int32_t device;
  std::uint64_t next = 1;

  std::uint64_t corr() { return (static_cast<std::uint64_t>(pid) << 32) | next++; }
  void call(const char* name, Ns a, Ns b, std::uint64_t c) {
    ApiCall x;
    x.name = t.intern(name);
    x.pid = pid;
    x.tid = pid;
    x.start = a * us;
    x.end = b * us;
    x.correlation = c;
    x.device = device;
    t.api_calls.push_back(x);
  }
  void launch(const char* kname, std::int64_t stream, Ns a, Ns ks, Ns ke) {
    const std::uint64_t c = corr();
    call("cudaLaunchKernel", a, a + 5, c);
    Kernel k;
    k.name = t.intern(kname);
    k.device = device;
    k.stream = stream;
    k.start = ks * us;
    k.end = ke * us;
    k.correlation = c;
    t.kernels.push_back(k);
  }
  void stream_sync(std::int64_t stream, Ns a, Ns b) {
    const std::uint64_t c = corr();
    call("cudaStreamSynchronize", a, b, c);
    SyncRecord s;
    s.type = SyncType::StreamSync;
    s.device = device;
    s.stream = stream;
    s.start = a * us;
    s.end = b * us;
    s.correlation = c;
    t.syncs.push_back(s);
  }
  void range(RangeKind kind, const char* name, Ns a, Ns b) {
    Range r;
    r.kind = kind;
    r.name = t.intern(name);
    r.pid = pid;
    r.tid = pid;
    r.start = a * us;
    r.end = b * us;
    t.ranges.push_back(r);
  }
};

// Rank 0 is pid 300 on device 0, rank 1 pid 200 on device 1 (pid order is not rank order), and
// torchrun (pid 100) has a host range and no GPU work. No distributedInfo: an nsys report has none.
// `r0_nccl`, `r1_nccl`: an NCCL NVTX range of that name around the rank's all-reduce launch.
Trace two_processes(const char* r0_nccl = nullptr, const char* r1_nccl = nullptr) {
  Trace t;
  t.meta.source_tool = "nsys";
  t.track_names = {{"300", "", "python3"}, {"200", "", "python3"}, {"100", "", "torchrun"}};
  Process r0{t, 300, 0};
  r0.range(RangeKind::NvtxPushPop, "ProfilerStep#0", 0, 545);
  r0.launch("kA", 7, 10, 20, 100);
  if (r0_nccl) r0.range(RangeKind::NvtxPushPop, r0_nccl, 108, 117);
  r0.launch(kAllReduce, 9, 110, 120, 495);
  r0.stream_sync(9, 118, 505);
  r0.launch("k2", 7, 510, 520, 530);
  Process r1{t, 200, 1};
  r1.range(RangeKind::NvtxPushPop, "ProfilerStep#0", 0, 545);
  r1.launch("kLog", 7, 10, 20, 400);
  r1.range(RangeKind::CpuOp, "aten::item", 19, 411);
  r1.stream_sync(7, 20, 410);
  if (r1_nccl) r1.range(RangeKind::NvtxPushPop, r1_nccl, 413, 422);
  r1.launch(kAllReduce, 9, 415, 425, 495);
  r1.stream_sync(9, 425, 505);
  r1.launch("k2", 7, 510, 520, 530);
  Process launcher{t, 100, -1};
  launcher.range(RangeKind::NvtxPushPop, "torchrun", 0, 600);
  t.finalize();
  return t;
}

std::vector<replay::JobRankInput> ranks_of(const ProcessSplit& split, const std::string& source) {
  std::vector<replay::JobRankInput> inputs;
  for (const ProcessTrace& p : split.processes) {
    replay::JobRankInput in;
    in.source = source + " pid " + std::to_string(p.pid);
    in.rank = p.rank;
    in.load = [t = p.trace] { return t; };
    inputs.push_back(std::move(in));
  }
  return inputs;
}

TEST(ReplayJobProcesses, OneTraceOfTwoProcessesReplaysAsTheJob) {
  const Trace t = two_processes();
  const ProcessSplit split = split_processes(t);
  ASSERT_EQ(split.processes.size(), 2u);
  EXPECT_EQ(split.rank_rule, RankRule::Device);
  EXPECT_EQ(split.dropped_pids, (std::vector<std::int64_t>{100}));
  const replay::JobReplayReport rep = replay::replay_job(ranks_of(split, "two.sqlite"), {}, "two.sqlite");
  ASSERT_EQ(rep.ranks.size(), 2u);
  EXPECT_EQ(rep.ranks[0].source, "two.sqlite pid 300");
  EXPECT_EQ(rep.ranks[1].source, "two.sqlite pid 200");
  // The one all-reduce, matched across the two processes (no group names: by stream, then order).
  EXPECT_EQ(rep.collectives, 1u);
  EXPECT_EQ(rep.matched_by_stream_order, 1u);
  EXPECT_TRUE(rep.mismatches.empty());
  EXPECT_EQ(rep.straggler, 1);
  for (const auto& r : rep.ranks) {
    EXPECT_EQ(r.collectives, 1u);
    EXPECT_EQ(r.unmatched, 0u);
    ASSERT_EQ(r.steps.size(), 1u);
    EXPECT_EQ(r.steps[0].replayed_ns, 545 * us) << "rank " << r.rank;
  }
  EXPECT_TRUE(rep.within_goal());
  // Removing rank 1's .item() reaches rank 0 through the matched all-reduce: 305 us each
  // (test_replay_job.cpp's RemovingTheStragglersSyncMovesEveryRank, worked out there).
  replay::JobReplayOptions o;
  o.what_if = {"remove-syncs:cause=aten::item"};
  const replay::JobReplayReport edited = replay::replay_job(ranks_of(split, "two.sqlite"), o, "two.sqlite");
  ASSERT_EQ(edited.what_if.size(), 1u);
  ASSERT_TRUE(edited.what_if[0].saving_ns[0] && edited.what_if[0].saving_ns[1]);
  EXPECT_EQ(*edited.what_if[0].saving_ns[0], 305 * us);
  EXPECT_EQ(*edited.what_if[0].saving_ns[1], 305 * us);
}

// Unsplit, the same trace is one rank whose two all-reduce kernels have no peer: both anchored.
TEST(ReplayJobProcesses, UnsplitTheCollectivesAreAnchored) {
  replay::JobRankInput in;
  in.source = "two.sqlite";
  in.rank = 0;
  in.load = [] { return two_processes(); };
  std::vector<replay::JobRankInput> one;
  one.push_back(std::move(in));
  const replay::JobReplayReport rep = replay::replay_job(std::move(one), {}, "two.sqlite");
  EXPECT_EQ(rep.collectives, 0u);
  ASSERT_EQ(rep.ranks.size(), 1u);
  EXPECT_EQ(rep.ranks[0].unmatched, 2u);
}

// NCCL's NVTX ranges around the launches: a group's calls (the launch inside its ncclGroupEnd),
// a lone call's, none, and a range of that name in another domain (not NCCL's).
TEST(ReplayJobNccl, CallsFromTheRangesAroundTheLaunch) {
  Trace t;
  Process p{t, 300, 0};
  const char* group[] = {"ncclGroupStart", "ncclSend", "ncclRecv", "ncclSend", "ncclRecv"};
  for (int i = 0; i < 5; ++i) p.range(RangeKind::NvtxPushPop, group[i], 2 * i, 2 * i + 1);
  p.range(RangeKind::NvtxPushPop, "ncclGroupEnd", 10, 30);
  p.launch(kAllReduce, 9, 15, 20, 40);  // cudaLaunchKernel 15..20
  p.range(RangeKind::NvtxPushPop, "ncclAllReduce", 40, 60);
  p.launch(kAllReduce, 9, 45, 50, 80);
  p.launch(kAllReduce, 9, 70, 75, 90);
  p.range(RangeKind::NvtxPushPop, "ncclAllReduce", 80, 100);
  t.ranges.back().domain = t.intern("MyApp");
  p.launch(kAllReduce, 9, 85, 90, 99);
  t.finalize();
  const std::vector<std::string> calls = replay::nccl_calls(t, {0, 1, 2, 3});
  EXPECT_EQ(calls, (std::vector<std::string>{"ncclRecv x2 + ncclSend x2", "ncclAllReduce", "", ""}));
  EXPECT_EQ(replay::nccl_operation("ncclRecv x2 + ncclSend x2"), "ncclSend/ncclRecv");
  EXPECT_EQ(replay::nccl_operation("ncclSend"), "ncclSend/ncclRecv");
  EXPECT_EQ(replay::nccl_operation("ncclAllReduce + ncclRecv"), "ncclAllReduce + ncclSend/ncclRecv");
}

// The same NCCL call on both ranks is counted as checked; another on rank 1 is named (rank,
// group, position) and not matched, as a kernel name that disagrees is.
TEST(ReplayJobNccl, MatchedCollectivesAreCheckedAgainstTheirNcclCalls) {
  auto job = [](const char* r0, const char* r1) {
    return replay::replay_job(ranks_of(split_processes(two_processes(r0, r1)), "two.sqlite"), {}, "two.sqlite");
  };
  const replay::JobReplayReport same = job("ncclAllReduce", "ncclAllReduce");
  EXPECT_EQ(same.collectives, 1u);
  EXPECT_EQ(same.nccl_checked, 1u);
  EXPECT_TRUE(same.mismatches.empty());
  EXPECT_NE(replay::job_replay_to_json(same).find("\"nccl_checked\": 1,"), std::string::npos);
  const replay::JobReplayReport one = job("ncclAllReduce", nullptr);  // known on one rank: not checked
  EXPECT_EQ(one.collectives, 1u);
  EXPECT_EQ(one.nccl_checked, 0u);
  try {
    (void)job("ncclAllReduce", "ncclAllGather");
    ADD_FAILURE() << "a collective whose NCCL calls disagree was matched";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("rank 1, group stream#0, collective 0: NCCL calls ncclAllGather here, "
                                         "ncclAllReduce on rank(s) 0"),
              std::string::npos)
        << e.what();
  }
}

#if SYNCSCOPE_HAVE_LZMA
// The .xz file decompressed next to the test's temporary directory (liblzma's one-call stream
// decoder; the files are a few MB).
std::filesystem::path unxz(const std::filesystem::path& xz, const std::filesystem::path& out) {
  std::ifstream in(xz, std::ios::binary);
  const std::string packed((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string plain(64u << 20, '\0');
  std::uint64_t memlimit = UINT64_MAX;
  std::size_t in_pos = 0, out_pos = 0;
  const lzma_ret ret =
      lzma_stream_buffer_decode(&memlimit, 0, nullptr, reinterpret_cast<const std::uint8_t*>(packed.data()), &in_pos,
                                packed.size(), reinterpret_cast<std::uint8_t*>(plain.data()), &out_pos, plain.size());
  EXPECT_EQ(ret, LZMA_OK) << xz;
  std::ofstream(out, std::ios::binary).write(plain.data(), static_cast<std::streamsize>(out_pos));
  return out;
}
#endif

// The real 2-GPU torchrun reports from nsys-ai (bench/replay/pairs/README.md): ranks by device,
// every SendRecv kernel matched across the two processes. The counts were measured from the
// files (docs/replay.md, "One report holding several ranks"); a change in matching breaks them.
TEST(ReplayJobProcesses, RealTwoRankNsysReportsMatchTheirCollectives) {
#if !SYNCSCOPE_HAVE_LZMA
  GTEST_SKIP() << "no liblzma in this build: the .xz fixtures cannot be read";
#else
  struct Case {
    const char* file;
    std::int64_t pid0, pid1;
    std::uint64_t collectives;
    std::uint64_t nccl_checked;  // launched by the same ncclSend/ncclRecv group on both ranks
  };
  for (const Case& c :
       {Case{"mfu_2gpu_before.sqlite.xz", 144, 145, 33, 32}, Case{"mfu_2gpu_after.sqlite.xz", 148, 149, 31, 30}}) {
    test::TempDir dir;
    const std::string name = std::string(c.file).substr(0, std::string(c.file).size() - 3);
    const Trace t = read_trace(unxz(test::source_dir() / "bench/replay/pairs" / c.file, dir / name));
    const ProcessSplit split = split_processes(t);
    ASSERT_EQ(split.processes.size(), 2u) << c.file;
    EXPECT_EQ(split.rank_rule, RankRule::Device) << c.file;
    EXPECT_EQ(split.processes[0].pid, c.pid0) << c.file;
    EXPECT_EQ(split.processes[1].pid, c.pid1) << c.file;
    // Every sync call finds its stream, event or copy: rank 1's sync records say device 0 in
    // the export, and the reader gives them their context's device (1).
    for (const ProcessTrace& p : split.processes) {
      for (const SyncRecord& s : p.trace.syncs) EXPECT_EQ(s.device, p.devices.front()) << c.file << " pid " << p.pid;
      const replay::ReplayGraph g = replay::build_replay_graph(p.trace);
      EXPECT_EQ(g.problems.syncs_without_work, 0u) << c.file << " pid " << p.pid;
      // Each SendRecv kernel with a traced launch was launched by one ncclGroupEnd of two sends
      // and two receives (the file's NCCL ranges); the first SendRecv kernel of each rank has no
      // launch call in the file (no runtime row has its correlation id), so no NCCL calls.
      std::size_t grouped = 0, unknown = 0;
      for (const replay::JobComm& comm : replay::job_comms(p.trace, g)) {
        grouped += comm.nccl == "ncclRecv x2 + ncclSend x2";
        unknown += comm.nccl.empty();
      }
      EXPECT_EQ(grouped, c.nccl_checked) << c.file << " pid " << p.pid;
      EXPECT_EQ(unknown, c.collectives - c.nccl_checked) << c.file << " pid " << p.pid;
    }
    // No step ranges in these files: each rank is replayed as one window, as predict does.
    const replay::JobReplayReport rep = replay::replay_job(ranks_of(split, name), {}, name);
    EXPECT_EQ(rep.collectives, c.collectives) << c.file;
    EXPECT_EQ(rep.nccl_checked, c.nccl_checked) << c.file;
    EXPECT_TRUE(rep.mismatches.empty()) << c.file << ": " << rep.mismatches.front();
    for (const auto& r : rep.ranks) EXPECT_EQ(r.unmatched, 0u) << c.file << " rank " << r.rank;
    EXPECT_TRUE(rep.within_goal()) << c.file << ": median " << rep.median_abs_error << " max " << rep.max_abs_error;
  }
#endif
}

}  // namespace
}  // namespace syncscope
