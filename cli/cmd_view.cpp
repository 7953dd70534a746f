// `syncscope view TRACE... -o page.html`: one self-contained HTML page for a user's own trace
// (Kineto JSON / .json.gz, nsys as analyze reads them) or rank directory. Parses options and
// calls the libraries: read_trace (io), build_view_trace / render_view_html (reports/view.hpp),
// find_rank_traces (cluster) for a directory, as analyze takes it.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "commands.hpp"
#include "syncscope/cluster/rank_traces.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/core/file_io.hpp"
#include "syncscope/core/output_policy.hpp"
#include "syncscope/core/text.hpp"
#include "syncscope/core/version.hpp"
#include "syncscope/io/trace_io.hpp"
#include "syncscope/reports/view.hpp"

namespace syncscope::cli {

namespace {

struct ViewArgs {
  std::vector<std::string> traces;
  std::string output = "view.html";
  std::string title;
  std::string step_range = "ProfilerStep#*";
  std::size_t step = 0;
  std::size_t replay_causes = 6;
  bool force = false;
};

}  // namespace

void add_view_command(CLI::App& app, Context& ctx) {
  auto a = std::make_shared<ViewArgs>();
  auto* cmd = app.add_subcommand(
      "view",
      "Draw a trace (or a directory of rank traces) as one self-contained HTML page: a step's timeline per host "
      "thread, stream and copy engine with each sync point marked (cause, blocked time, the bubble it left), idle "
      "per stream in our four classes beside HTA's three, the step's critical path, the worst causes with their "
      "replayed saving, kernels and launch delays; ranks side by side.");
  cmd->add_option("traces", a->traces,
                  "Trace(s) as analyze reads them (torch.profiler/Kineto or syncscope JSON, .json.gz, nsys), or a "
                  "directory of rank traces (*.json, *.json.gz)")
      ->required();
  cmd->add_option("-o,--output", a->output, "The HTML file to write (atomically)")->capture_default_str();
  cmd->add_option("--title", a->title, "Title of the page (default: the trace or directory named)");
  cmd->add_option("--step-range", a->step_range, "Glob over host range names that delimit steps")
      ->capture_default_str();
  auto* step_opt = cmd->add_option("--step", a->step,
                                   "Draw this step (0-based, as analyze numbers them; default: the median step by "
                                   "duration)");
  cmd->add_option("--replay-causes", a->replay_causes,
                  "Replay the trace without each of the N worst causes' syncs to give their saving (0: skip)")
      ->check(CLI::Range(std::size_t{0}, std::size_t{1000}))
      ->capture_default_str();
  cmd->add_flag("--force", a->force, "Replace an existing output file");
  cmd->callback([a, step_opt, &ctx] {
    namespace fs = std::filesystem;
    (void)plan_output_file(a->output, a->force);  // refused before the work (core/output_policy.hpp)
    std::error_code ec;
    const bool many = a->traces.size() > 1 || fs::is_directory(a->traces.front(), ec);
    std::vector<std::string> files;
    if (many)
      for (const auto& f : cluster::find_rank_traces(a->traces)) files.push_back(f.path);
    else files = a->traces;
    ViewOptions opt;
    opt.step_glob = a->step_range;
    opt.replay_causes = a->replay_causes;
    if (step_opt->count() > 0) opt.step = a->step;
    ViewPage page;
    page.title = !a->title.empty() ? a->title : "syncscope view: " + cluster::rank_source_label(a->traces);
    page.generated_utc = utc_now_iso8601();
    for (const auto& f : files) page.traces.push_back(build_view_trace(read_trace(f), f, opt));
    // Ranks in rank order (traces without one after, by file name), as analyze lists them.
    std::stable_sort(page.traces.begin(), page.traces.end(), [](const ViewTrace& x, const ViewTrace& y) {
      return x.rank.has_value() != y.rank.has_value() ? x.rank.has_value() : x.rank && *x.rank < *y.rank;
    });
    page.notes = view_set_notes(page.traces);
    const std::string html = render_view_html(page);
    write_file_atomic(a->output, html, a->force);
    std::size_t syncs = 0, sampled = 0;
    for (const auto& t : page.traces) {
      syncs += t.syncs.size();
      sampled += t.sampling_notes.empty() ? 0 : 1;
    }
    std::printf("wrote %s (%zu trace(s), %zu sync point(s) marked, %zu trace(s) drawn aggregated, %zu bytes)\n",
                printable(a->output).c_str(), page.traces.size(), syncs, sampled, html.size());
    ctx.exit_code = 0;
  });
}

}  // namespace syncscope::cli
