// `analyze`, `predict --trace` and `convert` on nsys exports, as a user runs them: the built
// executable, its exit status, stdout, stderr and files.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <zlib.h>

#include <algorithm>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <set>

#include "nsys_fixture.hpp"
#include "syncscope/analysis/analysis.hpp"
#include "syncscope/io/trace_io.hpp"

namespace syncscope {
namespace {

namespace fs = std::filesystem;

struct CliRun {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Runs `syncscope ARGS` through the shell (so a test can pipe into it).
CliRun run(const test::TempDir& dir, const std::string& args, const std::string& stdin_from = "") {
  const fs::path exe = fs::path(SYNCSCOPE_BINARY_DIR) / "cli" / "syncscope";
  std::string cmd =
      "'" + exe.string() + "' " + args + " >'" + (dir / "stdout").string() + "' 2>'" + (dir / "stderr").string() + "'";
  if (!stdin_from.empty()) cmd = "cat '" + stdin_from + "' | " + cmd;
  const int status = std::system(cmd.c_str());
  CliRun r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = test::slurp_file(dir / "stdout");
  r.err = test::slurp_file(dir / "stderr");
  return r;
}

std::string q(const fs::path& p) { return "'" + p.string() + "'"; }

std::string gunzip(const fs::path& p) {
  gzFile f = gzopen(p.c_str(), "rb");
  std::string out;
  char buf[1 << 16];
  int n = 0;
  while ((n = gzread(f, buf, sizeof buf)) > 0) out.append(buf, static_cast<std::size_t>(n));
  gzclose(f);
  return out;
}

class NsysCli : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fs::exists(fs::path(SYNCSCOPE_BINARY_DIR) / "cli" / "syncscope")) << "build the syncscope target";
    export_ = test::build_export(dir_, "nsys_2024_6");
  }
  test::TempDir dir_;
  fs::path export_;
};

TEST_F(NsysCli, AnalyzeJson) {
  const CliRun r = run(dir_, "analyze " + q(export_) + " --format json --layer-range 'layer_*'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  // The hand-worked figures of test_nsys_analysis.cpp, through the command.
  EXPECT_EQ(j.at("totals").at("syncs").at("total"), 5);
  EXPECT_EQ(j.at("totals").at("sync_blocked_ns"), 610500);
  EXPECT_EQ(j.at("totals").at("sync_bubble_ns"), 440000);
  EXPECT_EQ(j.at("steps").size(), 2u);
  EXPECT_EQ(j.at("layers").size(), 2u);
  // The reader's warning reaches the user (on stderr for machine formats).
  EXPECT_NE(r.err.find("1 rows of NVTX_EVENTS skipped"), std::string::npos) << r.err;
}

TEST_F(NsysCli, AnalyzeTableNamesTheCause) {
  const CliRun r = run(dir_, "analyze " + q(export_));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("aten::item"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cudaEventSynchronize"), std::string::npos) << r.out;
}

TEST_F(NsysCli, AnalyzeFromStdin) {
  const CliRun r = run(dir_, "analyze /dev/stdin --format json", export_.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out).at("totals").at("syncs").at("total"), 5);
}

TEST_F(NsysCli, ConvertToKinetoJsonAndAnalyzeTheSame) {
  const fs::path out = dir_ / "report.json.gz";
  const CliRun r = run(dir_, "convert " + q(export_) + " " + q(out));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("4 kernels"), std::string::npos) << r.out;
  ASSERT_TRUE(fs::exists(out));
  const Trace nsys = read_trace(export_), json = read_trace(out);
  EXPECT_EQ(json.api_calls.size(), nsys.api_calls.size());
  EXPECT_EQ(json.kernels.size(), nsys.kernels.size());
  EXPECT_EQ(json.memcpys.size(), nsys.memcpys.size());
  EXPECT_EQ(json.memsets.size(), nsys.memsets.size());
  EXPECT_EQ(json.syncs.size(), nsys.syncs.size());
  EXPECT_EQ(json.ranges.size(), nsys.ranges.size());
  EXPECT_EQ(json.devices.size(), 1u);
  EXPECT_EQ(json.meta.source_tool, "nsys");
  const AnalysisResult a = analyze(nsys, {}), b = analyze(json, {});
  ASSERT_EQ(a.sync_points.size(), b.sync_points.size());
  for (std::size_t i = 0; i < a.sync_points.size(); ++i) {
    EXPECT_EQ(a.sync_points[i].start, b.sync_points[i].start);
    EXPECT_EQ(a.sync_points[i].blocked_ns, b.sync_points[i].blocked_ns);
    EXPECT_EQ(a.sync_points[i].bubble_ns, b.sync_points[i].bubble_ns);
    EXPECT_EQ(a.sync_points[i].cause, b.sync_points[i].cause);
  }
  // Kineto's categories and names: what Perfetto and HTA read.
  const auto j = nlohmann::json::parse(gunzip(out));
  std::set<std::string> cats;
  bool launch = false;
  for (const auto& e : j.at("traceEvents")) {
    if (e.contains("cat")) cats.insert(e.at("cat").get<std::string>());
    if (e.value("name", "") == "cudaLaunchKernel") launch = true;
  }
  for (const char* c : {"kernel", "gpu_memcpy", "gpu_memset", "cuda_runtime", "cuda_driver", "cpu_op"})
    EXPECT_TRUE(cats.count(c)) << c;
  EXPECT_TRUE(launch);
  EXPECT_TRUE(j.contains("baseTimeNanoseconds"));
}

