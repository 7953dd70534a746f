// syncscope analyze TRACE: sync points, bubbles, copy/compute overlap and GPU busy time,
// for the whole trace and per step and layer range.
// syncscope analyze TRACE... | DIR: one trace per rank, a per-rank table and a cross-rank
// summary (cluster/rank_traces.hpp); with --slurm (or --out) as a job array (rank_jobs.hpp).
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <utility>

#include "commands.hpp"
#include "option_bounds.hpp"
#include "syncscope/analysis/analysis.hpp"
#include "syncscope/api/analyze.hpp"
#include "syncscope/api/predict.hpp"
#include "syncscope/cluster/rank_jobs.hpp"
#include "syncscope/cluster/rank_traces.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/core/file_io.hpp"
#include "syncscope/core/output_policy.hpp"
#include "syncscope/core/text.hpp"
#include "syncscope/io/trace_io.hpp"

namespace syncscope::cli {

namespace {

struct AnalyzeOptions {
  std::vector<std::string> traces;
  std::string step_range = api::kDefaultStepRange;
  std::string layer_range;
  std::string format = "table";
  std::string output;
  bool force = false;
  std::size_t max_sync_points = api::kDefaultMaxSyncPoints;
  std::int64_t pid = -1;
  std::size_t replay_causes = api::kDefaultReplayCauses;
  std::uint64_t queue_full = api::kDefaultQueueFull;
  std::size_t jobs = 0;
  // Many ranks as a job array.
  bool slurm = false;
  std::string out;
  std::size_t ranks_per_task = 4;
  std::string partition;
  std::string time;
  bool dry_run = false;
  bool critical_path = false;
  KernelSequenceOptions sequences;  // frequent kernel sequences (syncscope/analysis/kernel_sequences.hpp)
};

void emit(const AnalyzeOptions& o, const std::string& text) { emit_output(o.output, o.force, text); }

void analyze_one(const AnalyzeOptions& o, bool pid_given) {
  const std::string& path = o.traces.front();
  api::AnalyzeRequest req;
  req.step_range = o.step_range;
  req.layer_range = o.layer_range;
  if (pid_given) req.pid = o.pid;
  req.replay_causes = o.replay_causes;
  req.critical_path = o.critical_path;
  req.queue_full = o.queue_full;
  req.sequences = o.sequences;
  Trace trace = read_trace(path);
  // One Nsight Systems report of a torchrun job holds every rank's process: the per-rank table,
  // as for a directory of rank traces. --pid and --critical-path ask for one trace's view.
  if (!pid_given && !o.critical_path && api::holds_several_ranks(trace)) {
    const RankAnalysis a = api::analyze_processes(trace, path, req);
    if (!(o.format == "table" && o.output.empty()))
      for (const auto& w : a.warnings) std::fprintf(stderr, "syncscope: warning: %s\n", printable(w).c_str());
    emit(o, api::render_rank_analysis(a, o.format));
    return;
  }
  const api::AnalyzeOutcome outcome = api::analyze_trace(std::move(trace), path, req);
  const std::string text = api::render_analysis(outcome, o.format, o.max_sync_points);
  // The table lists every warning itself; other outputs are for programs, so people
  // see the warnings on stderr. Dropped records always go to stderr: they make every
  // count a lower bound.
  const bool table_on_stdout = o.format == "table" && o.output.empty();
  for (const auto& w : outcome.result.warnings)
    if (!table_on_stdout || (outcome.counts.dropped_records > 0 && w.find("records were dropped") != std::string::npos))
      std::fprintf(stderr, "syncscope: warning: %s\n", printable(w).c_str());
  emit(o, text);
}

void analyze_ranks_here(const AnalyzeOptions& o) {
  api::AnalyzeRequest req;
  req.step_range = o.step_range;
  req.layer_range = o.layer_range;
  // People watching a terminal see each rank counted as it finishes (1,000 ranks take a while).
  cluster::RankRowSink progress;
  if (::isatty(STDERR_FILENO) == 1)
    progress = [](const RankRow& row, std::size_t done, std::size_t total) {
      std::fprintf(stderr, "\rsyncscope: %zu of %zu rank traces analyzed (last: rank %lld)%s", done, total,
                   static_cast<long long>(row.rank), done == total ? "\n" : "");
    };
  const RankAnalysis a = api::analyze_rank_traces(o.traces, req, o.jobs, api::Spelling::Cli, progress);
  const std::string text = api::render_rank_analysis(a, o.format);
  if (!(o.format == "table" && o.output.empty()))
    for (const auto* part : {&a}) {
      for (const auto& w : part->warnings) std::fprintf(stderr, "syncscope: warning: %s\n", printable(w).c_str());
      for (const auto& job : part->jobs)
        for (const auto& w : job.warnings) std::fprintf(stderr, "syncscope: warning: %s\n", printable(w).c_str());
    }
  emit(o, text);
}

}  // namespace

void add_analyze_command(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<AnalyzeOptions>();
  auto* cmd = app.add_subcommand(
      "analyze",
      "Count host-device sync points (with their cause, blocked time and GPU bubble), copy/compute overlap, GPU "
      "busy time and compute vs communication (NCCL) kernel time in a trace, for the whole trace and per step and "
      "layer range. Several traces or a directory: one trace per rank of a distributed job, a per-rank table and a "
      "cross-rank summary (min, median, max per step; the rank that stands out).");
  cmd->add_option("traces", o->traces,
                  "Trace to analyze: torch.profiler (Kineto) or syncscope Chrome JSON (.json or .json.gz). Several "
                  "traces, or a directory of them (*.json, *.json.gz): one per rank, the rank from "
                  "distributedInfo.rank, else from 'rank<N>' in the file name. One file holding several ranks' "
                  "processes (an Nsight Systems report of a torchrun job): each process with GPU work is a rank")
      ->required();
  cmd->add_option("--step-range", o->step_range,
                  "Glob over host range names (user annotations, NVTX ranges) that delimit steps; '' for none")
      ->capture_default_str();
  cmd->add_option("--layer-range", o->layer_range,
                  "Glob over host range names that delimit layers (e.g. 'layer_*'); '' for none")
      ->capture_default_str();
  cmd->add_option("--format", o->format, "Output format: table (for people), json or csv (schema_version'd)")
      ->check(CLI::IsMember({"table", "json", "csv"}))
      ->capture_default_str();
  cmd->add_option("--output", o->output, "Write to this file (atomically) instead of stdout; gzip when it ends in .gz")
      ->capture_default_str();
  cmd->add_flag("--force", o->force, "Replace --output (or an earlier rank analysis in --out) when it exists");
  cmd->add_option("--max-sync-points", o->max_sync_points,
                  "JSON: list at most this many individual sync points (sync_points_truncated says when more "
                  "exist)")
      ->capture_default_str();
  cmd->add_option("--replay-causes", o->replay_causes,
                  "Replay the trace without each of the N worst causes' syncs to say what removing them saves per "
                  "step (0: skip the replays, e.g. on a very large trace)")
      ->check(int_in(api::kReplayCauses))
      ->capture_default_str();
  cmd->add_option("--queue-full", o->queue_full,
                  "Time blocked on a full launch queue: a stream's queue counts as full while at least N of its "
                  "launched activities have not started (HTA's max_queue_length)")
      ->check(int_in(api::kQueueFull))
      ->capture_default_str();
  cmd->add_flag("--critical-path", o->critical_path,
                "Add each step's critical path through host and GPU (the trace replayed as a dependency graph; "
                "docs/analysis.md): its length and host, GPU, launch and sync-wait shares, and its longest runs");
  cmd->add_option("--sequence-op", o->sequences.op,
                  "Frequent kernel sequences: under host ops whose name contains this text, the shallowest such "
                  "ops (HTA's operator_name); default: under every top-level cpu_op");
  cmd->add_option("--sequence-min-len", o->sequences.min_pattern_len,
                  "Frequent kernel sequences: only ops that launched at least this many kernels (HTA's "
                  "min_pattern_len)")
      ->check(int_in(api::kSequenceMinLen))
      ->capture_default_str();
  cmd->add_option("--sequence-top", o->sequences.top_k,
                  "Frequent kernel sequences: list the N most frequent (HTA's top_k; the table shows 3)")
      ->check(int_in(api::kSequenceTop))
      ->capture_default_str();
  auto* pid_opt =
      cmd->add_option("--pid", o->pid, "Only count host threads of this process id (default: all processes)");
  cmd->add_option("--jobs", o->jobs, "Many ranks: traces read at once (default, 0: one per core)")
      ->check(int_in(api::kJobs));
  auto* grp = cmd->add_option_group("many ranks as a job array");
  grp->add_flag("--slurm", o->slurm,
                "Analyze the rank traces as a Slurm job array (sbatch), merged by a dependent job into OUT/summary.*");
  grp->add_option("--out", o->out,
                  "The job array's directory: rank_job.json, parts/, slurm/, summary.json/.csv/.txt. Without "
                  "--slurm the tasks run here, one after another, into the same layout");
  grp->add_option("--ranks-per-task", o->ranks_per_task, "Rank traces per array task")
      ->check(CLI::Range(std::size_t{1}, std::size_t{100000}))
      ->capture_default_str();
  grp->add_option("--partition", o->partition, "Slurm partition (default: the cluster's)");
  grp->add_option("--time", o->time, "Slurm time limit per task, e.g. 00:30:00 (default: the partition's)");
  grp->add_flag("--dry-run", o->dry_run,
                "Write the layout and batch scripts and print the sbatch lines; submit nothing");

  cmd->callback([o, pid_opt, cmd, &ctx] {
    namespace fs = std::filesystem;
    std::error_code ec;
    const bool many = o->traces.size() > 1 || fs::is_directory(o->traces.front(), ec);
    const bool job_array = o->slurm || !o->out.empty();
    SYNCSCOPE_INPUT_ERROR_IF(o->slurm && o->out.empty(),
                             "analyze --slurm: --out DIR is required (where the job "
                             "array writes its parts and the merged summary)");
    for (const char* name : {"--ranks-per-task", "--partition", "--time", "--dry-run"})
      SYNCSCOPE_INPUT_ERROR_IF(!job_array && cmd->count(name) > 0,
                               std::string("analyze: ") + name + " goes with --slurm or --out (the job array layout)");
    SYNCSCOPE_INPUT_ERROR_IF(job_array && !o->output.empty(),
                             "analyze: --output writes one file; with --slurm/--out the summary goes to OUT/summary.*");
    SYNCSCOPE_INPUT_ERROR_IF((many || job_array) && pid_opt->count() > 0,
                             "analyze: --pid picks one process of one trace; ranks are different processes: leave it "
                             "out with several traces");
    SYNCSCOPE_INPUT_ERROR_IF(
        (many || job_array) && o->critical_path,
        "analyze: --critical-path follows the steps of one trace: leave it out with several traces");
    // Refuse before spending minutes on a 1 GB trace (core/output_policy.hpp).
    if (!o->output.empty()) (void)plan_output_file(o->output, o->force);

    if (job_array) {
      cluster::RankJobRequest r;
      r.inputs = o->traces;
      r.step_glob = o->step_range;
      r.layer_glob = o->layer_range;
      r.ranks_per_task = o->ranks_per_task;
      r.out = o->out;
      r.slurm = o->slurm;
      r.dry_run = o->dry_run;
      r.force = o->force;
      r.slurm_options.partition = o->partition;
      r.slurm_options.time = o->time;
      r.syncscope = self_executable();
      r.tools = cluster::SlurmTools::from_path();
      ctx.exit_code = cluster::start_rank_job(r, std::cout);
      return;
    }
    if (many) analyze_ranks_here(*o);
    else analyze_one(*o, pid_opt->count() > 0);
    ctx.exit_code = 0;
  });
}

}  // namespace syncscope::cli
