// load_report_run reads only files inside the run directory it is given:
// a trace_file in results.json that is absolute, climbs out with "..", or leaves through
// a symbolic link, and a results/timelines/sim_check file that is a link out, are refused
// with an InputError naming the path; paths that stay inside load.
#include <gtest/gtest.h>

#include <fstream>

#include "report_fixture.hpp"
#include "sim_fixture.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/core/file_io.hpp"
#include "syncscope/io/trace_io.hpp"
#include "syncscope/model/run_directory.hpp"
#include "syncscope/replay/critical_path.hpp"
#include "test_paths.hpp"

namespace syncscope {
namespace {

namespace fs = std::filesystem;
using namespace reporttest;

class RunDirectory : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(run_ / "traces");
    fs::create_directories(outside_);
    std::ofstream(outside_ / "secret.txt") << "not for the report\n";
  }
  // results.json whose first variant names `trace_file`.
  void write_results(const std::string& trace_file) {
    model::RunResults r = synthetic_results();
    r.variants[0].trace_file = trace_file;
    for (std::size_t i = 1; i < r.variants.size(); ++i) r.variants[i].trace_file = "";
    write_file_atomic(run_ / "results.json", model::results_to_json(r), /*force=*/true);
  }
  // The message of the InputError load_report_run throws ("" when it loads).
  std::string refusal() {
    try {
      model::load_report_run(run_, replay::add_critical_paths);
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  }
  test::TempDir dir_;
  fs::path run_ = dir_ / "run";
  fs::path outside_ = dir_ / "elsewhere";
};

TEST_F(RunDirectory, AbsoluteTracePathIsRefused) {
  const std::string target = (outside_ / "secret.txt").string();
  write_results(target);
  const std::string e = refusal();
  EXPECT_NE(e.find("\"" + target + "\""), std::string::npos) << e;
  EXPECT_NE(e.find("absolute path"), std::string::npos) << e;
  EXPECT_NE(e.find("results.json"), std::string::npos) << e;
  write_results("/etc/passwd");
  EXPECT_NE(refusal().find("\"/etc/passwd\""), std::string::npos);
}

TEST_F(RunDirectory, DotDotEscapesAreRefused) {
  for (const std::string p :
       {"../../../../etc/passwd", "../elsewhere/secret.txt", "traces/../../elsewhere/secret.txt", ".."}) {
    write_results(p);
    const std::string e = refusal();
    EXPECT_NE(e.find("\"" + p + "\""), std::string::npos) << p << ": " << e;
    EXPECT_NE(e.find("outside the run directory"), std::string::npos) << e;
  }
}

TEST_F(RunDirectory, SymlinksLeavingTheDirectoryAreRefused) {
  // A trace that is a link out.
  fs::create_symlink(outside_ / "secret.txt", run_ / "traces" / "t.json.gz");
  write_results("traces/t.json.gz");
  std::string e = refusal();
  EXPECT_NE(e.find("\"traces/t.json.gz\""), std::string::npos) << e;
  EXPECT_NE(e.find("symbolic link"), std::string::npos) << e;
  EXPECT_NE(e.find((outside_ / "secret.txt").string()), std::string::npos) << e;
  // A directory on the way that is a link out.
  fs::remove_all(run_ / "traces");
  fs::create_symlink(outside_, run_ / "traces");
  write_results("traces/secret.txt");
  e = refusal();
  EXPECT_NE(e.find("\"traces/secret.txt\""), std::string::npos) << e;
  EXPECT_NE(e.find("symbolic link"), std::string::npos) << e;
}

TEST_F(RunDirectory, OwnFilesThatLinkOutAreRefused) {
  write_results("");
  for (const char* name : {"timelines.json", "sim_check.json"}) {
    std::ofstream(outside_ / name) << "{}";
    fs::create_symlink(outside_ / name, run_ / name);
    const std::string e = refusal();
    EXPECT_NE(e.find(name), std::string::npos) << e;
    EXPECT_NE(e.find("symbolic link"), std::string::npos) << e;
    fs::remove(run_ / name);
  }
  fs::rename(run_ / "results.json", outside_ / "results.json");
  fs::create_symlink(outside_ / "results.json", run_ / "results.json");
  const std::string e = refusal();
  EXPECT_NE(e.find("results.json"), std::string::npos) << e;
  EXPECT_NE(e.find("symbolic link"), std::string::npos) << e;
}

TEST_F(RunDirectory, NonRegularTraceIsRefused) {
  fs::create_directories(run_ / "traces" / "dir.json.gz");
  write_results("traces/dir.json.gz");
  const std::string e = refusal();
  EXPECT_NE(e.find("\"traces/dir.json.gz\""), std::string::npos) << e;
  EXPECT_NE(e.find("not a regular file"), std::string::npos) << e;
}

TEST_F(RunDirectory, PathsInsideTheDirectoryLoad) {
  // Through "..", and through a link that stays inside: both read the same trace.
  write_trace(simtest::synced_layers(2, /*sync_inside=*/true), run_ / "traces" / "real.json.gz");
  fs::create_symlink("real.json.gz", run_ / "traces" / "alias.json.gz");
  for (const std::string p : {"traces/../traces/real.json.gz", "traces/alias.json.gz", "./traces/real.json.gz"}) {
    write_results(p);
    EXPECT_EQ(refusal(), "") << p;
    const model::ReportRun run = model::load_report_run(run_, replay::add_critical_paths);
    ASSERT_EQ(run.timelines.size(), 1u) << p;  // extracted from the trace: no timelines.json
    EXPECT_EQ(run.timelines[0].syncs, 1u);
    ASSERT_TRUE(run.timelines[0].step.has_value());
    EXPECT_EQ(run.timelines[0].step->syncs, 2u);  // two layers, a sync in each
  }
  // A trace that is missing is not an error (the report shows no strip for it).
  write_results("traces/missing.json.gz");
  EXPECT_EQ(refusal(), "");
  // The run directory itself may be reached through a link.
  fs::create_symlink(run_, dir_ / "latest");
  write_results("traces/real.json.gz");
  EXPECT_EQ(model::load_report_run(dir_ / "latest", replay::add_critical_paths).timelines.size(), 1u);
}

// A strip rebuilt from a kept trace (no timelines.json) carries its step's critical path when
// the caller hands in the replay's walk (syncscope_model cannot call syncscope_replay: it sits
// below it), and none without.
TEST_F(RunDirectory, RebuiltStripsTakeTheCriticalPathWalkFromTheCaller) {
  write_trace(simtest::synced_layers(2, /*sync_inside=*/true), run_ / "traces" / "real.json.gz");
  write_results("traces/real.json.gz");
  const model::ReportRun with = model::load_report_run(run_, replay::add_critical_paths);
  ASSERT_EQ(with.timelines.size(), 1u);
  ASSERT_TRUE(with.timelines[0].critical_path.has_value());
  EXPECT_GT(with.timelines[0].critical_path->length_ns, 0);
  const model::ReportRun without = model::load_report_run(run_, nullptr);
  ASSERT_EQ(without.timelines.size(), 1u);
  EXPECT_FALSE(without.timelines[0].critical_path.has_value());
}

}  // namespace
}  // namespace syncscope
