// diff --what-if against simulated fixed variants (issue 23): each fix's baseline and every
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

// Layer inputs of 4096 tokens x 512 x 2 bytes = 4 MiB: above Unsloth's 2 MiB offload minimum
// and predict --trace's 1 MiB reload threshold, so the offload fix has reloads to edit.
const char* kDense = R"(name: dense
model:
  name: Dense
  num_hidden_layers: 4
  hidden_size: 512
  num_attention_heads: 8
  num_key_value_heads: 2
  head_dim: 64
  intermediate_size: 1024
  vocab_size: 1000
batch:
  packed_tokens: 4096
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
  const fs::path exe = fs::path(SYNCSCOPE_BINARY_DIR) / "cli" / "syncscope";
  const std::string cmd = "cd '" + cwd.string() + "' && '" + exe.string() + "' " + args + " > stdout.txt 2> stderr.txt";
  const int status = std::system(cmd.c_str());
  CliRun r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(cwd / "stdout.txt");
  r.err = slurp(cwd / "stderr.txt");
  return r;
}

class ReplayVariants : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir();
    std::ofstream(*dir_ / "dense.yaml") << kDense;
    std::ofstream(*dir_ / "moe.yaml") << kMoe;
    const CliRun r = cli(dir_->path(), "run dense.yaml moe.yaml --device sim --gpu-profile H200 --out res");
    ran_ = r.code == 0 || r.code == 1;
    if (!ran_) std::fprintf(stderr, "run failed (%d): %s\n%s\n", r.code, r.out.c_str(), r.err.c_str());
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  // The replayed AFTER's error against the real AFTER, from diff --format json.
  static double what_if_error(const std::string& before, const std::string& after, const std::string& edit) {
    const std::string traces = "res/traces/";
    const CliRun r = cli(dir_->path(), "diff " + traces + before + ".json.gz " + traces + after +
                                           ".json.gz --format json --what-if " + edit);
    EXPECT_EQ(r.code, 0) << r.err;
    if (r.code != 0) return 1e9;
    const auto j = nlohmann::json::parse(r.out);
    const auto& w = j.at("what_if");
    std::printf("%s -> %s, %s: replayed %.3f ms, real %.3f ms, error %+.2f%%\n", before.c_str(), after.c_str(),
                edit.c_str(), w.at("predicted_after_step_ns").get<double>() / 1e6,
                w.at("real_after_step_ns").get<double>() / 1e6, w.at("error").get<double>() * 100);
    EXPECT_LT(j.at("after").at("step_ns").get<double>(), j.at("before").at("step_ns").get<double>())
        << "the fix saves something to predict";
    return w.at("error").get<double>();
  }
  static test::TempDir* dir_;
  static bool ran_;
};
test::TempDir* ReplayVariants::dir_ = nullptr;
bool ReplayVariants::ran_ = false;

TEST_F(ReplayVariants, PackingCached) {
  ASSERT_TRUE(ran_);
  EXPECT_LE(std::fabs(what_if_error("dense__packing-rebuild", "dense__packing-cached", "packing-cache")), 0.03);
}
TEST_F(ReplayVariants, PackingDevice) {
  ASSERT_TRUE(ran_);
  EXPECT_LE(std::fabs(what_if_error("dense__packing-rebuild", "dense__packing-device", "packing-device")), 0.03);
}
TEST_F(ReplayVariants, OffloadDouble) {
  ASSERT_TRUE(ran_);
  EXPECT_LE(std::fabs(what_if_error("dense__offload-single", "dense__offload-double", "double-buffer")), 0.03);
}
TEST_F(ReplayVariants, OffloadPrefetch) {
  ASSERT_TRUE(ran_);
  EXPECT_LE(std::fabs(what_if_error("dense__offload-single", "dense__offload-prefetch", "prefetch")), 0.03);
}
TEST_F(ReplayVariants, MoeSorted) {
  ASSERT_TRUE(ran_);
  EXPECT_LE(std::fabs(what_if_error("moe__moe_routing-loop", "moe__moe_routing-sorted", "moe-sorted")), 0.03);
}
TEST_F(ReplayVariants, MoeDevice) {
  ASSERT_TRUE(ran_);
  EXPECT_LE(std::fabs(what_if_error("moe__moe_routing-loop", "moe__moe_routing-device", "moe-device")), 0.03);
}

}  // namespace
}  // namespace syncscope
