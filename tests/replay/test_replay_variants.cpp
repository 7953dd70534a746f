// diff --what-if against simulated fixed variants: each fix's baseline and every
// fixed variant run on the simulator through the built CLI; BEFORE (the baseline's trace)
// replayed with the variant's edit must give the real AFTER's step time within 3%. This is a
// consistency check of the replay's edits against our own simulator, not accuracy on a GPU:
// both read the same step programs' notion of host calls, streams and syncs. What it does
// check is that each edit changes what the fixed program changes and nothing else.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "test_paths.hpp"

namespace syncscope {
namespace {

namespace fs = std::filesystem;

// Layer inputs of 2048 tokens x 4096 x 2 bytes = 16 MiB: above Unsloth's 2 MiB offload minimum
// and predict --trace's 1 MiB reload threshold, and wide enough that reloads cost time.
const char* kDense = R"(name: dense
model:
  name: Dense
  num_hidden_layers: 4
  hidden_size: 4096
  num_attention_heads: 32
  num_key_value_heads: 8
  head_dim: 128
  intermediate_size: 8192
  vocab_size: 1000
batch:
  packed_tokens: 2048
  min_len: 64
  max_len: 1024
  seed: 1
offload: true
fixes:
  packing:
    variants: [rebuild, cached, device]
  offload:
    variants: [single, double, prefetch]
measure:
  warmup_steps: 1
  repeat_steps: 3
)";

// Routing runs twice per layer per step (Unsloth's checkpointing: forward and recompute),
// and the per-expert backward follows each recompute inside its layer range.
const char* kMoe = R"(name: moe
model:
  name: SmallMoE
  num_hidden_layers: 4
  hidden_size: 512
  num_attention_heads: 8
  num_key_value_heads: 2
  head_dim: 64
  intermediate_size: 512
  vocab_size: 1000
  num_local_experts: 16
  num_experts_per_tok: 2
batch:
  packed_tokens: 1024
  min_len: 64
  max_len: 512
  seed: 1
offload: true
fixes:
  moe_routing:
    variants: [loop, sorted, device]
measure:
  warmup_steps: 1
  repeat_steps: 3
)";

struct VariantCliRun {
  int code = -1;
  std::string out, err;
};

std::string slurp_bytes(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

VariantCliRun variant_cli(const fs::path& cwd, const std::string& args) {
  const fs::path exe = fs::path(SYNCSCOPE_BINARY_DIR) / "cli" / "syncscope";
  const std::string cmd = "cd '" + cwd.string() + "' && '" + exe.string() + "' " + args + " > stdout.txt 2> stderr.txt";
  const int status = std::system(cmd.c_str());
  VariantCliRun r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp_bytes(cwd / "stdout.txt");
  r.err = slurp_bytes(cwd / "stderr.txt");
  return r;
}

class ReplayVariants : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir();
    std::ofstream(*dir_ / "dense.yaml") << kDense;
    std::ofstream(*dir_ / "moe.yaml") << kMoe;
    const VariantCliRun r =
        variant_cli(dir_->path(), "run dense.yaml moe.yaml --device sim --gpu-profile H200 --out res");
    ran_ = r.code == 0 || r.code == 1;
    if (!ran_) std::fprintf(stderr, "run failed (%d): %s\n%s\n", r.code, r.out.c_str(), r.err.c_str());
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  // A variant's trace, as results.json names it (variants with the same program share one).
  static std::string trace_of(const std::string& scenario, const std::string& variant) {
    const auto j = nlohmann::json::parse(slurp_bytes(*dir_ / "res/results.json"));
    for (const auto& v : j.at("variants"))
      if (v.at("scenario") == scenario && v.at("variant") == variant)
        return "res/" + v.at("trace_file").get<std::string>();
    ADD_FAILURE() << "no variant " << scenario << "/" << variant;
    return "";
  }
  struct WhatIf {
    double error = 1e9;       // (replayed AFTER - real AFTER) / real AFTER
    double saving_share = 0;  // replayed saving / real saving
  };
  // The replayed AFTER against the real AFTER, from diff --format json.
  static WhatIf what_if(const std::string& scenario, const std::string& before, const std::string& after,
                        const std::string& edit) {
    WhatIf w;
    const VariantCliRun r =
        variant_cli(dir_->path(), "diff " + trace_of(scenario, before) + " " + trace_of(scenario, after) +
                                      " --format json --what-if " + edit);
    EXPECT_EQ(r.code, 0) << r.err;
    if (r.code != 0) return w;
    const auto j = nlohmann::json::parse(r.out);
    const double b = j.at("before").at("step_ns").get<double>(), a = j.at("after").at("step_ns").get<double>();
    const double p = j.at("what_if").at("predicted_after_step_ns").get<double>();
    w.error = j.at("what_if").at("error").get<double>();
    w.saving_share = (b - p) / (b - a);
    std::printf("%s %s -> %s, %s: before %.3f ms, replayed %.3f ms, real %.3f ms, error %+.2f%%\n", scenario.c_str(),
                before.c_str(), after.c_str(), edit.c_str(), b / 1e6, p / 1e6, a / 1e6, w.error * 100);
    EXPECT_LT(a, 0.99 * b) << "the fix saves something to predict";
    return w;
  }
  static test::TempDir* dir_;
  static bool ran_;
};
test::TempDir* ReplayVariants::dir_ = nullptr;
bool ReplayVariants::ran_ = false;

