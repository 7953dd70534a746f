// A run's results.json read strictly, for `validate` (cli/cmd_validate.cpp) and any front end
// that checks a run: the one strict reader (model/results.hpp: duplicate keys refused with
// file:line:column, numbers bounded, a FIFO or device refused before it is opened), with "-"
// as standard input, read as strictly.
#pragma once

#include <string>

#include "syncscope/model/results.hpp"
#include "syncscope/model/validate.hpp"

namespace syncscope::api {

// `arg`: results.json, a run directory holding one, or "-" (standard input, at most 256 MiB).
model::RunResults read_results(const std::string& arg);

// `syncscope validate RESULTS` (not --published): the strict reading, then the checks.
struct Validation {
  model::ValidationReport report;
  // Why nothing was compared, empty when something was: a validation that compared nothing
  // has not validated anything, so it is not a pass.
  std::string nothing_compared;
  // The CLI's exit status: 0 when every compared variant is within its tolerance, 1 when one
  // is not or nothing was compared (bad input throws InputError: exit 2).
  int exit_code() const { return report.failures > 0 || report.compared == 0 ? 1 : 0; }
};
Validation validate_run(const std::string& arg);

}  // namespace syncscope::api
