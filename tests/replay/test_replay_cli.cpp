// predict --trace --what-if and diff through the built executable: the JSON
// names scripts read, exit 2 for an edit that selects nothing, diff's what-if block.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

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

const std::string kTrace = "'" + test::fixture("torch/item_loop_l8_h200.json.gz").string() + "'";

TEST(ReplayCli, PredictJsonCarriesReplayAndWhatIf) {
  test::TempDir dir;
  const CliRun r =
      syncscope(dir, "predict --trace " + kTrace +
                         " --step-range 'train_step#*' --format json --what-if remove-syncs:cause=aten::item");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& rp = j.at("replay");
  ASSERT_EQ(rp.at("steps").size(), 3u);
  for (const auto& s : rp.at("steps")) {
    EXPECT_GT(s.at("measured_ns").get<double>(), 0);
    EXPECT_GT(s.at("replayed_ns").get<double>(), 0);
    EXPECT_TRUE(s.at("name").get<std::string>().starts_with("train_step#"));
  }
  EXPECT_LE(rp.at("median_abs_error").get<double>(), 0.01);
  EXPECT_LE(rp.at("max_abs_error").get<double>(), 0.05);
  ASSERT_EQ(j.at("what_if").size(), 1u);
  const auto& w = j.at("what_if")[0];
  EXPECT_EQ(w.at("edit"), "remove-syncs:cause=aten::item");
  EXPECT_GT(w.at("replayed_step_ns").get<double>(), 0);
  EXPECT_GT(w.at("saving_ns").get<double>(), 0);  // the waits were on the critical path
  EXPECT_GT(w.at("closed_form_saving_ns").get<double>(), 0);
  // Less than the step: the host's own time stays.
  EXPECT_LT(w.at("saving_ns").get<double>(), w.at("replayed_step_ns").get<double>());
}

TEST(ReplayCli, AnEditThatSelectsNothingExits2NamingIt) {
  test::TempDir dir;
  const CliRun r = syncscope(dir, "predict --trace " + kTrace +
                                      " --step-range 'train_step#*' --what-if remove-syncs:cause=aten::nonzero");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("aten::nonzero"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("24 x aten::item"), std::string::npos) << r.err;
  const CliRun bad = syncscope(dir, "predict --trace " + kTrace + " --what-if faster");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("remove-syncs:cause=GLOB"), std::string::npos) << bad.err;
  const CliRun no_trace = syncscope(dir, "predict --fix packing --layers 4 --per-layer-ms 1 --what-if packing-cache");
  EXPECT_EQ(no_trace.exit_code, 2);
}

TEST(ReplayCli, DiffJsonOfATraceWithItself) {
  test::TempDir dir;
  const CliRun r =
      syncscope(dir, "diff " + kTrace + " " + kTrace +
                         " --step-range 'train_step#*' --format json --what-if remove-syncs:api=cudaStreamSynchronize");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("before").at("steps"), 3);
  EXPECT_DOUBLE_EQ(j.at("before").at("step_ns").get<double>(), j.at("after").at("step_ns").get<double>());
  EXPECT_NEAR(j.at("before").at("syncs_by_cause").at("aten::item").get<double>(), 8, 1e-9);
  // Removing the waits predicts a faster AFTER than the (unchanged) real AFTER.
  EXPECT_LT(j.at("what_if").at("error").get<double>(), 0);
}

// pin-memory needs a pinned rate: a trace without pinned copies of that direction and no
// --gpu-profile exits 2 naming the option; with a profile, predict and diff replay it and say
// where the rate came from.
TEST(ReplayCli, PinMemoryTakesItsRateFromTheGpuProfileOrExits2) {
  test::TempDir dir;
  const std::string t = "'" + test::fixture("traces/families/kineto_2021.json").string() + "'";  // one pageable DtoH
  const CliRun none = syncscope(dir, "predict --trace " + t + " --what-if pin-memory");
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("--gpu-profile"), std::string::npos) << none.err;
  const CliRun r = syncscope(dir, "predict --trace " + t + " --what-if pin-memory --gpu-profile H100 --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto w = nlohmann::json::parse(r.out).at("what_if").at(0);
  EXPECT_TRUE(w.at("applicable").get<bool>());
  EXPECT_NE(w.at("notes").at(0).get<std::string>().find("GPU profile H100"), std::string::npos) << w.dump();
  const CliRun d = syncscope(dir, "diff " + t + " " + t + " --what-if pin-memory --gpu-profile H100 --format json");
  ASSERT_EQ(d.exit_code, 0) << d.err;
  EXPECT_TRUE(nlohmann::json::parse(d.out).at("what_if").at("predicted_after_step_ns").is_number());
  EXPECT_EQ(syncscope(dir, "diff " + t + " " + t + " --what-if pin-memory:h2d --gpu-profile H100").exit_code, 2);
}

