#include "commands.hpp"

#include "syncscope/core/error.hpp"

namespace syncscope::cli {

// Placeholder until its issue lands; registered so --help lists the whole command set.
void add_calibrate_command(CLI::App& app, Context& ctx) {
  auto* cmd = app.add_subcommand("calibrate", "(not yet available in this build)");
  cmd->callback([] { throw Error("syncscope calibrate: not implemented yet"); });
}

}  // namespace syncscope::cli
