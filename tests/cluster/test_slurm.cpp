// cluster/slurm: what we send to sbatch and how we read squeue and scontrol (formats from
// their man pages, Slurm 22.05: squeue --format %F base job id, %K array index, %T state,
// %r reason; scontrol -o show job prints one line of Key=Value pairs).
#include <gtest/gtest.h>

#include "fake_slurm.hpp"
#include "syncscope/cluster/slurm.hpp"
#include "syncscope/core/error.hpp"
#include "test_paths.hpp"

namespace syncscope::cluster {
namespace {

// What goes into a batch script is Slurm's syntax and nothing else.
TEST(Slurm, OptionsAreSlurmsSyntaxOnly) {
  auto bad = [](SlurmOptions o) {
    try {
      validate_slurm_options(o);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(bad({"gpu,debug", "gpu:h100:2,shard:1", "1-00:30:00"}), "");
  for (const char* t : {"30", "30:00", "01:00:00", "2-12", "2-12:30", "UNLIMITED"})
    EXPECT_EQ(bad({"", "", t}), "") << t;
  EXPECT_NE(bad({"gpu\ntouch x", "", ""}).find("--partition"), std::string::npos);
  EXPECT_NE(bad({"gpu x", "", ""}).find("--partition"), std::string::npos);
  EXPECT_NE(bad({"", "gpu:1;id", ""}).find("--gres"), std::string::npos);
  EXPECT_NE(bad({"", "", "1:00:00\n"}).find("--time"), std::string::npos);
  EXPECT_NE(bad({"", "", "$(id)"}).find("--time"), std::string::npos);
  EXPECT_NO_THROW(validate_constraint("h100|h200&[ib*2]"));
  EXPECT_THROW(validate_constraint("a`b`"), InputError);
  EXPECT_THROW(validate_constraint(std::string(300, 'a')), InputError);
}

TEST(Slurm, ArraySpecCompressesRuns) {
  EXPECT_EQ(array_spec({0, 1, 2, 3}), "0-3");
  EXPECT_EQ(array_spec({5, 0, 2, 3, 7, 8, 2}), "0,2-3,5,7-8");
  EXPECT_EQ(array_spec({4}), "4");
  EXPECT_EQ(array_spec({}), "");
}

TEST(Slurm, ParsesSqueueLines) {
  const auto q = parse_squeue("1234|0|RUNNING|None\n1234|7|PENDING|Resources\n99|N/A|PENDING|Dependency\n\nbad line\n");
  ASSERT_EQ(q.size(), 3u);
  EXPECT_EQ(q[0].job_id, "1234");
  EXPECT_EQ(q[0].index, 0);
  EXPECT_EQ(q[0].state, "RUNNING");
  EXPECT_EQ(q[1].index, 7);
  EXPECT_EQ(q[1].reason, "Resources");
  EXPECT_EQ(q[2].index, -1);  // not an array task
}

TEST(Slurm, ParsesScontrolShowJob) {
  const auto j = parse_scontrol_job(
      "JobId=1240 ArrayJobId=1234 ArrayTaskId=6 JobName=syncscope-sweep-0a1b2c3d UserId=root(0) GroupId=root(0) "
      "MCS_label=N/A Priority=1 Nice=0 Account=(null) QOS=(null) JobState=FAILED Reason=NonZeroExitCode "
      "Dependency=(null) Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=2:0 RunTime=00:00:03\n");
  ASSERT_TRUE(j);
  EXPECT_EQ(j->state, "FAILED");
  EXPECT_EQ(j->reason, "NonZeroExitCode");
  EXPECT_EQ(j->exit_code, "2:0");
  EXPECT_FALSE(parse_scontrol_job("slurm_load_jobs error: Invalid job id specified\n"));
}

TEST(Slurm, SubmitReturnsTheJobIdAndPassesOptionsThrough) {
  test::TempDir d;
  test::FakeSlurm s(d / "bin");
  EXPECT_EQ(sbatch_submit(s.tools(), {"--array=0-3", "--constraint=h100"}, "/x/task.sh"), "100");
  EXPECT_EQ(sbatch_submit(s.tools(), {}, "/x/report.sh"), "101");
  const auto calls = s.calls("sbatch");
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0], "sbatch --parsable --array=0-3 --constraint=h100 /x/task.sh");
  EXPECT_EQ(sbatch_command({"--x"}, "t.sh"), (std::vector<std::string>{"sbatch", "--parsable", "--x", "t.sh"}));
}

TEST(Slurm, SubmitFailuresCarrySbatchsMessage) {
  test::TempDir d;
  test::FakeSlurm s(d / "bin");
  test::write_executable(d / "bin" / "sbatch", "#!/bin/sh\necho 'Submitted batch job 5'\n");  // not --parsable output
  EXPECT_THROW(sbatch_submit(s.tools(), {}, "t.sh"), Error);
  SlurmTools none;
  EXPECT_THROW(sbatch_submit(none, {}, "t.sh"), Error);
}

TEST(Slurm, ToolsAreFoundOnPath) {
  test::TempDir d;
  test::FakeSlurm s(d / "bin");
  const auto t = SlurmTools::from_path((d / "bin").c_str());
  EXPECT_EQ(t.sbatch, d / "bin" / "sbatch");
  EXPECT_EQ(t.squeue, d / "bin" / "squeue");
  const auto none = SlurmTools::from_path((d / "nothing").c_str());
  EXPECT_TRUE(none.sbatch.empty());
  EXPECT_FALSE(squeue_by_name(none, "x"));
  EXPECT_FALSE(scontrol_job(none, "1"));
}

}  // namespace
}  // namespace syncscope::cluster