// analyze's worst offenders say what removing each cause saves, by replay, in every format.
TEST(ReplayCli, AnalyzeSaysWhatRemovingEachCauseSaves) {
  test::TempDir dir;
  const std::string args = "analyze " + kTrace + " --step-range 'train_step#*'";
  const CliRun json = syncscope(dir, args + " --format json");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const auto j = nlohmann::json::parse(json.out);
  const auto& worst = j.at("worst");
  ASSERT_FALSE(worst.empty());
  EXPECT_EQ(worst[0].at("cause"), "aten::item");
  EXPECT_DOUBLE_EQ(worst[0].at("syncs_per_step").get<double>(), 8);  // 8 layers, one .item() each
  const double saving = worst[0].at("removal_saving_ns").get<double>();
  EXPECT_GT(saving, 0);
  // predict --what-if remove-syncs:cause=aten::item replays the same removal.
  const CliRun p =
      syncscope(dir, "predict --trace " + kTrace +
                         " --step-range 'train_step#*' --format json --what-if remove-syncs:cause=aten::item");
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_DOUBLE_EQ(nlohmann::json::parse(p.out).at("what_if")[0].at("saving_ns").get<double>(), saving);

  const CliRun csv = syncscope(dir, args + " --format csv");
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_NE(csv.out.find("worst,aten::item,0,removal_saving_ns," + std::to_string(static_cast<long long>(saving))),
            std::string::npos);
  const CliRun table = syncscope(dir, args);
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("8 x aten::item per step: "), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("/step if removed"), std::string::npos) << table.out;
  // --replay-causes 0: no replay, no such fields.
  const CliRun none = syncscope(dir, args + " --format json --replay-causes 0");
  ASSERT_EQ(none.exit_code, 0) << none.err;
  EXPECT_FALSE(nlohmann::json::parse(none.out).at("worst")[0].contains("removal_saving_ns"));
}

// predict --trace DIR: the whole-job replay, its JSON names and exit 2 for traces of two jobs.
TEST(ReplayCli, PredictOnADirectoryReplaysTheJob) {
  test::TempDir dir;
  const std::string job = "'" + test::fixture("ranks/hta_job").string() + "'";
  const CliRun r = syncscope(dir, "predict --trace " + job + " --format json --what-if remove-syncs:all");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("schema_version"), 1);
  EXPECT_EQ(j.at("kind"), "job_replay");
  EXPECT_EQ(j.at("world_size"), 128);
  EXPECT_TRUE(j.at("peers_anchored").get<bool>());
  ASSERT_EQ(j.at("ranks").size(), 2u);
  EXPECT_EQ(j.at("replayed_steps"), 4);
  EXPECT_TRUE(j.at("within_goal").get<bool>());
  EXPECT_FALSE(j.at("rests_on").empty());
  ASSERT_EQ(j.at("what_if").size(), 1u);
  EXPECT_EQ(j.at("what_if")[0].at("rank"), j.at("straggler"));  // the default edited rank
  EXPECT_EQ(j.at("what_if")[0].at("ranks").size(), 2u);
  const CliRun text = syncscope(dir, "predict --trace " + job + " --what-if remove-syncs:all --what-if-rank 0");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("Whole-job replay of 2 rank trace(s)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("What-if remove-syncs:all on rank 0"), std::string::npos) << text.out;
  // Two jobs' traces in one directory: named, not merged; nothing left to match is exit 2.
  const auto two = dir / "two";
  std::filesystem::create_directory(two);
  std::filesystem::copy(test::fixture("ranks/hta/hta_trace_diff_control_rank3of8.json.gz"), two);
  std::filesystem::copy(test::fixture("ranks/hta/hta_negative_queue_length_rank0of16.json.gz"), two);
  const CliRun bad = syncscope(dir, "predict --trace '" + two.string() + "'");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("jobs of different sizes"), std::string::npos) << bad.err;
  // --what-if-rank without a directory.
  const CliRun lone = syncscope(dir, "predict --trace " + kTrace + " --what-if-rank 1");
  EXPECT_EQ(lone.exit_code, 2);
  EXPECT_NE(lone.err.find("--what-if-rank needs --trace DIR"), std::string::npos) << lone.err;
}

}  // namespace
}  // namespace syncscope
