// syncscope analyze TRACE: sync points, bubbles, copy/compute overlap and GPU busy time,
// for the whole trace and per step and layer range.
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <set>
#include <sstream>

#include "commands.hpp"
#include "syncscope/analysis/analysis.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/core/file_io.hpp"
#include "syncscope/core/output_policy.hpp"
#include "syncscope/io/trace_io.hpp"
#include "syncscope/reports/analysis_printers.hpp"

namespace syncscope::cli {

namespace {

struct AnalyzeOptions {
  std::string trace;
  std::string step_range = "ProfilerStep#*";
  std::string layer_range;
  std::string format = "table";
  std::string output;
  bool force = false;
  std::size_t max_sync_points = 10000;
  std::int64_t pid = -1;
};

}  // namespace

void add_analyze_command(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<AnalyzeOptions>();
  auto* cmd = app.add_subcommand(
      "analyze",
      "Count host-device sync points (with their cause, blocked time and GPU bubble), copy/compute overlap and GPU "
      "busy time in a trace, for the whole trace and per step and layer range.");
  cmd->add_option("trace", o->trace,
                  "Trace to analyze: torch.profiler (Kineto) or syncscope Chrome JSON (.json or .json.gz), or the "
                  "syncscope binary form")
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
  cmd->add_option("--output", o->output,
                  "Write to this file (atomically) instead of stdout; gzip when it ends in .gz")
      ->capture_default_str();
  cmd->add_flag("--force", o->force, "Replace --output when it already exists");
  cmd->add_option("--max-sync-points", o->max_sync_points,
                  "JSON: list at most this many individual sync points (sync_points_truncated says when more "
                  "exist)")
      ->capture_default_str();
  auto* pid_opt =
      cmd->add_option("--pid", o->pid, "Only count host threads of this process id (default: all processes)");

  cmd->callback([o, pid_opt, &ctx] {
    // Refuse before spending minutes on a 1 GB trace (core/output_policy.hpp).
    if (!o->output.empty()) (void)plan_output_file(o->output, o->force);

    const Trace trace = read_trace(o->trace);
    if (pid_opt->count() > 0) {
      // A pid the trace never mentions is a wrong --pid, not a trace without CUDA calls.
      std::set<std::int64_t> pids;
      for (const auto& c : trace.api_calls) pids.insert(c.pid);
      for (const auto& r : trace.ranges) pids.insert(r.pid);
      std::string list;
      for (auto p : pids) list += (list.empty() ? "" : ", ") + std::to_string(p);
      SYNCSCOPE_INPUT_ERROR_IF(!pids.count(o->pid), "--pid " + std::to_string(o->pid) + ": " + o->trace +
                                                        " has no host records of that process; its processes: " +
                                                        (list.empty() ? "none" : list));
    }
    AnalysisOptions opts;
    opts.step_glob = o->step_range;
    opts.layer_glob = o->layer_range;
    if (pid_opt->count() > 0) opts.pid = o->pid;
    AnalysisResult result = analyze(trace, opts);
    result.source = o->trace;

    std::string text;
    if (o->format == "json") {
      AnalysisJsonOptions jo;
      jo.max_sync_points = o->max_sync_points;
      text = analysis_to_json(result, jo);
    } else if (o->format == "csv") {
      text = analysis_to_csv(result);
    } else {
      std::ostringstream out;
      print_analysis_table(result, out);
      text = out.str();
    }

    // The table lists every warning itself; other outputs are for programs, so people
    // see the warnings on stderr. Dropped records always go to stderr: they make every
    // count a lower bound.
    const bool table_on_stdout = o->format == "table" && o->output.empty();
    for (const auto& w : result.warnings)
      if (!table_on_stdout || (trace.meta.dropped_records > 0 && w.find("records were dropped") != std::string::npos))
        std::fprintf(stderr, "syncscope: warning: %s\n", w.c_str());

    if (o->output.empty()) {
      std::cout << text << std::flush;
    } else {
      write_file_atomic(o->output, text, o->force);
      std::fprintf(stderr, "syncscope: wrote %s\n", o->output.c_str());
    }
    ctx.exit_code = 0;
  });
}

}  // namespace syncscope::cli
