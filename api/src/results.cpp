#include "syncscope/api/results.hpp"

#include <cstdint>

#include "syncscope/core/file_io.hpp"

namespace syncscope::api {

model::RunResults read_results(const std::string& arg) {
  // Standard input has no size to check before reading: the same 256 MiB cap as a file.
  if (arg == "-") return model::results_from_json(read_file(arg, std::uint64_t{256} << 20), "standard input (-)");
  return model::read_results(arg);
}

}  // namespace syncscope::api
