// `syncscope convert` as a user runs it: the built executable, exit codes, files.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>

#include "io_test_util.hpp"
#include "syncscope/io/trace_io.hpp"
#include "trace_compare.hpp"

namespace syncscope {
namespace {

namespace fs = std::filesystem;

struct CliRun {
  int exit_code = -1;
  std::string err;
  std::string out;
};

CliRun convert(const test::TempDir& dir, const std::string& args) {
  const fs::path exe = fs::path(SYNCSCOPE_BINARY_DIR) / "cli" / "syncscope";
  const std::string cmd = "'" + exe.string() + "' convert " + args + " >'" + (dir / "stdout").string() + "' 2>'" +
                          (dir / "stderr").string() + "'";
  const int status = std::system(cmd.c_str());
  CliRun r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = test::slurp(dir / "stdout");
  r.err = test::slurp(dir / "stderr");
  return r;
}

std::string q(const fs::path& p) { return "'" + p.string() + "'"; }

TEST(ConvertCli, BadInputExitsTwoWithOneLineAndNoOutput) {
  ASSERT_TRUE(fs::exists(fs::path(SYNCSCOPE_BINARY_DIR) / "cli" / "syncscope")) << "build the syncscope target";
  test::TempDir dir;
  test::spit(dir / "bad.json", R"({"traceEvents": [{"ph":"X","cat":"kernel","name":"k","ts":true,"dur":1}]})");
  const CliRun r = convert(dir, q(dir / "bad.json") + " " + q(dir / "out.json"));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_FALSE(fs::exists(dir / "out.json"));
  EXPECT_NE(r.err.find((dir / "bad.json").string()), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("traceEvents[0]"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  // No stray temporary files either.
  std::size_t files = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir.path())) ++files;
  EXPECT_EQ(files, 3u);  // bad.json, stdout, stderr

  test::spit(dir / "garbage.bin", std::string("\x00\x01\x02 not a trace", 16));
  const CliRun g = convert(dir, q(dir / "garbage.bin") + " " + q(dir / "out.json"));
  EXPECT_EQ(g.exit_code, 2);
  EXPECT_NE(g.err.find("not a trace file"), std::string::npos) << g.err;
  EXPECT_FALSE(fs::exists(dir / "out.json"));

  const CliRun missing = convert(dir, q(dir / "missing.json") + " " + q(dir / "out.json"));
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_FALSE(fs::exists(dir / "out.json"));
}

TEST(ConvertCli, TorchTraceToOursAndBack) {
  test::TempDir dir;
  const CliRun r = convert(dir, q(test::torch_fixture()) + " " + q(dir / "ours.json"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("120 kernels"), std::string::npos) << r.out;
  const Trace torch = read_trace(test::torch_fixture());
  EXPECT_EQ(test::diff_traces(torch, read_trace(dir / "ours.json")), "");
  // .json -> .json.gz
  const CliRun gz = convert(dir, q(dir / "ours.json") + " " + q(dir / "ours.json.gz"));
  ASSERT_EQ(gz.exit_code, 0) << gz.err;
  EXPECT_EQ(test::gunzip(dir / "ours.json.gz"), test::slurp(dir / "ours.json"));
}

TEST(ConvertCli, RefusesToOverwriteWithoutForce) {
  test::TempDir dir;
  test::spit(dir / "out.json", "keep me");
  const CliRun r = convert(dir, q(test::trace_fixture("chrome_array.json")) + " " + q(dir / "out.json"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--force"), std::string::npos) << r.err;
  EXPECT_EQ(test::slurp(dir / "out.json"), "keep me");
  const CliRun f = convert(dir, q(test::trace_fixture("chrome_array.json")) + " " + q(dir / "out.json") + " --force");
  EXPECT_EQ(f.exit_code, 0) << f.err;
  EXPECT_EQ(read_trace(dir / "out.json").kernels.size(), 1u);
}

TEST(ConvertCli, BinaryFormatIsRefusedClearly) {
  test::TempDir dir;
  const CliRun r =
      convert(dir, q(test::trace_fixture("chrome_array.json")) + " " + q(dir / "out.sstrace") + " --format binary");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("binary"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "out.sstrace"));
  const CliRun bad =
      convert(dir, q(test::trace_fixture("chrome_array.json")) + " " + q(dir / "o.json") + " --format xml");
  EXPECT_EQ(bad.exit_code, 2);
}

// --time-grid us: the H200 torch.profiler trace (ns-resolution Kineto: fractional "ts") written
// with every time on the whole-microsecond grid, labelled, each within 500 ns of the original.
TEST(ConvertCli, TimeGridUsWritesWholeMicrosecondsAndSaysSo) {
  test::TempDir dir;
  const CliRun r = convert(dir, q(test::torch_fixture()) + " " + q(dir / "grid.json") + " --time-grid us");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string text = test::slurp(dir / "grid.json");
  EXPECT_NE(text.find("\"syncscope_time_grid\":\"1 us: every time rounded"), std::string::npos);
  const Trace torch = read_trace(test::torch_fixture());
  const Trace grid = read_trace(dir / "grid.json");
  ASSERT_EQ(grid.kernels.size(), torch.kernels.size());
  std::size_t moved = 0;
  for (std::size_t i = 0; i < torch.kernels.size(); ++i) {
    EXPECT_EQ((grid.kernels[i].start - grid.meta.base_time_ns) % 1000, 0) << i;
    EXPECT_LE(std::llabs(grid.kernels[i].start - torch.kernels[i].start), 500) << i;
    moved += grid.kernels[i].start != torch.kernels[i].start;
  }
  EXPECT_GT(moved, 0u);  // the fixture has sub-microsecond times: the grid moved them
  const CliRun bad = convert(dir, q(test::torch_fixture()) + " " + q(dir / "o.json") + " --time-grid ns");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_FALSE(fs::exists(dir / "o.json"));
}

}  // namespace
}  // namespace syncscope
