// sweep --status: what each task's state comes from when it is not simply done: Slurm's
// time limit, a job killed without a word, a local task that died, a task cancelled with
// SIGTERM while `run` was running (scancel); and the table people read.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <sstream>
#include <thread>

#include "fake_run.hpp"
#include "fake_slurm.hpp"
#include "syncscope/cluster/sweep.hpp"
#include "syncscope/core/file_io.hpp"
#include "test_paths.hpp"

namespace syncscope {
namespace {

namespace fs = std::filesystem;

struct Env {
  test::TempDir d;
  test::FakeRun run{d / "fake"};
  test::FakeSlurm slurm{d / "bin"};
  Env() {
    fs::create_directories(d / "scen");
    write_file_atomic(d / "scen" / "a.yaml", test::tiny_scenario("tiny-a"));
  }
  cluster::SweepRequest request(bool slurm) const {
    cluster::SweepRequest r;
    r.scenarios = {(d / "scen" / "a.yaml").string()};
    r.gpu_profiles = {"H200", "B200"};
    r.device = "sim";
    r.out = d / "sweep";
    r.slurm = slurm;
    r.syncscope = run.exe();
    r.tools = this->slurm.tools();
    return r;
  }
  void status(const std::string& task, const std::string& state, const std::string& job,
              const std::string& extra = "") {
    fs::create_directories(d / "sweep" / "status");
    write_file_atomic(d / "sweep" / "status" / (task + ".json"),
                      "{\"state\": \"" + state + "\", \"reason\": \"\", \"job\": \"" + job +
                          "\", \"host\": \"elsewhere\", \"started_utc\": \"2099-01-01T00:00:00Z\"" + extra + "}",
                      true);
  }
};

TEST(SweepStatus, SlurmRemembersWhatTheStatusFilesCannotSay) {
  Env e;
  std::ostringstream out;
  ASSERT_EQ(cluster::start_sweep(e.request(true), out), 0);  // array job 100, tasks 0-1
  // Task 0 started in job 100 and never wrote its end; Slurm says the time limit hit it.
  e.status("a--H200", "running", "100_0");
  e.slurm.job("100_0", "TIMEOUT", "TimeLimit", "0:15");
  // Task 1 started and vanished; Slurm forgot it (MinJobAge passed).
  e.status("a--B200", "running", "100_1");
  const auto st = cluster::sweep_status(e.d / "sweep", e.slurm.tools());
  EXPECT_EQ(st[0].state, cluster::TaskState::Failed);
  EXPECT_NE(st[0].reason.find("time limit reached (Slurm: TIMEOUT, reason TimeLimit, exit code 0:15)"),
            std::string::npos)
      << st[0].reason;
  EXPECT_EQ(st[1].state, cluster::TaskState::Lost);
  EXPECT_NE(st[1].reason.find("left the queue without writing its status"), std::string::npos) << st[1].reason;
  // A task the task runner saw cancelled (SIGTERM) whose job Slurm says timed out: the time limit.
  e.status("a--B200", "cancelled", "100_1");
  e.slurm.job("100_1", "TIMEOUT", "TimeLimit", "0:15");
  EXPECT_EQ(cluster::sweep_status(e.d / "sweep", e.slurm.tools())[1].state, cluster::TaskState::Failed);

  const std::string table = cluster::status_table(cluster::read_plan(e.d / "sweep"), st);
  EXPECT_NE(table.find("a--H200  failed     100_0"), std::string::npos) << table;
  EXPECT_NE(table.find("1 failed, 1 lost"), std::string::npos) << table;
}

TEST(SweepStatus, ALocalTaskWhoseProcessIsGoneIsLost) {
  Env e;
  auto r = e.request(false);
  r.dry_run = true;
  std::ostringstream out;
  ASSERT_EQ(cluster::start_sweep(r, out), 0);
  e.status("a--H200", "running", "local", ", \"pid\": 1");  // on another host
  const auto st = cluster::sweep_status(e.d / "sweep", {});
  EXPECT_EQ(st[0].state, cluster::TaskState::Lost);
  EXPECT_EQ(st[1].state, cluster::TaskState::Missing);
}

TEST(SweepStatus, SigtermDuringRunCancelsTheTaskAndLeavesNoResult) {
  Env e;
  auto r = e.request(false);
  r.dry_run = true;
  std::ostringstream out;
  ASSERT_EQ(cluster::start_sweep(r, out), 0);
  e.run.set("sleep", "a--H200", "5");
  // scancel sends SIGTERM to the job's processes; here it reaches the task runner, which
  // passes it on to `run`.
  std::thread killer([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(700));
    ::kill(::getpid(), SIGTERM);
  });
  const int rc = cluster::run_sweep_task(e.d / "sweep", 0, e.run.exe(), out);
  killer.join();
  EXPECT_EQ(rc, 1);
  const auto st = cluster::sweep_status(e.d / "sweep", {});
  EXPECT_EQ(st[0].state, cluster::TaskState::Cancelled);
  EXPECT_NE(st[0].reason.find("received SIGTERM"), std::string::npos) << st[0].reason;
  EXPECT_FALSE(fs::exists(e.d / "sweep" / "tasks" / "a--H200"));
}

}  // namespace
}  // namespace syncscope
