// `syncscope run --device sim` and `syncscope report` end to end, through the built CLI.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

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
  const std::string cmd = "cd '" + cwd.string() + "' && '" SYNCSCOPE_CLI "' " + args + " > '" + out.string() +
                          "' 2> '" + err.string() + "' < /dev/null";
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
    const double p = v["predicted_speedup"]["value"].get<double>(), m = v["observed_speedup"]["value"].get<double>();
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
  EXPECT_EQ(results["schema_version"], 3);  // 2: "observed_speedup"; 3: "sync_removals"
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
  // The report's step bars and strips on a real run: a step bar per variant, the strips of the scenario on one
  // time axis, the speedup headers saying what the numbers are.
  EXPECT_NE(html.find("class=\"chart step-chart\""), std::string::npos);
  std::size_t bars = 0;
  for (auto p = html.find("class=\"variant step-bar\""); p != std::string::npos;
       p = html.find("class=\"variant step-bar\"", p + 1))
    ++bars;
  EXPECT_EQ(bars, 4u);
  std::set<std::string> scales;
  for (auto p = html.find("<svg class=\"timeline-strip\""); p != std::string::npos;
       p = html.find("<svg class=\"timeline-strip\"", p + 1)) {
    const auto a = html.find("data-ns-per-px=\"", p) + 16;
    scales.insert(html.substr(a, html.find('"', a) - a));
  }
  EXPECT_EQ(scales.size(), 1u);  // one scenario, one axis
  EXPECT_NE(html.find("<th>simulated speedup</th>"), std::string::npos);
  EXPECT_EQ(html.find("<th>measured speedup</th>"), std::string::npos);
  EXPECT_NE(read_file(dir_ / "res/timelines.json").find("\"sync_bubble_ns\""), std::string::npos);
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

// `report` reads only files inside the run directories it is given: a
// trace_file that is absolute, climbs out with "..", or is a link out is exit 2 naming the
// path, and no report is written. The file pointed at is a real trace, so reading it would
// have worked and put another run's timeline into this report.
TEST_F(RunCli, ReportRefusesTraceFilesOutsideTheRunDirectory) {
  ASSERT_LE(run(dir_.path(), "run tiny.yaml --device sim --gpu-profile H200 --out a --repeats 1").code, 1);
  fs::remove(dir_ / "a/timelines.json");  // so the report reads the traces
  auto results = nlohmann::json::parse(read_file(dir_ / "a/results.json"));
  const std::string kept = results["variants"][0]["trace_file"].get<std::string>();
  fs::create_directories(dir_ / "elsewhere");
  fs::copy_file(dir_ / "a" / kept, dir_ / "elsewhere/other.json.gz");
  fs::create_symlink(dir_ / "elsewhere/other.json.gz", dir_ / "a/traces/link.json.gz");
  const std::string absolute = (dir_ / "elsewhere/other.json.gz").string();
  for (const auto& [path, why] : std::vector<std::pair<std::string, std::string>>{
           {absolute, "is an absolute path"},
           {"../elsewhere/other.json.gz", "leads outside the run directory"},
           {"traces/link.json.gz", "resolves through a symbolic link to " + absolute}}) {
    SCOPED_TRACE(path);
    results["variants"][0]["trace_file"] = path;
    write_file_atomic(dir_ / "a/results.json", results.dump(), /*overwrite=*/true);
    Result r = run(dir_.path(), "report a -o out.html");
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_NE(r.err.find("a/results.json: /variants/0/trace_file \"" + path + "\" " + why), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir_ / "out.html"));
  }
  // Put back, the same directory reports.
  results["variants"][0]["trace_file"] = kept;
  write_file_atomic(dir_ / "a/results.json", results.dump(), /*overwrite=*/true);
  Result ok = run(dir_.path(), "report a -o out.html");
  EXPECT_EQ(ok.code, 0) << ok.err;
  EXPECT_NE(read_file(dir_ / "out.html").find("class=\"timeline-strip\""), std::string::npos);
}

}  // namespace
}  // namespace syncscope
