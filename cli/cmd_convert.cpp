#include <cstdio>
#include <filesystem>
#include <map>
#include <string>

#include "commands.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/core/output_policy.hpp"
#include "syncscope/core/text.hpp"
#include "syncscope/io/trace_io.hpp"

namespace syncscope::cli {

void print_read_warnings(const Trace& trace, const std::filesystem::path& path) {
  for (const auto& w : trace.meta.read_warnings)
    std::fprintf(stderr, "syncscope: warning: %s: %s\n", printable(path.string()).c_str(),
                 printable(describe(w)).c_str());
}

namespace {

struct ConvertOptions {
  std::string input;
  std::string output;
  bool force = false;
  std::string format = "auto";
  std::string time_grid = "exact";
};

void run_convert(const ConvertOptions& o) {
  const TraceFormat format = o.format == "chrome" ? TraceFormat::ChromeJson : TraceFormat::Auto;
  // Fail before the (possibly long) read when the output would be refused anyway (an
  // existing file without --force, a directory, a socket; core/output_policy.hpp).
  (void)plan_output_file(o.output, o.force);

  Trace trace = read_trace(o.input);  // input format: decided by content
  for (const auto& w : trace.meta.warnings) std::fprintf(stderr, "syncscope: warning: %s\n", printable(w).c_str());
  print_read_warnings(trace, o.input);
  WriteOptions w;
  w.format = format;
  w.overwrite = o.force;
  w.time_grid = o.time_grid == "us" ? TimeGrid::WholeMicrosecond : TimeGrid::Exact;
  write_trace(trace, o.output, w);
  std::printf(
      "syncscope convert: %s -> %s: %zu records (%zu API calls, %zu kernels, %zu copies, %zu memsets, "
      "%zu sync records, %zu ranges, %zu memory events, %zu other events)\n",
      o.input.c_str(), o.output.c_str(), trace.record_count(), trace.api_calls.size(), trace.kernels.size(),
      trace.memcpys.size(), trace.memsets.size(), trace.syncs.size(), trace.ranges.size(), trace.memory.size(),
      trace.others.size());
}

}  // namespace

void add_convert_command(CLI::App& app, Context& ctx) {
  auto opts = std::make_shared<ConvertOptions>();
  auto* cmd = app.add_subcommand(
      "convert",
      "Convert a trace between forms: Chrome trace JSON <-> gzip-compressed JSON, or a torch.profiler "
      "(Kineto) trace or an Nsight Systems SQLite export -> syncscope's normalized Chrome JSON (one Perfetto track per "
      "GPU stream, launch->kernel "
      "flow arrows, every model field kept). The input's format is recognized by content; the output is gzip "
      "when OUT ends in .gz.");
  cmd->add_option("IN", opts->input,
                  "Input trace: .json or .json.gz (torch.profiler or syncscope), or an Nsight Systems SQLite export")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("OUT", opts->output,
                  "Output trace (.json, or .json.gz for gzip); '-', /dev/stdout, a FIFO or a device is written "
                  "straight through")
      ->required();
  cmd->add_flag("--force", opts->force, "Replace OUT if it is an existing regular file (never a directory)")
      ->capture_default_str();
  cmd->add_option("--format", opts->format, "Output format: auto (from OUT's name) or chrome")
      ->check(CLI::IsMember({"auto", "chrome"}))
      ->capture_default_str();
  cmd->add_option("--time-grid", opts->time_grid,
                  "exact: times as read (integer ns); us: every time rounded to the nearest whole microsecond, so "
                  "Holistic Trace Analysis reads them without its own rounding (not the recorded times; the file "
                  "says so in \"syncscope_time_grid\"; docs/analysis.md)")
      ->check(CLI::IsMember({"exact", "us"}))
      ->capture_default_str();
  cmd->callback([opts, &ctx] {
    run_convert(*opts);
    ctx.exit_code = 0;
  });
}

}  // namespace syncscope::cli
