// cluster/sweep: the plan, the local sweep end to end with a stand-in for `syncscope run`,
// a failed task named in the merged report and redone alone, a task killed mid-run leaving
// nothing the report takes, Slurm submission with fake clients (one array per constraint,
// the report job after them, resubmission of only what is missing or failed), and the
// directory rules.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <set>
#include <sstream>

#include "fake_run.hpp"
#include "fake_slurm.hpp"
#include "syncscope/cluster/sweep.hpp"
#include "syncscope/core/csv.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/core/file_io.hpp"
#include "test_paths.hpp"

namespace syncscope {
namespace {

namespace fs = std::filesystem;

struct SweepEnv {
  test::TempDir d;
  test::FakeRun run{d / "fake"};
  test::FakeSlurm slurm{d / "bin"};
  fs::path a = d / "scen" / "a.yaml", b = d / "scen" / "b.yaml";
  SweepEnv() {
    fs::create_directories(d / "scen");
    write_file_atomic(a, test::tiny_scenario("tiny-a"));
    write_file_atomic(b, test::tiny_scenario("tiny-b"));
  }
  cluster::SweepRequest request(bool slurm = false) const {
    cluster::SweepRequest r;
    r.scenarios = {a.string(), b.string()};
    r.gpu_profiles = {"H200", "B200"};
    r.device = "sim";
    r.out = d / "sweep";
    r.slurm = slurm;
    r.syncscope = run.exe();
    if (slurm) r.tools = this->slurm.tools();
    return r;
  }
};

std::size_t count(const std::vector<std::string>& v, const std::string& x) {
  return static_cast<std::size_t>(std::count(v.begin(), v.end(), x));
}

TEST(SweepPlan, ScenarioTimesTargetTasksWithAStableId) {
  SweepEnv e;
  const auto p = cluster::plan_sweep(e.request());
  ASSERT_EQ(p.tasks.size(), 4u);
  const std::vector<std::string> names = {"a--H200", "a--B200", "b--H200", "b--B200"};
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(p.tasks[i].index, i);
    EXPECT_EQ(p.tasks[i].name, names[i]);
    EXPECT_TRUE(fs::path(p.tasks[i].scenario).is_absolute());
  }
  EXPECT_EQ(p.tasks[1].target.gpu_profile, "B200");
  EXPECT_EQ(p.id.size(), 16u);
  EXPECT_EQ(cluster::plan_sweep(e.request()).id, p.id);
  write_file_atomic(e.b, test::tiny_scenario("tiny-b2"), true);  // an edited scenario is another sweep
  EXPECT_NE(cluster::plan_sweep(e.request()).id, p.id);
  auto r = e.request();
  r.device = "auto";
  EXPECT_NE(cluster::plan_sweep(r).id, cluster::plan_sweep(e.request()).id);
}

TEST(SweepPlan, TargetsPairConstraintsWithProfiles) {
  SweepEnv e;
  auto r = e.request();
  r.constraints = {"h200&nvlink", "b200"};
  const auto p = cluster::plan_sweep(r);
  EXPECT_EQ(p.tasks[0].name, "a--h200_nvlink");
  EXPECT_EQ(p.tasks[0].target.constraint, "h200&nvlink");
  EXPECT_EQ(p.tasks[0].target.gpu_profile, "H200");
  r.gpu_profiles.clear();
  r.constraints = {"h100"};
  EXPECT_EQ(cluster::plan_sweep(r).tasks.size(), 2u);
  r.constraints.clear();
  const auto def = cluster::plan_sweep(r);
  EXPECT_EQ(def.tasks[0].name, "a--default");
}

TEST(SweepPlan, BadInputIsNamed) {
  SweepEnv e;
  auto r = e.request();
  r.constraints = {"h100"};  // 2 profiles, 1 constraint
  EXPECT_THROW(cluster::plan_sweep(r), InputError);
  r = e.request();
  r.gpu_profiles = {"H200", "H200"};
  EXPECT_THROW(cluster::plan_sweep(r), InputError);
  r = e.request();
  r.gpu_profiles = {"NoSuchGPU"};
  EXPECT_THROW(cluster::plan_sweep(r), InputError);
  r = e.request();
  fs::create_directories(e.d / "other");
  write_file_atomic(e.d / "other" / "a.yaml", test::tiny_scenario("x"));
  r.scenarios.push_back((e.d / "other" / "a.yaml").string());
  try {
    cluster::plan_sweep(r);
    FAIL();
  } catch (const InputError& x) {
    EXPECT_NE(std::string(x.what()).find("two scenario files are named 'a'"), std::string::npos) << x.what();
  }
  r = e.request();
  write_file_atomic(e.d / "scen" / "bad.yaml", "name: bad\nmodel: 3\n");
  r.scenarios = {(e.d / "scen" / "bad.yaml").string()};
  EXPECT_THROW(cluster::plan_sweep(r), InputError);
}

TEST(LocalSweep, RunsEveryTaskThenWritesTheMergedReport) {
  SweepEnv e;
  std::ostringstream out;
  EXPECT_EQ(cluster::start_sweep(e.request(), out), 0) << out.str();
  EXPECT_EQ(e.run.runs().size(), 4u);
  const auto st = cluster::sweep_status(e.d / "sweep", {});
  for (const auto& s : st) {
    EXPECT_EQ(s.state, cluster::TaskState::Done) << s.name << ": " << s.reason;
    EXPECT_EQ(s.job, "local");
    EXPECT_EQ(s.files, 2u);
    EXPECT_TRUE(fs::exists(e.d / "sweep" / "tasks" / s.name / "results.json"));
    EXPECT_TRUE(fs::exists(e.d / "sweep" / "logs" / (s.name + ".log")));
  }
  const std::string html = read_file(e.d / "sweep" / "report.html");
  EXPECT_NE(html.find("<h2>Sweep tasks</h2>"), std::string::npos);
  EXPECT_NE(html.find("4 done"), std::string::npos);
  const auto csv = csv_parse(read_file(e.d / "sweep" / "results.csv"), "results.csv");
  ASSERT_GT(csv.size(), 4u);
  EXPECT_EQ(csv[0][0], "task");
  EXPECT_EQ(csv[0][3], "task_state");
  std::set<std::string> tasks;
  for (std::size_t i = 1; i < csv.size(); ++i) {
    tasks.insert(csv[i][0]);
    EXPECT_EQ(csv[i][3], "done") << csv[i][0] << ": " << csv[i][4];
  }
  EXPECT_EQ(tasks.size(), 4u);

  // The same sweep again: nothing to run.
  std::ostringstream again;
  EXPECT_EQ(cluster::start_sweep(e.request(), again), 0);
  EXPECT_EQ(e.run.runs().size(), 4u);
  EXPECT_NE(again.str().find("nothing to run"), std::string::npos) << again.str();
}

TEST(LocalSweep, AFailedTaskIsNamedWithWhyAndRedoneAlone) {
  SweepEnv e;
  e.run.set("fail", "a--B200", "GPU profile B200: out of coffee");
  e.run.set("verdict", "b--H200");  // a missed tolerance is a finished task
  std::ostringstream out;
  EXPECT_EQ(cluster::start_sweep(e.request(), out), 1);
  const auto st = cluster::sweep_status(e.d / "sweep", {});
  EXPECT_EQ(st[1].state, cluster::TaskState::Failed);
  EXPECT_NE(st[1].reason.find("exit status 2: syncscope: error: GPU profile B200: out of coffee"), std::string::npos)
      << st[1].reason;
  EXPECT_EQ(st[2].state, cluster::TaskState::Done);
  EXPECT_NE(st[2].reason.find("misses its tolerance"), std::string::npos);
  const std::string html = read_file(e.d / "sweep" / "report.html");
  EXPECT_NE(html.find("task-not-done"), std::string::npos);
  EXPECT_NE(html.find("out of coffee"), std::string::npos);
  const auto csv = csv_parse(read_file(e.d / "sweep" / "results.csv"), "results.csv");
  bool failed_row = false;
  for (const auto& row : csv)
    if (row[0] == "a--B200") {
      failed_row = true;
      EXPECT_EQ(row[3], "failed");
      EXPECT_NE(row[4].find("out of coffee"), std::string::npos);
    }
  EXPECT_TRUE(failed_row);

  e.run.clear("fail", "a--B200");
  std::ostringstream again;
  EXPECT_EQ(cluster::start_sweep(e.request(), again), 0) << again.str();
  const auto runs = e.run.runs();
  EXPECT_EQ(runs.size(), 5u);
  EXPECT_EQ(count(runs, "a--B200"), 2u);
  EXPECT_EQ(count(runs, "a--H200"), 1u);
  for (const auto& s : cluster::sweep_status(e.d / "sweep", {})) EXPECT_EQ(s.state, cluster::TaskState::Done);
  EXPECT_EQ(read_file(e.d / "sweep" / "report.html").find("task-not-done"), std::string::npos);
}

TEST(LocalSweep, ATaskKilledMidRunLeavesNothingTakenAsComplete) {
  SweepEnv e;
  e.run.set("kill", "b--B200");
  std::ostringstream out;
  EXPECT_EQ(cluster::start_sweep(e.request(), out), 1);
  const auto st = cluster::sweep_status(e.d / "sweep", {});
  EXPECT_EQ(st[3].state, cluster::TaskState::Failed);
  EXPECT_NE(st[3].reason.find("killed by signal 9 (SIGKILL)"), std::string::npos) << st[3].reason;
  EXPECT_TRUE(st[3].partial);
  EXPECT_FALSE(fs::exists(e.d / "sweep" / "tasks" / "b--B200"));
  const auto csv = csv_parse(read_file(e.d / "sweep" / "results.csv"), "results.csv");
  for (const auto& row : csv)
    if (row[0] == "b--B200") {
      EXPECT_EQ(row[3], "failed");
    }
  e.run.clear("kill", "b--B200");
  std::ostringstream again;
  EXPECT_EQ(cluster::start_sweep(e.request(), again), 0);
  const auto st2 = cluster::sweep_status(e.d / "sweep", {});
  EXPECT_EQ(st2[3].state, cluster::TaskState::Done);
  EXPECT_FALSE(st2[3].partial);  // the next attempt removed what the killed one left
}

TEST(LocalSweep, AResultDirectoryNotWrittenByTheTaskFailsItAndStays) {
  SweepEnv e;
  auto r = e.request();
  r.dry_run = true;
  std::ostringstream out;
  EXPECT_EQ(cluster::start_sweep(r, out), 0);
  EXPECT_NE(out.str().find("job sweep-task"), std::string::npos) << out.str();
  EXPECT_TRUE(e.run.runs().empty());
  fs::create_directories(e.d / "sweep" / "tasks" / "a--H200");
  write_file_atomic(e.d / "sweep" / "tasks" / "a--H200" / "mine.txt", "a user's");
  EXPECT_EQ(cluster::start_sweep(e.request(), out), 1);
  const auto st = cluster::sweep_status(e.d / "sweep", {});
  EXPECT_EQ(st[0].state, cluster::TaskState::Failed);
  EXPECT_NE(st[0].reason.find("exists but no status of this sweep says this task wrote it"), std::string::npos);
  EXPECT_EQ(read_file(e.d / "sweep" / "tasks" / "a--H200" / "mine.txt"), "a user's");
}

TEST(SweepDirectory, ADifferentSweepIsRefusedWithoutForceAndForceReplacesOnlyOurs) {
  SweepEnv e;
  std::ostringstream out;
  EXPECT_EQ(cluster::start_sweep(e.request(), out), 0);
  write_file_atomic(e.d / "sweep" / "notes.txt", "the user's own");
  auto other = e.request();
  other.gpu_profiles = {"H100"};
  try {
    cluster::start_sweep(other, out);
    FAIL();
  } catch (const InputError& x) {
    EXPECT_NE(std::string(x.what()).find("holds a different sweep (4 tasks: a--H200, a--B200, b--H200, b--B200)"),
              std::string::npos)
        << x.what();
  }
  other.force = true;
  // A file of the user's inside what --force would remove: refused, named, kept.
  write_file_atomic(e.d / "sweep" / "tasks" / "a--B200" / "my-notes.txt", "mine");
  try {
    cluster::start_sweep(other, out);
    FAIL();
  } catch (const InputError& x) {
    EXPECT_NE(std::string(x.what()).find("tasks/a--B200/my-notes.txt"), std::string::npos) << x.what();
  }
  EXPECT_EQ(read_file(e.d / "sweep" / "tasks" / "a--B200" / "my-notes.txt"), "mine");
  EXPECT_TRUE(fs::exists(e.d / "sweep" / "tasks" / "a--B200" / "results.json"));
  fs::remove(e.d / "sweep" / "tasks" / "a--B200" / "my-notes.txt");
  EXPECT_EQ(cluster::start_sweep(other, out), 0);
  EXPECT_FALSE(fs::exists(e.d / "sweep" / "tasks" / "a--B200"));
  EXPECT_TRUE(fs::exists(e.d / "sweep" / "tasks" / "a--H100" / "results.json"));
  EXPECT_EQ(read_file(e.d / "sweep" / "notes.txt"), "the user's own");

  fs::create_directories(e.d / "user");
  write_file_atomic(e.d / "user" / "data.csv", "1,2");
  auto into_user = e.request();
  into_user.out = e.d / "user";
  into_user.force = true;
  EXPECT_THROW(cluster::start_sweep(into_user, out), InputError);
}

TEST(SlurmSweep, WithoutSbatchIsBadInputButADryRunIsNot) {
  SweepEnv e;
  auto r = e.request(true);
  r.tools = {};
  std::ostringstream out;
  try {
    cluster::start_sweep(r, out);
    FAIL();
  } catch (const InputError& x) {
    EXPECT_NE(std::string(x.what()).find("sbatch is not on PATH"), std::string::npos) << x.what();
  }
  EXPECT_FALSE(fs::exists(e.d / "sweep"));
  r.dry_run = true;
  r.constraints = {"h200", "b200"};
  EXPECT_EQ(cluster::start_sweep(r, out), 0);
  EXPECT_NE(out.str().find("JOB1=$(sbatch --parsable --array=1,3 --constraint=b200 "), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("\"--dependency=afterany:$JOB1:$JOB2\""), std::string::npos) << out.str();
  EXPECT_TRUE(fs::exists(e.d / "sweep" / "slurm" / "task.sh"));
}

TEST(SlurmSweep, OneArrayPerConstraintThenTheReportJobAfterAll) {
  SweepEnv e;
  auto r = e.request(true);
  r.constraints = {"h200", "b200"};
  r.slurm_options = {"gpu", "gpu:1", "01:00:00"};
  std::ostringstream out;
  EXPECT_EQ(cluster::start_sweep(r, out), 0) << out.str();
  const auto calls = e.slurm.calls("sbatch");
  ASSERT_EQ(calls.size(), 3u);
  // Tasks: 0 a--h200, 1 a--b200, 2 b--h200, 3 b--b200; constraints in name order.
  EXPECT_NE(calls[0].find("--array=1,3 --constraint=b200 "), std::string::npos) << calls[0];
  EXPECT_NE(calls[1].find("--array=0,2 --constraint=h200 "), std::string::npos) << calls[1];
  EXPECT_NE(calls[2].find("--dependency=afterany:100:101 "), std::string::npos) << calls[2];
  EXPECT_NE(calls[2].find("slurm/report.sh"), std::string::npos) << calls[2];
  const std::string task = read_file(e.d / "sweep" / "slurm" / "task.sh");
  for (const char* line :
       {"#SBATCH --partition=gpu\n", "#SBATCH --gres=gpu:1\n", "#SBATCH --time=01:00:00\n", "job sweep-task "})
    EXPECT_NE(task.find(line), std::string::npos) << line << "\n" << task;
  EXPECT_EQ(read_file(e.d / "sweep" / "slurm" / "report.sh").find("--gres"), std::string::npos);
  EXPECT_TRUE(e.run.runs().empty());  // nothing ran here
  // Queued: squeue lists them by the sweep's job name.
  const auto plan = cluster::read_plan(e.d / "sweep");
  e.slurm.queue("101|0|RUNNING|None\n101|2|PENDING|Resources\n100|1|PENDING|Priority\n100|3|PENDING|Priority\n");
  const auto st = cluster::sweep_status(e.d / "sweep", e.slurm.tools());
  EXPECT_EQ(st[0].state, cluster::TaskState::Running);
  EXPECT_EQ(st[0].job, "101_0");
  EXPECT_EQ(st[2].state, cluster::TaskState::Queued);
  EXPECT_EQ(st[2].reason, "Resources");
  const auto sq = e.slurm.calls("squeue");
  ASSERT_FALSE(sq.empty());
  EXPECT_NE(sq.back().find("--name=" + plan.job_name()), std::string::npos) << sq.back();
  // Nothing to submit while all are queued or running.
  std::ostringstream again;
  EXPECT_EQ(cluster::start_sweep(r, again), 0);
  EXPECT_EQ(e.slurm.calls("sbatch").size(), 3u);
}

TEST(SlurmSweep, ResubmitsOnlyTasksThatAreMissingFailedOrLost) {
  SweepEnv e;
  auto r = e.request(true);
  std::ostringstream out;
  EXPECT_EQ(cluster::start_sweep(r, out), 0);  // array 100 (0-3), report 101
  // The tasks ran in job 100: task 0 finished, task 1 failed, task 2 is still running,
  // task 3 left the queue without a status (Slurm: cancelled).
  ::setenv("SLURM_ARRAY_JOB_ID", "100", 1);
  ::setenv("SLURM_ARRAY_TASK_ID", "0", 1);
  cluster::run_sweep_task(e.d / "sweep", 0, e.run.exe(), out);
  e.run.set("fail", "a--B200", "boom");
  ::setenv("SLURM_ARRAY_TASK_ID", "1", 1);
  cluster::run_sweep_task(e.d / "sweep", 1, e.run.exe(), out);
  ::unsetenv("SLURM_ARRAY_JOB_ID");
  ::unsetenv("SLURM_ARRAY_TASK_ID");
  EXPECT_EQ(cluster::sweep_status(e.d / "sweep", {})[0].job, "100_0");
  e.slurm.queue("100|2|RUNNING|None\n");
  e.slurm.job("100_3", "CANCELLED", "None", "0:15");
  const auto st = cluster::sweep_status(e.d / "sweep", e.slurm.tools());
  EXPECT_EQ(st[0].state, cluster::TaskState::Done);
  EXPECT_EQ(st[1].state, cluster::TaskState::Failed);
  EXPECT_EQ(st[2].state, cluster::TaskState::Running);
  EXPECT_EQ(st[3].state, cluster::TaskState::Cancelled);
  EXPECT_NE(st[3].reason.find("Slurm: CANCELLED"), std::string::npos) << st[3].reason;
  e.run.clear("fail", "a--B200");
  std::ostringstream again;
  EXPECT_EQ(cluster::start_sweep(r, again), 0) << again.str();
  const auto calls = e.slurm.calls("sbatch");
  ASSERT_EQ(calls.size(), 4u);
  EXPECT_NE(calls[2].find("--array=1,3 "), std::string::npos) << calls[2];
  EXPECT_NE(calls[3].find("--dependency=afterany:102 "), std::string::npos) << calls[3];
  // Task 1's newest attempt (102_1) has not written a status yet: the old failure no longer counts.
  e.slurm.queue("");
  const auto st2 = cluster::sweep_status(e.d / "sweep", e.slurm.tools());
  EXPECT_EQ(st2[1].job, "102_1");
  EXPECT_EQ(st2[1].state, cluster::TaskState::Lost);
}

TEST(SlurmSweep, SbatchErrorsReachTheUser) {
  SweepEnv e;
  write_file_atomic(e.slurm.dir() / "sbatch.fail", "");
  std::ostringstream out;
  try {
    cluster::start_sweep(e.request(true), out);
    FAIL();
  } catch (const Error& x) {
    EXPECT_NE(std::string(x.what()).find("Invalid partition name specified"), std::string::npos) << x.what();
  }
}

}  // namespace
}  // namespace syncscope
