// Each subcommand of `syncscope` registers itself on the app. A command's callback throws
// InputError for bad input (exit 2) and Error for failures (exit 1); `exit_code` lets a
// command report a verdict (e.g. validate: 1 when a tolerance is exceeded).
#pragma once

#include <filesystem>
#include <string>

#include <CLI/CLI.hpp>

namespace syncscope {
struct Trace;
}

namespace syncscope::cli {

struct Context {
  int exit_code = 0;
};

void add_analyze_command(CLI::App& app, Context& ctx);
void add_convert_command(CLI::App& app, Context& ctx);
void add_trace_command(CLI::App& app, Context& ctx);
void add_calibrate_command(CLI::App& app, Context& ctx);
void add_predict_command(CLI::App& app, Context& ctx);
void add_diff_command(CLI::App& app, Context& ctx);
void add_validate_command(CLI::App& app, Context& ctx);
void add_run_command(CLI::App& app, Context& ctx);
void add_report_command(CLI::App& app, Context& ctx);
void add_sweep_command(CLI::App& app, Context& ctx);
void add_view_command(CLI::App& app, Context& ctx);
void add_job_command(CLI::App& app, Context& ctx);  // hidden: what batch scripts run

// This executable's path (/proc/self/exe): what sweep and rank jobs run in their tasks.
std::filesystem::path self_executable();

// What the reader of `path` warned about (a key given twice in an event, arguments of the
// wrong type: Trace::meta.read_warnings), on stderr, each line escaped: for the commands that
// read a trace without analyzing it (calibrate, diff, convert; analyze and predict print
// them with the analysis's warnings).
void print_read_warnings(const Trace& trace, const std::filesystem::path& path);

// A command's result: to stdout when `output` is empty, else written atomically to `output`
// (replacing it only with `force`) and named on stderr (cli/output.cpp).
void emit_output(const std::string& output, bool force, const std::string& text);

}  // namespace syncscope::cli