TEST_F(ReplayVariants, PackingCached) {
  ASSERT_TRUE(ran_);
  EXPECT_LE(std::fabs(what_if("dense", "rebuild", "cached", "packing-cache").error), 0.03);
}
TEST_F(ReplayVariants, PackingDevice) {
  ASSERT_TRUE(ran_);
  EXPECT_LE(std::fabs(what_if("dense", "rebuild", "device", "packing-device").error), 0.03);
}
TEST_F(ReplayVariants, OffloadDouble) {
  ASSERT_TRUE(ran_);
  EXPECT_LE(std::fabs(what_if("dense", "single", "double", "double-buffer").error), 0.03);
}
TEST_F(ReplayVariants, OffloadPrefetch) {
  ASSERT_TRUE(ran_);
  EXPECT_LE(std::fabs(what_if("dense", "single", "prefetch", "prefetch").error), 0.03);
}
// Within 3% since moe-sorted also does what sorted does to the loop's index arithmetic (our
// loop turns each query's (token, slot) pairs into flat indices with two launches, sorted
// divides the argsort order by top_k with one: of the routing-query kernels' calls after each
// query, one stays). Before, the replayed sorted step was slow by about one launch per expert:
// +3.74%, 75.7% of the saving found. On this tree: +0.22%, 98.6% found.
TEST_F(ReplayVariants, MoeSorted) {
  ASSERT_TRUE(ran_);
  const WhatIf w = what_if("moe", "loop", "sorted", "moe-sorted");
  EXPECT_LE(std::fabs(w.error), 0.03);
  EXPECT_GE(w.saving_share, 0.8);
}
// Within the 3% goal since the shipped profiles carry eager host costs: the simulated MoE step
// is host-bound, so the folded kernels' summed time (an upper bound on one grouped kernel:
// E tiny kernels each pay the GPU's floor, one pays it once) no longer sets the replayed step
// (commit a802307: -1.09%; +21.4% with no host cost per op, where the GPU bound binds).
TEST_F(ReplayVariants, MoeDevice) {
  ASSERT_TRUE(ran_);
  const WhatIf w = what_if("moe", "loop", "device", "moe-device");
  EXPECT_LE(std::fabs(w.error), 0.03);
  EXPECT_GE(w.saving_share, 0.8);
}

}  // namespace
}  // namespace syncscope
