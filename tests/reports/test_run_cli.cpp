// `syncscope run --device sim` and `syncscope report` end to end, through the built CLI.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "syncscope/core/csv.hpp"
#include "syncscope/core/file_io.hpp"
#include "test_paths.hpp"

namespace syncscope {
namespace {

namespace fs = std::filesystem;

// A small dense model with both the packing and the offload fix, quick to simulate.
const char* kTiny = R"(name: tiny
model:
  name: Tiny
  num_hidden_layers: 4
  hidden_size: 256
  num_attention_heads: 4
  num_key_value_heads: 2
  head_dim: 64
  intermediate_size: 512
  vocab_size: 1000
batch:
  packed_tokens: 512
  min_len: 32
  max_len: 256
  seed: 1
offload: true
fixes:
  packing:
    variants: [rebuild, cached]
  offload:
    variants: [single, double]
measure:
  warmup_steps: 0
  repeat_steps: 2
)";

struct Result {
  int code = -1;
  std::string out, err;
};

Result run(const fs::path& cwd, const std::string& args) {
  const fs::path out = cwd / "stdout.txt", err = cwd / "stderr.txt";
  const std::string cmd = "cd '" + cwd.string() + "' && '" SYNCSCOPE_CLI "' " + args + " > '" + out.string() + "' 2> '" +
                          err.string() + "' < /dev/null";
  const int status = std::system(cmd.c_str());
  Result r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = read_file(out);
  r.err = read_file(err);
  return r;
}

// The exit status `run` must give: 1 when some non-baseline variant with a prediction
// misses its tolerance (model/validate.hpp's rule), else 0.
int expected_status(const nlohmann::json& results) {
  for (const auto& v : results["variants"]) {
    if (v["baseline"].get<bool>()) continue;
    const double p = v["predicted_speedup"]["value"].get<double>(), m = v["measured_speedup"]["value"].get<double>();
    if (p > 0 && std::fabs((p - m) / m) > v["tolerance"].get<double>()) return 1;
  }
  return 0;
}

class RunCli : public ::testing::Test {
 protected:
  void SetUp() override { std::ofstream(dir_ / "tiny.yaml") << kTiny; }
  test::TempDir dir_;
};

TEST_F(RunCli, SimulatedRunWritesLabelledResultsAndRefusesOverwrite) {
  Result r = run(dir_.path(), "run tiny.yaml --device sim --gpu-profile H200 --out res");
  ASSERT_TRUE(r.code == 0 || r.code == 1) << r.err;
  auto results = nlohmann::json::parse(read_file(dir_ / "res/results.json"));
  EXPECT_EQ(r.code, expected_status(results)) << r.out << r.err;
  EXPECT_EQ(results["mode"], "simulated");
  EXPECT_EQ(results["schema_version"], 1);
  EXPECT_EQ(results["env"]["gpu_profile"], "H200");
  ASSERT_EQ(results["variants"].size(), 4u);  // packing x2, offload x2
  for (const auto& v : results["variants"]) {
    EXPECT_EQ(v["layers"], 4);
    EXPECT_GT(v["step_time_ns"]["value"].get<double>(), 0);
    EXPECT_TRUE(fs::exists(dir_ / "res" / v["trace_file"].get<std::string>())) << v["trace_file"];
  }
  // Every CSV row says simulated.
  auto rows = csv_parse(read_file(dir_ / "res/results.csv"));
  ASSERT_GT(rows.size(), 4u);
  EXPECT_EQ(rows[0][1], "mode");
  for (std::size_t i = 1; i < rows.size(); ++i) EXPECT_EQ(rows[i][1], "simulated");
  const std::string html = read_file(dir_ / "res/report.html");
  EXPECT_NE(html.find("class=\"banner mode-simulated\""), std::string::npos);
  EXPECT_NE(html.find("class=\"timeline-strip\""), std::string::npos);
  EXPECT_TRUE(fs::exists(dir_ / "res/timelines.json"));
  // No partial directory is left after success.
  for (const auto& e : fs::directory_iterator(dir_.path()))
    EXPECT_EQ(e.path().filename().string().find(".partial-"), std::string::npos) << e.path();

  Result again = run(dir_.path(), "run tiny.yaml --device sim --out res");
  EXPECT_EQ(again.code, 2);
  EXPECT_NE(again.err.find("exists"), std::string::npos) << again.err;
  Result forced = run(dir_.path(), "run tiny.yaml --device sim --out res --force --repeats 3");
  EXPECT_TRUE(forced.code == 0 || forced.code == 1) << forced.err;
  auto results3 = nlohmann::json::parse(read_file(dir_ / "res/results.json"));
  EXPECT_EQ(results3["variants"][0]["step_time_ns"]["n"], 3);
}

TEST_F(RunCli, AutoFallsBackToSimulatorAndSaysSo) {
  Result r = run(dir_.path(), "run tiny.yaml --repeats 1");
  if (r.err.find("running the simulator") == std::string::npos) GTEST_SKIP() << "a CUDA device is present";
  ASSERT_TRUE(r.code == 0 || r.code == 1) << r.err;
  EXPECT_NE(r.err.find("no CUDA device ("), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("running the simulator with GPU profile H200"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::exists(dir_ / "out/tiny-simulated/results.json"));  // default --out
}

TEST_F(RunCli, BadScenarioIsExitTwoWithPosition) {
  std::string bad = kTiny;
  bad.replace(bad.find("packed_tokens: 512"), 18, "packed_tokens: -3");
  std::ofstream(dir_ / "bad.yaml") << bad;
  Result r = run(dir_.path(), "run bad.yaml --device sim --out r2");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("bad.yaml:12:18: batch.packed_tokens: expected a positive integer, got -3"), std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "r2"));
}

TEST_F(RunCli, ReportMergesRuns) {
  ASSERT_LE(run(dir_.path(), "run tiny.yaml --device sim --gpu-profile H200 --out a --repeats 1").code, 1);
  ASSERT_LE(run(dir_.path(), "run tiny.yaml --device sim --gpu-profile B200 --out b --repeats 1").code, 1);
  Result r = run(dir_.path(), "report a b -o merged.html");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string html = read_file(dir_ / "merged.html");
  std::size_t charts = 0;
  for (auto p = html.find("class=\"chart speedup-chart\""); p != std::string::npos;
       p = html.find("class=\"chart speedup-chart\"", p + 1))
    ++charts;
  EXPECT_EQ(charts, 2u);
  EXPECT_NE(html.find("class=\"cross-gpu\""), std::string::npos);
  EXPECT_EQ(run(dir_.path(), "report a b -o merged.html").code, 2);  // refuses to overwrite
  EXPECT_EQ(run(dir_.path(), "report a b -o merged.html --force").code, 0);

  // The simulator checked against another run's traces (here a simulation stands in for a
  // measured run; the notes say so).
  Result c = run(dir_.path(), "run tiny.yaml --device sim --gpu-profile B200 --out c --repeats 1 --compare-measured a");
  ASSERT_LE(c.code, 1) << c.err;
  auto check = nlohmann::json::parse(read_file(dir_ / "c/sim_check.json"));
  EXPECT_EQ(check["checks"].size(), 4u);
  for (const auto& k : check["checks"]) EXPECT_FALSE(k["comparison"]["metrics"].empty());
  EXPECT_NE(read_file(dir_ / "c/report.html").find("class=\"sim-check\""), std::string::npos);
  EXPECT_NE(read_file(dir_ / "c/results.json").find("compares two simulations"), std::string::npos);
}

}  // namespace
}  // namespace syncscope
