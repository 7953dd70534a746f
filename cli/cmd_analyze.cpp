#include "commands.hpp"

#include "syncscope/core/error.hpp"

namespace syncscope::cli {

// Placeholder until its issue lands; registered so --help lists the whole command set.
void add_analyze_command(CLI::App& app, Context& ctx) {
  auto* cmd = app.add_subcommand("analyze", "(not yet available in this build)");
  cmd->callback([] { throw Error("syncscope analyze: not implemented yet"); });
}

}  // namespace syncscope::cli
