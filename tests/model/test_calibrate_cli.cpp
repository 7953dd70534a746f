// `syncscope calibrate --from-trace` as a user runs it: the built executable, exit codes,
// files; and the fitted profile in `predict --trace` and `run --device sim`.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "syncscope/model/gpu_profile.hpp"
#include "syncscope/model/results.hpp"
#include "test_paths.hpp"

namespace syncscope {
namespace {

namespace fs = std::filesystem;

struct CliRun {
  int exit_code = -1;
  std::string out, err;
};

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

CliRun syncscope(const test::TempDir& dir, const std::string& args) {
  const fs::path exe = fs::path(SYNCSCOPE_BINARY_DIR) / "cli" / "syncscope";
  const std::string cmd =
      "'" + exe.string() + "' " + args + " >'" + (dir / "stdout").string() + "' 2>'" + (dir / "stderr").string() + "'";
  const int status = std::system(cmd.c_str());
  CliRun r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(dir / "stdout");
  r.err = slurp(dir / "stderr");
  return r;
}

std::string q(const fs::path& p) { return "'" + p.string() + "'"; }

const fs::path kTrace = test::fixture("torch/item_loop_l8_h200.json.gz");

TEST(CalibrateCli, FromTraceWritesAFittedProfileThatPredictAndRunUse) {
  ASSERT_TRUE(fs::exists(fs::path(SYNCSCOPE_BINARY_DIR) / "cli" / "syncscope")) << "build the syncscope target";
  test::TempDir dir;
  const fs::path prof = dir / "fitted.yaml";
  const CliRun r = syncscope(dir, "calibrate --from-trace " + q(kTrace) +
                                      " --step-range 'train_step#*' --steps 1 --base H200 --output " + q(prof));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("host_launch_op_ns"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("wrote " + prof.string()), std::string::npos) << r.out;
  const model::GpuProfile p = model::load_gpu_profile(prof.string());
  EXPECT_EQ(p.provenance.at("traces"), "item_loop_l8_h200.json.gz");
  EXPECT_EQ(p.provenance.at("trace_sha256").size(), 64u);
  EXPECT_GT(p.host_launch_op_ns, 0);

  // An existing output is not replaced without --force.
  const std::string before = slurp(prof);
  const CliRun again = syncscope(dir, "calibrate --from-trace " + q(kTrace) + " --base H200 --output " + q(prof));
  EXPECT_EQ(again.exit_code, 2);
  EXPECT_NE(again.err.find("already exists"), std::string::npos) << again.err;
  EXPECT_EQ(slurp(prof), before);

  const CliRun pr =
      syncscope(dir, "predict --trace " + q(kTrace) + " --step-range 'train_step#*' --gpu-profile " + q(prof));
  ASSERT_EQ(pr.exit_code, 0) << pr.err;
  EXPECT_NE(pr.out.find("was fitted from trace(s) item_loop_l8_h200.json.gz"), std::string::npos) << pr.out;

  const fs::path out = dir / "run";
  const CliRun run = syncscope(dir, "run " + q(test::source_dir() / "scenarios" / "qwen3-0.6b.yaml") +
                                        " --device sim --gpu-profile " + q(prof) + " --out " + q(out));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const model::RunResults res = model::read_results(out);
  EXPECT_EQ(res.env.extra.at("gpu_profile_trace_sha256"), p.provenance.at("trace_sha256"));
  EXPECT_NE(res.env.extra.at("gpu_profile_host_costs").find("eager Python"), std::string::npos);
}

TEST(CalibrateCli, WithoutBaseTheMissingFieldsExitTwo) {
  ASSERT_TRUE(fs::exists(fs::path(SYNCSCOPE_BINARY_DIR) / "cli" / "syncscope")) << "build the syncscope target";
  test::TempDir dir;
  const fs::path prof = dir / "fitted.yaml";
  const CliRun r = syncscope(dir, "calibrate --from-trace " + q(kTrace) + " --output " + q(prof));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_FALSE(fs::exists(prof));
  for (const char* f : {"h2d_pinned_bytes_per_s", "dram_bytes_per_s", "bf16_flops_per_s", "--base"})
    EXPECT_NE(r.err.find(f), std::string::npos) << f << "\n" << r.err;
  const CliRun missing = syncscope(dir, "calibrate --from-trace " + q(dir / "missing.json") + " --base H200");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("missing.json"), std::string::npos) << missing.err;
  const CliRun stray = syncscope(dir, "calibrate --base H200");
  EXPECT_EQ(stray.exit_code, 2);
  EXPECT_NE(stray.err.find("--from-trace"), std::string::npos) << stray.err;
}

}  // namespace
}  // namespace syncscope
