// `syncscope sweep`: every scenario on every GPU target, one task each, run by Slurm as job
// arrays or locally one after another, with one directory layout either way:
//
//   DIR/sweep.json              the sweep: its tasks (scenario x GPU target), what identifies it
//   DIR/tasks/NAME/             `syncscope run`'s results directory (written atomically by run)
//   DIR/status/NAME.json        the task's state, written atomically by the task itself
//   DIR/logs/NAME.log           `syncscope run`'s output
//   DIR/slurm/                  the batch scripts, jobs.json (what was submitted), Slurm's logs
//   DIR/report.html, DIR/results.csv   every finished task merged; failed ones named, and why
//
// A task is done when its status says so and tasks/NAME/results.json exists: `run` publishes
// its directory by one rename at the end, so a task killed mid-run leaves only a
// NAME.partial-* directory, which nothing reads (the next attempt removes it). Re-running
// the same sweep submits only the tasks that are missing, failed, cancelled or lost.
//
// A task runs `syncscope run` as a child process, not pipeline::run in this process: when
// the run crashes, is killed for memory or gets Slurm's SIGTERM (passed on), the task
// still writes its status with the reason, and a measured run's LibTorch/CUDA stay out of
// the process that keeps the books.
//
// Slurm gives all tasks of one job array the same options, so a sweep submits one array per
// distinct --constraint (one in all without constraints); a final job depending on all of
// them (--dependency=afterany) writes the report. Task states come from the status files,
// squeue while a task is queued or running, and scontrol for one that left the queue
// without writing its end (cancelled while pending, killed, timed out). sacct is not used:
// it needs slurmdbd.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include "syncscope/cluster/slurm.hpp"

namespace syncscope::cluster {

inline constexpr int kSweepSchemaVersion = 1;

// One point on the GPU axis: a node constraint (Slurm), a GPU profile (`run --gpu-profile`),
// or both, paired.
struct SweepTarget {
  std::string label;  // names the task's directory: the constraint, else the profile, else "default"
  std::string constraint;
  std::string gpu_profile;
};

struct SweepTask {
  std::size_t index = 0;      // the array task id
  std::string name;           // "<scenario file stem>--<target label>"
  std::string scenario;       // absolute path of the scenario file
  std::string scenario_hash;  // FNV-1a 64 of its content, hex: an edited scenario is another sweep
  SweepTarget target;
};

struct SweepRequest {
  std::vector<std::string> scenarios;
  std::vector<std::string> gpu_profiles;  // may be empty
  std::vector<std::string> constraints;   // may be empty; with profiles: as many, paired
  std::string device = "auto";            // run --device
  std::filesystem::path out;
  bool slurm = false;
  bool dry_run = false;
  bool force = false;
  SlurmOptions slurm_options;
  std::filesystem::path syncscope;  // the executable the tasks run (absolute)
  SlurmTools tools;
};

struct SweepPlan {
  int schema_version = kSweepSchemaVersion;
  std::string id;  // 16 hex digits over what identifies the sweep (tasks, scenarios' content, device)
  std::string device;
  std::string syncscope;  // who wrote the plan, for people; never executed
  std::string created_utc;
  std::vector<SweepTask> tasks;
  std::string job_name() const { return "syncscope-sweep-" + id.substr(0, 8); }
};

// Checks the scenarios (loaded: bad ones are InputError with file:line:column) and GPU
// profiles, and lists the tasks: scenario-major, targets in the order given.
SweepPlan plan_sweep(const SweepRequest& request);
std::string plan_to_json(const SweepPlan& plan);
SweepPlan read_plan(const std::filesystem::path& dir);  // DIR/sweep.json; InputError when absent or bad

enum class TaskState : std::uint8_t { Missing, Queued, Running, Done, Failed, Cancelled, Lost };
std::string_view state_name(TaskState s);  // "missing", "queued", ...

struct TaskStatus {
  std::size_t index = 0;
  std::string name;
  TaskState state = TaskState::Missing;
  std::string reason;  // why failed/cancelled/lost/queued; the verdict when done
  std::string job;     // "123_4", "local", "" when never started
  std::string host;
  std::string started_utc, ended_utc;
  std::uint64_t files = 0, bytes = 0;  // what tasks/NAME holds
  bool partial = false;                // a NAME.partial-* directory is there (a run cut short)
};

// Each task's state (see the header comment). Asks squeue/scontrol only when the sweep was
// submitted to Slurm and they are on PATH.
std::vector<TaskStatus> sweep_status(const std::filesystem::path& dir, const SlurmTools& tools);
std::string status_table(const SweepPlan& plan, const std::vector<TaskStatus>& status);

// The `sweep` command: plan, claim or resume DIR, run or submit the tasks that need it.
// Returns the exit status: 0 when everything asked for was done or submitted, 1 when a
// local task failed.
int start_sweep(const SweepRequest& request, std::ostream& out);

// One task, as the job array (or the local loop) runs it: `syncscope run` is `syncscope`
// (the executable running now, or one the caller names), never the path sweep.json
// records. Returns 0 when done. Holds DIR's lock shared (core/dir_lock.hpp): an exclusive
// writer is waited for up to `lock_wait_s` seconds, then refused naming its pid.
int run_sweep_task(const std::filesystem::path& dir, std::size_t index, const std::filesystem::path& syncscope,
                   std::ostream& out, int lock_wait_s = 60);

// DIR/report.html and DIR/results.csv over the finished tasks, naming the others and why.
void write_sweep_report(const std::filesystem::path& dir, const SlurmTools& tools, std::ostream& out);

// `job sweep-report DIR`: write_sweep_report holding DIR's lock exclusively (a second writer
// is refused naming its pid; a stale lock of a dead one is taken over, and said). Not for
// callers that hold the lock already (start_sweep): a second flock in one process blocks.
void write_sweep_report_locked(const std::filesystem::path& dir, const SlurmTools& tools, std::ostream& out);

}  // namespace syncscope::cluster
