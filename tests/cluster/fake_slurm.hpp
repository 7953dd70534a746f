// Fake Slurm clients for unit tests: shell scripts in a temp directory that log their
// arguments (one line per call in calls.log) and answer from files the test writes:
//   sbatch    prints the next job id (100, 101, ...)
//   squeue    prints squeue.txt (lines "JOB|INDEX|STATE|REASON"); exits 1 when squeue.fail exists
//   scontrol  prints scontrol-<JOBID>.txt, or fails like Slurm does for a job it forgot
#pragma once

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "syncscope/cluster/slurm.hpp"
#include "syncscope/core/file_io.hpp"

namespace syncscope::test {

inline void write_executable(const std::filesystem::path& p, const std::string& text) {
  write_file_atomic(p, text, true);
  ::chmod(p.c_str(), 0755);
}

class FakeSlurm {
 public:
  explicit FakeSlurm(std::filesystem::path dir) : dir_(std::move(dir)) {
    std::filesystem::create_directories(dir_);
    const std::string d = dir_.string();
    write_executable(dir_ / "sbatch",
                     "#!/bin/sh\n"
                     "echo \"sbatch $*\" >> '" +
                         d +
                         "/calls.log'\n"
                         "[ -e '" +
                         d +
                         "/sbatch.fail' ] && { echo 'sbatch: error: Batch job submission failed: Invalid partition "
                         "name specified' >&2; exit 1; }\n"
                         "n=$(cat '" +
                         d +
                         "/next' 2>/dev/null || echo 100)\n"
                         "echo $((n+1)) > '" +
                         d +
                         "/next'\n"
                         "echo \"$n\"\n");
    write_executable(dir_ / "squeue",
                     "#!/bin/sh\n"
                     "echo \"squeue $*\" >> '" +
                         d +
                         "/calls.log'\n"
                         "[ -e '" +
                         d +
                         "/squeue.fail' ] && exit 1\n"
                         "cat '" +
                         d +
                         "/squeue.txt' 2>/dev/null\n"
                         "exit 0\n");
    write_executable(dir_ / "scontrol",
                     "#!/bin/sh\n"
                     "echo \"scontrol $*\" >> '" +
                         d +
                         "/calls.log'\n"
                         "f='" +
                         d +
                         "/scontrol-'\"$4\"'.txt'\n"
                         "[ -e \"$f\" ] || { echo 'slurm_load_jobs error: Invalid job id specified' >&2; exit 1; }\n"
                         "cat \"$f\"\n");
  }
  cluster::SlurmTools tools() const {
    cluster::SlurmTools t;
    t.sbatch = dir_ / "sbatch";
    t.squeue = dir_ / "squeue";
    t.scontrol = dir_ / "scontrol";
    return t;
  }
  void queue(const std::string& lines) const { write_file_atomic(dir_ / "squeue.txt", lines, true); }
  void job(const std::string& id, const std::string& state, const std::string& reason = "None",
           const std::string& exit_code = "0:0") const {
    write_file_atomic(dir_ / ("scontrol-" + id + ".txt"),
                      "JobId=1 ArrayJobId=1 JobName=x UserId=root(0) JobState=" + state + " Reason=" + reason +
                          " Dependency=(null) ExitCode=" + exit_code + " RunTime=00:00:01\n",
                      true);
  }
  std::vector<std::string> calls(const std::string& prefix = "") const {
    std::vector<std::string> out;
    std::ifstream in(dir_ / "calls.log");
    std::string line;
    while (std::getline(in, line))
      if (line.rfind(prefix, 0) == 0) out.push_back(line);
    return out;
  }
  const std::filesystem::path& dir() const { return dir_; }

 private:
  std::filesystem::path dir_;
};

}  // namespace syncscope::test
