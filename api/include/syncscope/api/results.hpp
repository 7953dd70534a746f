// A run's results.json read strictly, for `validate` (cli/cmd_validate.cpp) and any front end
// that checks a run: the one strict reader (model/results.hpp: duplicate keys refused with
// file:line:column, numbers bounded, a FIFO or device refused before it is opened), with "-"
// as standard input, read as strictly.
#pragma once

#include <string>

#include "syncscope/model/results.hpp"

namespace syncscope::api {

// `arg`: results.json, a run directory holding one, or "-" (standard input, at most 256 MiB).
model::RunResults read_results(const std::string& arg);

}  // namespace syncscope::api
