// `syncscope report`: merges the results of several runs (GPUs, machines, measured and
// simulated) into one self-contained HTML file.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "commands.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/core/file_io.hpp"
#include "syncscope/core/output_policy.hpp"
#include "syncscope/core/text.hpp"
#include "syncscope/core/version.hpp"

#include "syncscope/replay/critical_path.hpp"
#include "syncscope/reports/html_report.hpp"

namespace syncscope::cli {

namespace {

struct ReportArgs {
  std::vector<std::string> dirs;
  std::string output = "report.html";
  std::string title = "syncscope report";
  bool force = false;
};

}  // namespace

void add_report_command(CLI::App& app, Context& ctx) {
  auto args = std::make_shared<ReportArgs>();
  auto* cmd = app.add_subcommand(
      "report",
      "Merge the results of one or more `syncscope run` directories (any GPUs and machines, measured or "
      "simulated) into one self-contained HTML report: predicted vs measured speedups, sync points per step, "
      "one-layer timelines, fitted parameters, validation verdicts and provenance.");
  cmd->add_option("results_dirs", args->dirs, "Results directories (each holds results.json)")
      ->required()
      ->check(CLI::ExistingDirectory);
  cmd->add_option("-o,--output", args->output, "The HTML file to write")->capture_default_str();
  cmd->add_option("--title", args->title, "Title of the report")->capture_default_str();
  cmd->add_flag("--force", args->force, "Replace an existing output file");
  cmd->callback([args, &ctx] {
    (void)plan_output_file(args->output, args->force);  // refused before the work (core/output_policy.hpp)
    std::vector<model::ReportRun> runs;
    for (const auto& d : args->dirs) runs.push_back(model::load_report_run(d, replay::add_critical_paths));
    HtmlReportOptions opt;
    opt.title = args->title;
    opt.generated_utc = utc_now_iso8601();
    write_file_atomic(args->output, render_html_report(runs, opt), args->force);
    std::size_t variants = 0;
    for (const auto& r : runs) variants += r.results.variants.size();
    std::printf("wrote %s (%zu run(s), %zu variant row(s))\n", printable(args->output).c_str(), runs.size(), variants);
    ctx.exit_code = 0;
  });
}

}  // namespace syncscope::cli
