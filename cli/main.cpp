#include <csignal>
#include <cstdio>
#include <exception>
#include <iostream>
#include <new>
#include <sstream>
#include <string>
#include <string_view>

#include "commands.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/core/file_io.hpp"
#include "syncscope/core/text.hpp"
#include "syncscope/core/version.hpp"
#include "syncscope/fixes/shipped.hpp"

namespace {

// An error's message escaped line by line (printable(): names from traces and options can hold
// terminal controls), its own line breaks kept.
std::string printable_message(std::string_view text) {
  std::string out;
  for (std::size_t at = 0;;) {
    const std::size_t nl = text.find('\n', at);
    out += syncscope::printable(text.substr(at, nl == std::string_view::npos ? nl : nl - at));
    if (nl == std::string_view::npos) return out;
    out += '\n';
    at = nl + 1;
  }
}

}  // namespace

int main(int argc, char** argv) {
  using namespace syncscope;
  // A file size limit (ulimit -f) makes write(2) fail with EFBIG, said as a write failure
  // (exit 1), instead of a silent death by SIGXFSZ.
  std::signal(SIGXFSZ, SIG_IGN);
  fixes::register_shipped_fixes();  // the fixes with folders of their own (fixes/<name>/)
  CLI::App app{
      "syncscope: find and fix hidden host-device serialization in LLM training.\n"
      "Traces GPU programs with CUPTI, counts sync points and copy/compute overlap, and\n"
      "predicts and measures what three known fixes save (packed-sequence metadata cache,\n"
      "double-buffered checkpoint reload, sync-free MoE routing).",
      "syncscope"};
  app.set_version_flag("--version", std::string(version()) + " (commit " + build_commit() + ")");
  app.require_subcommand(1);
  app.get_formatter()->column_width(40);
  cli::Context ctx;
  cli::add_run_command(app, ctx);
  cli::add_analyze_command(app, ctx);
  cli::add_predict_command(app, ctx);
  cli::add_diff_command(app, ctx);
  cli::add_validate_command(app, ctx);
  cli::add_report_command(app, ctx);
  cli::add_view_command(app, ctx);
  cli::add_trace_command(app, ctx);
  cli::add_calibrate_command(app, ctx);
  cli::add_convert_command(app, ctx);
  cli::add_sweep_command(app, ctx);
  cli::add_job_command(app, ctx);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // CLI11's own messages quote what was given ("File does not exist: NAME"): escaped like
    // ours; --help and --version (stdout) are our text.
    std::ostringstream err;
    const int rc = app.exit(e, std::cout, err);
    std::fputs(printable_message(err.str()).c_str(), stderr);
    return rc == 0 ? 0 : 2;
  } catch (const InputError& e) {
    std::fprintf(stderr, "syncscope: error: %s\n", printable_message(e.what()).c_str());
    return 2;
  } catch (const Error& e) {
    std::fprintf(stderr, "syncscope: error: %s\n", printable_message(e.what()).c_str());
    return 1;
  } catch (const std::bad_alloc&) {
    // Under a memory limit (ulimit -v, a cgroup) the file being read is what grew: named,
    // with how far it got, instead of "internal error: std::bad_alloc".
    const ReadingNow r = reading_now();
    if (r.file.empty())
      std::fprintf(stderr, "syncscope: error: out of memory; give it more memory (ulimit -v, the job's --mem)\n");
    else
      std::fprintf(stderr,
                   "syncscope: error: out of memory while reading %s (%llu MiB so far); give it more memory "
                   "(ulimit -v, the job's --mem) or a smaller input\n",
                   printable(r.file).c_str(), static_cast<unsigned long long>(r.bytes >> 20));
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "syncscope: internal error: %s\n", printable_message(e.what()).c_str());
    return 1;
  }
  return ctx.exit_code;
}
