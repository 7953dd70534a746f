// `syncscope sweep`: scenarios x GPU targets, one `syncscope run` each, on Slurm (job
// arrays and a dependent report job) or here one after another; `sweep --status DIR`.
// And the hidden `syncscope job ...` commands the batch scripts run. The logic is in
// cluster/ (sweep.hpp, rank_jobs.hpp); this file parses options.
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>

#include "commands.hpp"
#include "option_bounds.hpp"
#include "syncscope/cluster/rank_jobs.hpp"
#include "syncscope/cluster/sweep.hpp"
#include "syncscope/core/error.hpp"

namespace syncscope::cli {

namespace fs = std::filesystem;

std::filesystem::path self_executable() {
  std::error_code ec;
  fs::path p = fs::read_symlink("/proc/self/exe", ec);
  if (ec || p.empty()) throw Error("cannot find this executable (/proc/self/exe): " + ec.message());
  return p;
}

namespace {

struct SweepArgs {
  std::vector<std::string> scenarios;
  std::vector<std::string> gpu_profiles;
  std::vector<std::string> constraints;
  std::string device = "auto";
  std::string out;
  std::string status;
  bool slurm = false;
  bool dry_run = false;
  bool force = false;
  std::string partition, gres, time;
};

}  // namespace

void add_sweep_command(CLI::App& app, Context& ctx) {
  auto a = std::make_shared<SweepArgs>();
  auto* cmd = app.add_subcommand(
      "sweep",
      "Run every scenario on every GPU target, one `syncscope run` per pair, each into DIR/tasks/<scenario>--<target> "
      "(atomically), then merge them into DIR/report.html and DIR/results.csv, naming tasks that failed and why. "
      "With --slurm as job arrays (one per --constraint) and a dependent report job; without, here, one after "
      "another, into the same layout. Run it again to redo only missing or failed tasks.");
  cmd->add_option("scenarios", a->scenarios, "Scenario files (scenarios/*.yaml)")->check(CLI::ExistingFile);
  cmd->add_option("--gpu-profile", a->gpu_profiles,
                  "GPU profiles, one target each (shipped names such as H200, B200, or files): `run --gpu-profile`")
      ->expected(1, -1)
      ->take_all();
  cmd->add_option("--constraint", a->constraints,
                  "Slurm node features, one target each (e.g. h100 h200); with --gpu-profile, as many, paired in order")
      ->expected(1, -1)
      ->take_all();
  cmd->add_option("--device", a->device, "`run --device` for every task: auto, cuda or sim")
      ->check(CLI::IsMember({"auto", "cuda", "sim"}))
      ->capture_default_str();
  cmd->add_option("--out", a->out, "The sweep's directory (new, empty, or this same sweep's to resume)");
  cmd->add_option("--status", a->status,
                  "Show the state of each task of the sweep in this directory, and what it wrote")
      ->check(CLI::ExistingDirectory);
  cmd->add_flag("--slurm", a->slurm, "Submit with sbatch (one job array per constraint) instead of running here");
  cmd->add_option("--partition", a->partition, "Slurm partition (default: the cluster's)");
  cmd->add_option("--gres", a->gres, "Slurm generic resources per task, e.g. gpu:1");
  cmd->add_option("--time", a->time, "Slurm time limit per task, e.g. 01:00:00 (default: the partition's)");
  cmd->add_flag("--dry-run", a->dry_run, "Write DIR's plan and batch scripts and print the commands; run nothing");
  cmd->add_flag("--force", a->force, "Replace a different sweep in --out (only what that sweep wrote)");
  cmd->callback([a, cmd, &ctx] {
    const auto tools = cluster::SlurmTools::from_path();
    if (!a->status.empty()) {
      SYNCSCOPE_INPUT_ERROR_IF(!a->scenarios.empty() || !a->out.empty(),
                               "sweep --status DIR shows a sweep; leave out scenarios and --out");
      const auto plan = cluster::read_plan(a->status);
      std::cout << cluster::status_table(plan, cluster::sweep_status(a->status, tools));
      ctx.exit_code = 0;
      return;
    }
    SYNCSCOPE_INPUT_ERROR_IF(a->scenarios.empty(), "sweep: name at least one scenario file (or --status DIR)");
    SYNCSCOPE_INPUT_ERROR_IF(a->out.empty(), "sweep: --out DIR is required");
    for (const char* name : {"--partition", "--gres", "--time"})
      SYNCSCOPE_INPUT_ERROR_IF(!a->slurm && cmd->count(name) > 0, std::string("sweep: ") + name + " goes with --slurm");
    if (!a->slurm && !a->constraints.empty())
      std::fprintf(stderr, "syncscope sweep: --constraint names Slurm node features; here it only names the targets\n");
    cluster::SweepRequest r;
    r.scenarios = a->scenarios;
    r.gpu_profiles = a->gpu_profiles;
    r.constraints = a->constraints;
    r.device = a->device;
    r.out = a->out;
    r.slurm = a->slurm;
    r.dry_run = a->dry_run;
    r.force = a->force;
    r.slurm_options = {a->partition, a->gres, a->time};
    r.syncscope = self_executable();
    r.tools = tools;
    ctx.exit_code = cluster::start_sweep(r, std::cout);
  });
}

void add_job_command(CLI::App& app, Context& ctx) {
  // What the generated batch scripts run; not for people (hidden from --help).
  auto* job = app.add_subcommand("job", "Internal: one task of a sweep or rank analysis job array");
  job->group("");
  job->require_subcommand(1);
  auto dir = std::make_shared<std::string>();
  auto index = std::make_shared<std::size_t>(0);
  auto* task = job->add_subcommand("sweep-task", "Run one task of a sweep");
  task->add_option("dir", *dir)->required();
  // Checked as digits: CLI11 would read "-1" into a size_t as 18446744073709551615.
  task->add_option("index", *index)->required()->check(index_rule(1'000'000'000));
  // How long a task waits for an exclusive writer of DIR (a `sweep` planning or submitting)
  // before it is refused naming it; an hour at most.
  auto lock_wait = std::make_shared<int>(60);
  task->add_option("--lock-wait", *lock_wait, "Seconds to wait for DIR's writer (default 60)")
      ->check(CLI::Range(0, 3600));
  task->callback([dir, index, lock_wait, &ctx] {
    // The task runs this very executable's `run`, never a program named in sweep.json.
    ctx.exit_code = cluster::run_sweep_task(*dir, *index, self_executable(), std::cout, *lock_wait);
  });
  auto* report = job->add_subcommand("sweep-report", "Write a sweep's merged report");
  report->add_option("dir", *dir)->required();
  report->callback([dir, &ctx] {
    // DIR's lock, exclusively, as `sweep` takes it (core/dir_lock.hpp).
    cluster::write_sweep_report_locked(*dir, cluster::SlurmTools::from_path(), std::cout);
    ctx.exit_code = 0;
  });
  auto* part = job->add_subcommand("rank-part", "Analyze one part of a rank analysis");
  part->add_option("dir", *dir)->required();
  part->add_option("index", *index)->required()->check(index_rule(1'000'000'000));
  part->add_option("--lock-wait", *lock_wait, "Seconds to wait for DIR's writer (default 60)")
      ->check(CLI::Range(0, 3600));
  part->callback([dir, index, lock_wait, &ctx] {
    cluster::run_rank_part_locked(*dir, *index, std::cout, *lock_wait);
    ctx.exit_code = 0;
  });
  auto* merge = job->add_subcommand("rank-merge", "Merge the parts of a rank analysis");
  merge->add_option("dir", *dir)->required();
  merge->callback([dir, &ctx] {
    cluster::write_rank_summary_locked(*dir, std::cout);
    ctx.exit_code = 0;
  });
}

}  // namespace syncscope::cli
