// The many-rank analyze on tests/fixtures/ranks/nccl4 (four torch.profiler-shaped NCCL rank
// traces; make_nccl4.py says how they are built), with the expected figures worked out by
// hand; and the bad inputs: no traces, two files claiming one rank, a trace without a rank.
#include <gtest/gtest.h>

#include <system_error>

#include "syncscope/cluster/rank_traces.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/core/file_io.hpp"
#include "test_paths.hpp"

namespace syncscope {
namespace {

namespace fs = std::filesystem;
constexpr Ns kUs = 1000;

std::string nccl4() { return test::fixture("ranks/nccl4").string(); }

// In the fixture every rank runs 3 steps of 1000 us. Per step S:
//  ranks 0, 1, 3: gemm [S+100, S+500), NCCL [S+300, S+850), elementwise [S+850, S+950):
//    compute 400 + 100 = 500 us, communication 550 us, overlapped [S+300, S+500) = 200 us,
//    busy [S+100, S+950) = 850 us.
//  rank 2 (the straggler): gemm [S+100, S+800), NCCL [S+300, S+600), elementwise
//    [S+800, S+900): compute 800, communication 300 (all of it overlapped), busy 800.
//  rank 0 also: cudaMemcpyAsync D2H pageable at S+962 (5 us), its copy [S+970, S+972),
//    cudaStreamSynchronize [S+968, S+988): one sync point (cause aten::item), blocked
//    S+962..S+988 = 26 us, bubble from the copy's end to the next step's gemm at S+1100 =
//    128 us (0 in the last step: nothing follows; median over [128, 128, 0] = 128), busy
//    850 + 2 = 852 us.
TEST(RankTraces, Nccl4FixtureFiguresByHand) {
  AnalysisOptions o;
  const auto a = cluster::analyze_ranks({nccl4()}, o, 2);
  ASSERT_EQ(a.ranks.size(), 4u);
  EXPECT_EQ(a.source, nccl4());
  for (std::size_t i = 0; i < 4; ++i) {
    const auto& r = a.ranks[i];
    EXPECT_EQ(r.rank, static_cast<std::int64_t>(i));
    EXPECT_EQ(r.steps, 3u);
    EXPECT_DOUBLE_EQ(r.step_ns, 1000 * kUs);
    EXPECT_EQ(r.devices, 1u);
    EXPECT_EQ(r.comm_kernels, 3u);
  }
  EXPECT_EQ(a.ranks[0].rank_from, "distributedInfo");
  EXPECT_EQ(a.ranks[3].rank_from, "file name");  // rank3.pt.trace.json.gz has no distributedInfo
  EXPECT_EQ(fs::path(a.ranks[3].source).filename(), "rank3.pt.trace.json.gz");

  const auto& r0 = a.ranks[0];
  EXPECT_DOUBLE_EQ(r0.syncs, 1);
  EXPECT_DOUBLE_EQ(r0.blocked_ns, 26 * kUs);
  EXPECT_DOUBLE_EQ(r0.bubble_ns, 128 * kUs);
  EXPECT_DOUBLE_EQ(r0.busy_ns, 852 * kUs);
  EXPECT_DOUBLE_EQ(r0.compute_ns, 500 * kUs);
  EXPECT_DOUBLE_EQ(r0.comm_ns, 550 * kUs);
  EXPECT_EQ(r0.sync_points, 3u);
  EXPECT_EQ(r0.top_cause, "aten::item");
  EXPECT_EQ(r0.comm_kernel_ns, 3 * 550 * kUs);
  EXPECT_EQ(r0.comm_overlapped_ns, 3 * 200 * kUs);
  EXPECT_DOUBLE_EQ(r0.comm_overlap_fraction, 200.0 / 550.0);

  for (std::size_t i : {1u, 3u}) {
    const auto& r = a.ranks[i];
    EXPECT_DOUBLE_EQ(r.syncs, 0);
    EXPECT_DOUBLE_EQ(r.blocked_ns, 0);
    EXPECT_DOUBLE_EQ(r.bubble_ns, 0);
    EXPECT_DOUBLE_EQ(r.busy_ns, 850 * kUs);
    EXPECT_DOUBLE_EQ(r.compute_ns, 500 * kUs);
    EXPECT_DOUBLE_EQ(r.comm_ns, 550 * kUs);
  }
  const auto& r2 = a.ranks[2];
  EXPECT_DOUBLE_EQ(r2.busy_ns, 800 * kUs);
  EXPECT_DOUBLE_EQ(r2.compute_ns, 800 * kUs);
  EXPECT_DOUBLE_EQ(r2.comm_ns, 300 * kUs);
  EXPECT_DOUBLE_EQ(r2.comm_overlap_fraction, 1.0);

  // Across ranks: busy [852, 850, 800, 850] -> min 800 (rank 2), median 850, max 852 (rank 0).
  const auto& busy = a.spreads[static_cast<std::size_t>(RankMetric::Busy)];
  EXPECT_DOUBLE_EQ(busy.min, 800 * kUs);
  EXPECT_EQ(busy.min_rank, 2);
  EXPECT_DOUBLE_EQ(busy.median, 850 * kUs);
  EXPECT_DOUBLE_EQ(busy.max, 852 * kUs);
  EXPECT_EQ(busy.max_rank, 0);
  const auto& syncs = a.spreads[static_cast<std::size_t>(RankMetric::Syncs)];
  EXPECT_DOUBLE_EQ(syncs.median, 0);
  EXPECT_DOUBLE_EQ(syncs.max, 1);
  EXPECT_EQ(syncs.max_rank, 0);
  const auto& comm = a.spreads[static_cast<std::size_t>(RankMetric::Communication)];
  EXPECT_DOUBLE_EQ(comm.min, 300 * kUs);
  EXPECT_EQ(comm.min_rank, 2);
  EXPECT_DOUBLE_EQ(comm.median, 550 * kUs);
  // Stands out: rank 2's compute, 300 us above the median in a 1000 us step (0.30); next are
  // its communication (-0.25) and rank 0's bubble (0.128).
  ASSERT_TRUE(a.standout);
  EXPECT_EQ(a.standout->rank, 2);
  EXPECT_EQ(a.standout->metric, RankMetric::Compute);
  EXPECT_DOUBLE_EQ(a.standout->deviation, 0.3);
  EXPECT_TRUE(a.warnings.empty());
}

TEST(RankTraces, OneWorkerAndManyGiveTheSameRows) {
  const auto files = cluster::find_rank_traces({nccl4()});
  ASSERT_EQ(files.size(), 4u);
  const auto one = cluster::analyze_rank_files(files, {}, 1);
  const auto many = cluster::analyze_rank_files(files, {}, 8);
  ASSERT_EQ(one.size(), many.size());
  for (std::size_t i = 0; i < one.size(); ++i) {
    EXPECT_EQ(one[i].rank, many[i].rank);
    EXPECT_EQ(one[i].busy_ns, many[i].busy_ns);
    EXPECT_EQ(one[i].source, many[i].source);
  }
}

// `--jobs 1000` under a memory limit aborted ("terminate called without an active
// exception"): a thread that cannot start is an Error after the started ones are joined.
TEST(RankTraces, AThreadThatCannotStartIsAnErrorNotAnAbort) {
  const auto files = cluster::find_rank_traces({test::fixture("ranks/nccl4").string()});
  cluster::set_rank_worker_start_hook([](std::size_t w) {
    if (w == 2) throw std::system_error(std::make_error_code(std::errc::resource_unavailable_try_again));
  });
  std::string msg;
  try {
    (void)cluster::analyze_rank_files(files, {}, 4);
  } catch (const InputError&) {
    msg = "InputError";
  } catch (const Error& e) {
    msg = e.what();
  }
  cluster::set_rank_worker_start_hook(nullptr);
  EXPECT_NE(msg.find("cannot start reader thread 3 of 4"), std::string::npos) << msg;
  EXPECT_NE(msg.find("try a smaller --jobs"), std::string::npos) << msg;
}

TEST(RankTraces, WorkersAreBoundedByTheMachine) {
  const auto files = cluster::find_rank_traces({test::fixture("ranks/nccl4").string()});
  static std::size_t started;
  started = 0;
  cluster::set_rank_worker_start_hook([](std::size_t) { ++started; });
  (void)cluster::analyze_rank_files(files, {}, 100000);
  cluster::set_rank_worker_start_hook(nullptr);
  EXPECT_LE(started, std::min<std::size_t>(files.size(), cluster::max_rank_workers()));
  EXPECT_EQ(cluster::max_rank_workers(), 4 * cluster::usable_cores());
}

TEST(RankTraces, FilesAsGivenAndDirectoriesInNameOrder) {
  test::TempDir d;
  fs::create_directories(d / "t");
  for (const char* n : {"b.json", "a.json.gz", ".hidden.json", "notes.txt"}) write_file_atomic(d / "t" / n, "{}");
  fs::create_directories(d / "t" / "sub.json");  // a directory, not a trace
  const auto files = cluster::find_rank_traces({(d / "t").string()});
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(fs::path(files[0].path).filename(), "a.json.gz");
  EXPECT_EQ(fs::path(files[1].path).filename(), "b.json");
  EXPECT_TRUE(files[0].absolute.is_absolute());
}

TEST(RankTraces, ADirectoryWithoutTracesNamesIt) {
  test::TempDir d;
  fs::create_directories(d / "empty");
  write_file_atomic(d / "empty" / "README.md", "not a trace");
  try {
    cluster::find_rank_traces({(d / "empty").string()});
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find((d / "empty").string() + ": the directory holds no trace"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(cluster::find_rank_traces({(d / "nope").string()}), InputError);
}

TEST(RankTraces, TwoFilesClaimingOneRankNameBoth) {
  test::TempDir d;
  fs::create_directories(d / "dup");
  const auto src = test::fixture("ranks/nccl4/node0_1001.1700000000000000000.pt.trace.json");
  fs::copy_file(src, d / "dup" / "first.json");
  fs::copy_file(src, d / "dup" / "second.json");
  try {
    cluster::analyze_ranks({(d / "dup").string()}, {}, 2);
    FAIL();
  } catch (const InputError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("first.json"), std::string::npos) << m;
    EXPECT_NE(m.find("second.json"), std::string::npos) << m;
    EXPECT_NE(m.find("both claim rank 1"), std::string::npos) << m;
  }
}

TEST(RankTraces, ATraceWithoutARankNamesTheFileAndTheFix) {
  test::TempDir d;
  fs::create_directories(d / "x");
  // No distributedInfo and no rank in the name.
  fs::copy_file(test::fixture("ranks/nccl4/rank3.pt.trace.json.gz"), d / "x" / "worker.json.gz");
  try {
    cluster::analyze_ranks({(d / "x").string()}, {}, 1);
    FAIL();
  } catch (const InputError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("worker.json.gz: cannot tell its rank"), std::string::npos) << m;
    EXPECT_NE(m.find("rank3.json"), std::string::npos) << m;  // the rename it suggests
  }
}

TEST(RankTraces, ABadTraceFailsWithItsNameAfterEveryWorkerStopped) {
  test::TempDir d;
  fs::create_directories(d / "x");
  fs::copy_file(test::fixture("ranks/nccl4/node0_1000.1700000000000000000.pt.trace.json"), d / "x" / "rank0.json");
  write_file_atomic(d / "x" / "rank1.json", "{\"traceEvents\": [");
  try {
    cluster::analyze_ranks({(d / "x").string()}, {}, 2);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("rank1.json"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace syncscope
