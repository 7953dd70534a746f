// Slurm's command-line clients, as a sweep and a rank analysis use them: submit a batch
// script (sbatch --parsable), list our jobs' array tasks (squeue), ask about one that left
// the queue (scontrol show job: Slurm keeps it MinJobAge seconds, 300 by default). sacct is
// not used: it needs slurmdbd, which many clusters and our tests do not run; the tasks write
// their own status files instead.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace syncscope::cluster {

struct SlurmTools {
  std::filesystem::path sbatch, squeue, scontrol;  // empty: not found
  // Looks them up on $PATH (or `path_list`, ':'-separated).
  static SlurmTools from_path(const char* path_list = nullptr);
};

// Options every job of a sweep or rank analysis gets (empty: Slurm's default).
struct SlurmOptions {
  std::string partition;
  std::string gres;  // e.g. "gpu:1"
  std::string time;  // e.g. "01:00:00"
};

// Checks every value that goes into a batch script or onto sbatch's command line against
// Slurm's own syntax (sbatch(1)): partition names and gres are letters, digits and "._-",
// joined by ',' (and ':' in gres); time is one of sbatch's forms ("MM", "MM:SS",
// "HH:MM:SS", "D-HH", "D-HH:MM", "D-HH:MM:SS", "UNLIMITED"). Nothing else, so no newline
// ends an #SBATCH line and no byte reaches a shell. InputError naming the option
// and the fix.
void validate_slurm_options(const SlurmOptions& options);
// A node feature expression for --constraint: features, digits, "&|,*[]()_.-:", bounded.
void validate_constraint(const std::string& constraint);

// "0-3,5,7-8" for sbatch --array.
std::string array_spec(const std::vector<std::size_t>& indices);

// The sbatch command line for `script` (the program is "sbatch" as typed, not the found
// path, so dry runs print what a user can paste).
std::vector<std::string> sbatch_command(const std::vector<std::string>& options, const std::filesystem::path& script);

// Runs sbatch (the found path) and returns the job id. Throws Error with sbatch's message when
// it fails or prints no job id.
std::string sbatch_submit(const SlurmTools& tools, const std::vector<std::string>& options,
                          const std::filesystem::path& script);

struct QueuedTask {
  std::string job_id;       // the array's job id (%F), or the job's own
  std::int64_t index = -1;  // array task id (%K); -1 for a job that is not an array task
  std::string state;        // PENDING, RUNNING, COMPLETING, ...
  std::string reason;       // why pending ("Resources", "Dependency", "None")
};

// Jobs named `job_name` still in the queue, one line per array task. nullopt when squeue
// could not be asked (not installed, controller down): callers then say the state is unknown.
std::optional<std::vector<QueuedTask>> squeue_by_name(const SlurmTools& tools, const std::string& job_name);
// Parses squeue --noheader --array --format=%F|%K|%T|%r output (exposed for tests).
std::vector<QueuedTask> parse_squeue(const std::string& text);

struct JobInfo {
  std::string state;      // JobState: COMPLETED, FAILED, CANCELLED, TIMEOUT, NODE_FAIL, OUT_OF_MEMORY, ...
  std::string reason;     // Reason
  std::string exit_code;  // ExitCode "2:0" (status:signal)
};
// scontrol -o show job ID (e.g. "123_4"); nullopt when Slurm no longer knows the job.
std::optional<JobInfo> scontrol_job(const SlurmTools& tools, const std::string& job_id);
std::optional<JobInfo> parse_scontrol_job(const std::string& text);

}  // namespace syncscope::cluster
