// syncscope diff BEFORE AFTER: what changed between two traces, and with --what-if the
// replayed prediction of AFTER from BEFORE against the real AFTER (replay/replay_diff.hpp).
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "commands.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/core/file_io.hpp"
#include "syncscope/core/output_policy.hpp"

#include "syncscope/api/predict.hpp"
#include "syncscope/io/trace_io.hpp"
#include "syncscope/replay/replay.hpp"

namespace syncscope::cli {

void add_diff_command(CLI::App& app, Context& ctx) {
  struct Options {
    std::string before, after;
    std::vector<std::string> what_if;
    std::string step_range = api::kDefaultStepRange;
    std::string layer_range;
    std::string gpu;
    std::string format = "text";
    std::string output;
    bool force = false;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand(
      "diff",
      "What changed between two traces of a run (step time, syncs per cause, bubbles, copy/compute overlap per "
      "direction, GPU busy, kernel time by name); with --what-if, BEFORE replayed with those edits against the real "
      "AFTER: the accuracy of a what-if (model/README.md, \"Replay\").");
  cmd->add_option("BEFORE", o->before, "Trace before the change")->required();
  cmd->add_option("AFTER", o->after, "Trace after the change")->required();
  cmd->add_option("--what-if", o->what_if,
                  "Edit replayed on BEFORE (repeatable, applied together): " + replay::what_if_forms());
  cmd->add_option("--step-range", o->step_range, "Glob over range names that delimit steps")->capture_default_str();
  cmd->add_option("--layer-range", o->layer_range, "Glob over range names that delimit layers (packing and MoE edits)");
  cmd->add_option("--gpu,--gpu-profile", o->gpu,
                  "GPU profile (a shipped name or a profile file) for edits that need a rate the trace does not "
                  "show: pin-memory's pinned copy rate when BEFORE has no pinned copies of that direction");
  cmd->add_option("--format", o->format, "Output format: text or json")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  cmd->add_option("--output", o->output, "Write to this file (atomically) instead of stdout");
  cmd->add_flag("--force", o->force, "Replace --output when it already exists");
  cmd->callback([o, &ctx] {
    if (!o->output.empty()) (void)plan_output_file(o->output, o->force);  // refuse before the work
    api::DiffRequest req;
    req.what_if = o->what_if;
    req.step_range = o->step_range;
    req.layer_range = o->layer_range;
    req.gpu = o->gpu;
    const Trace before = read_trace(o->before);
    const Trace after = read_trace(o->after);
    print_read_warnings(before, o->before);
    print_read_warnings(after, o->after);
    const std::string text = api::render_diff(api::diff_traces(before, after, req, o->before, o->after), o->format);
    emit_output(o->output, o->force, text);
    ctx.exit_code = 0;
  });
}

}  // namespace syncscope::cli
