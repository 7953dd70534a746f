#include "syncscope/api/results.hpp"

#include <cstdint>

#include "syncscope/core/file_io.hpp"
#include "syncscope/fixes/shipped.hpp"

namespace syncscope::api {

model::RunResults read_results(const std::string& arg) {
  fixes::register_shipped_fixes();  // the registry every layer below reads (shipped.hpp)
  // Standard input has no size to check before reading: the same 256 MiB cap as a file.
  if (arg == "-") return model::results_from_json(read_file(arg, std::uint64_t{256} << 20), "standard input (-)");
  return model::read_results(arg);
}

Validation validate_run(const std::string& arg) {
  const model::RunResults results = read_results(arg);
  Validation v{model::validate_results(results, arg), {}};
  if (v.report.compared == 0) {
    bool any_non_baseline = false;
    for (const auto& r : results.variants) any_non_baseline |= !r.baseline;
    v.nothing_compared = results.variants.empty() ? "it holds no variants"
                         : !any_non_baseline      ? "it holds only baselines"
                                                  : "no variant beside a baseline carries a prediction";
  }
  return v;
}

}  // namespace syncscope::api
