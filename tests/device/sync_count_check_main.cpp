// syncscope_sync_count_check MEASURED_DIR PROGRAM_DIR [--json FILE]
// Prints the comparison (sync_count_check.hpp); with --json also writes it (atomically).
// Exit: 0 every variant matches its program, 1 some differ or lack a program run, 2 bad
// input (a results.json that cannot be read: the message names the file and field).
#include <cstdio>
#include <exception>
#include <string>

#include "sync_count_check.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/core/file_io.hpp"
#include "syncscope/fixes/shipped.hpp"

int main(int argc, char** argv) {
  using namespace syncscope;
  fixes::register_shipped_fixes();  // the fixes' names in the results (shipped.hpp)
  if (argc != 3 && !(argc == 5 && std::string(argv[3]) == "--json")) {
    std::fprintf(stderr, "usage: %s MEASURED_RESULTS_DIR PROGRAM_RESULTS_DIR [--json FILE]\n", argv[0]);
    return 2;
  }
  try {
    const model::RunResults measured = model::read_results(argv[1]);
    const model::RunResults program = model::read_results(argv[2]);
    const gpucheck::SyncCountComparison c = gpucheck::compare_sync_counts(measured, argv[1], program, argv[2]);
    std::fputs(gpucheck::sync_counts_to_text(c).c_str(), stdout);
    if (argc == 5) write_file_atomic(argv[4], gpucheck::sync_counts_to_json(c));
    return c.all_match() ? 0 : 1;
  } catch (const InputError& e) {
    std::fprintf(stderr, "syncscope_sync_count_check: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "syncscope_sync_count_check: %s\n", e.what());
    return 1;
  }
}
