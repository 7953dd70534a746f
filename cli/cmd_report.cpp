#include "commands.hpp"

#include "syncscope/core/error.hpp"

namespace syncscope::cli {

// Placeholder until its issue lands; registered so --help lists the whole command set.
void add_report_command(CLI::App& app, Context& ctx) {
  auto* cmd = app.add_subcommand("report", "(not yet available in this build)");
  cmd->callback([] { throw Error("syncscope report: not implemented yet"); });
}

}  // namespace syncscope::cli
