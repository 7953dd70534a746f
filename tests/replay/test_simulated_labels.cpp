// Honest labels: a simulated run says "simulated" (or "observed" for the value a
// run produced, whatever produced it) and never "measured" anywhere a user reads it:
// report.html, results.csv, results.json, timelines.json, the terminal text of `run` and of
// `validate`. Scenarios with all three fixes (a dense model with packing and offload, a
// small MoE) run on the simulator through the built CLI.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "test_paths.hpp"

namespace syncscope {
namespace {

namespace fs = std::filesystem;

const char* kDense = R"(name: tiny
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
    variants: [rebuild, cached, device]
  offload:
    variants: [single, double]
measure:
  warmup_steps: 0
  repeat_steps: 2
)";

const char* kMoe = R"(name: tinymoe
model:
  name: TinyMoE
  num_hidden_layers: 2
  hidden_size: 256
  num_attention_heads: 4
  num_key_value_heads: 2
  head_dim: 64
  intermediate_size: 256
  vocab_size: 1000
  num_local_experts: 8
  num_experts_per_tok: 2
batch:
  packed_tokens: 256
  min_len: 32
  max_len: 128
  seed: 1
fixes:
  moe_routing:
    variants: [loop, sorted, device]
measure:
  warmup_steps: 0
  repeat_steps: 2
)";

struct CliRun {
  int code = -1;
  std::string out, err;
};

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

CliRun cli(const fs::path& cwd, const std::string& args) {
  const fs::path out = cwd / "stdout.txt", err = cwd / "stderr.txt";
  const std::string cmd = "cd '" + cwd.string() + "' && '" SYNCSCOPE_CLI "' " + args + " > '" + out.string() +
                          "' 2> '" + err.string() + "' < /dev/null";
  const int status = std::system(cmd.c_str());
  CliRun r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

// Every line holding "measured" (any case), with its line number: what the test reports.
std::vector<std::string> measured_lines(const std::string& text) {
  std::vector<std::string> hits;
  std::istringstream in(text);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    std::string lower = line;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
    if (lower.find("measured") != std::string::npos)
      hits.push_back(std::to_string(n) + ": " + (line.size() > 240 ? line.substr(0, 240) + "..." : line));
  }
  return hits;
}

// The page's embedded stylesheet styles both modes (`.banner.mode-measured`, the observed
// bars' colour variable): selectors a reader never sees, so the page is checked without it.
std::string without_style(std::string html) {
  const auto a = html.find("<style>"), b = html.find("</style>");
  if (a != std::string::npos && b != std::string::npos && b > a) html.erase(a, b + 8 - a);
  return html;
}

void expect_no_measured(const std::string& what, const std::string& text) {
  ASSERT_FALSE(text.empty()) << what << " is empty";
  for (const auto& h : measured_lines(text)) ADD_FAILURE() << what << " line " << h;
}

TEST(SimulatedLabels, NoMeasuredInAnySimulatedOutput) {
  test::TempDir dir;
  std::ofstream(dir / "tiny.yaml") << kDense;
  std::ofstream(dir / "tinymoe.yaml") << kMoe;
  const CliRun r = cli(dir.path(), "run tiny.yaml tinymoe.yaml --device sim --gpu-profile H200 --out res");
  ASSERT_TRUE(r.code == 0 || r.code == 1) << r.out << r.err;
  const auto results = nlohmann::json::parse(slurp(dir / "res/results.json"));
  ASSERT_EQ(results.at("mode"), "simulated");
  // The test can fail: it ran every fix, and the words it looks for are in the outputs.
  ASSERT_EQ(results.at("variants").size(), 8u);
  const std::string html = slurp(dir / "res/report.html");
  EXPECT_NE(html.find("simulated"), std::string::npos);
  expect_no_measured("report.html", without_style(html));
  expect_no_measured("results.csv", slurp(dir / "res/results.csv"));
  expect_no_measured("results.json", slurp(dir / "res/results.json"));
  expect_no_measured("timelines.json", slurp(dir / "res/timelines.json"));
  expect_no_measured("run's terminal text", r.out + r.err);
  const CliRun v = cli(dir.path(), "validate res");
  ASSERT_TRUE(v.code == 0 || v.code == 1) << v.err;
  expect_no_measured("validate's terminal text", v.out + v.err);
  const CliRun rep = cli(dir.path(), "report res -o merged.html");
  ASSERT_EQ(rep.code, 0) << rep.err;
  expect_no_measured("report's merged HTML", without_style(slurp(dir / "merged.html")));
}

}  // namespace
}  // namespace syncscope