TEST_F(NsysCli, PredictFromAnExport) {
  const CliRun r = run(dir_, "predict --trace " + q(export_) + " --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_NE(j.dump().find(export_.filename().string()), std::string::npos) << r.out;
}

TEST_F(NsysCli, PredictFindsPerLayerSyncsInAnExport) {
  const auto path = test::build_export(dir_, "nsys_layer_syncs");
  const CliRun r = run(dir_, "predict --trace " + q(path) + " --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  bool packing = false;
  for (const auto& f : j.at("fixes")) {
    if (f.at("fix") != "packing" || f.at("variant") != "cached") continue;
    packing = true;
    EXPECT_TRUE(f.at("applicable").get<bool>()) << f.dump();
    EXPECT_GT(f.at("predicted_saving_ns").get<double>(), 0.0);
    EXPECT_NE(f.at("evidence").dump().find("aten::item"), std::string::npos) << f.dump();
  }
  EXPECT_TRUE(packing) << r.out;
}

TEST_F(NsysCli, ConvertWarnsOfNoCudaData) {
  const auto path = test::build_export(dir_, "nsys_no_cuda");
  const CliRun r = run(dir_, "convert " + q(path) + " " + q(dir_ / "out.json"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("syncscope: warning:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("no CUDA data"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::exists(dir_ / "out.json"));
}

TEST_F(NsysCli, NoCudaDataIsExitZeroWithAWarning) {
  const auto path = test::build_export(dir_, "nsys_no_cuda");
  const CliRun r = run(dir_, "analyze " + q(path) + " --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out).at("totals").at("syncs").at("total"), 0);
  EXPECT_NE(r.err.find("no CUDA data"), std::string::npos) << r.err;
}

TEST_F(NsysCli, BadInputExitsTwoNamingTheFile) {
  const auto not_nsys = test::build_export(dir_, "not_nsys");
  const CliRun r = run(dir_, "analyze " + q(not_nsys));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(not_nsys.string()), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("not an Nsight Systems export"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;

  const std::string bytes = test::slurp_file(export_);
  const fs::path cut = dir_ / "cut.sqlite";
  {
    std::ofstream o(cut, std::ios::binary);
    o << bytes.substr(0, bytes.size() / 3);
  }
  const fs::path out = dir_ / "out.json";
  const CliRun c = run(dir_, "convert " + q(cut) + " " + q(out));
  EXPECT_EQ(c.exit_code, 2);
  EXPECT_NE(c.err.find("truncated"), std::string::npos) << c.err;
  EXPECT_FALSE(fs::exists(out));
  const CliRun p = run(dir_, "predict --trace " + q(cut));
  EXPECT_EQ(p.exit_code, 2);
}

// One export holding two ranks' processes (torchrun under one `nsys profile`): predict replays
// them as the job's ranks and analyze gives the per-rank table, each saying the ranks are one
// file's processes; --pid keeps the one-trace view of one process.
TEST_F(NsysCli, OneExportOfTwoRanksIsReadAsTheJob) {
  const fs::path two = test::build_export(dir_, "nsys_multi_process");
  const CliRun p = run(dir_, "predict --trace " + q(two));
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_NE(p.out.find("Whole-job replay of 2 rank process(es) of one file"), std::string::npos) << p.out;
  EXPECT_NE(p.out.find("2 collective(s) matched"), std::string::npos) << p.out;
  EXPECT_NE(p.out.find("pid 100 (python3) as rank 0 (device 0); pid 200 (python3) as rank 1 (device 1)"),
            std::string::npos)
      << p.out;
  const CliRun j = run(dir_, "predict --trace " + q(two) + " --format json");
  ASSERT_EQ(j.exit_code, 0) << j.err;
  const auto job = nlohmann::json::parse(j.out);
  EXPECT_EQ(job.at("collectives"), 2);
  EXPECT_NE(job.at("ranks_from").get<std::string>().find("2 processes with GPU work in one file"), std::string::npos);
  EXPECT_EQ(job.at("ranks").at(1).at("source"), two.string() + " pid 200");

  const CliRun a = run(dir_, "analyze " + q(two));
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_NE(a.out.find("syncscope analysis of 2 ranks"), std::string::npos) << a.out;
  EXPECT_NE(a.out.find("the ranks are the 2 processes with GPU work in this one file"), std::string::npos) << a.out;
  const CliRun one = run(dir_, "analyze " + q(two) + " --pid 100");
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_EQ(one.out.find("syncscope analysis of 2 ranks"), std::string::npos) << one.out;
  // A one-process export keeps the one-trace replay, and --what-if-rank needs several ranks.
  const CliRun lone = run(dir_, "predict --trace " + q(export_) + " --what-if-rank 1");
  EXPECT_EQ(lone.exit_code, 2);
  EXPECT_NE(lone.err.find("several ranks' processes"), std::string::npos) << lone.err;
}

}  // namespace
}  // namespace syncscope
