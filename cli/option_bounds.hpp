// CLI11 validators from core/bounds.hpp: an option outside physical sense is refused with
// its name, the range and the reason, before any work starts.
#pragma once

#include <CLI/CLI.hpp>

#include <cmath>
#include <string>

#include "syncscope/core/bounds.hpp"

namespace syncscope::cli {

// An integer option within `r`.
inline CLI::Validator int_in(const bounds::Range& r) {
  return CLI::Validator(
      [r](std::string& text) -> std::string {
        long long v = 0;
        std::size_t pos = 0;
        try {
          v = std::stoll(text, &pos);
        } catch (const std::exception&) {
          pos = 0;
        }
        if (pos == 0 || pos != text.size()) return "'" + text + "': expected " + bounds::describe_int(r);
        if (!r.contains(static_cast<double>(v))) return "'" + text + "': expected " + bounds::describe_int(r);
        return {};
      },
      "INT in " + std::to_string(static_cast<long long>(r.lo)) + ".." + std::to_string(static_cast<long long>(r.hi)));
}

// A number option within `r` (in the option's own unit).
inline CLI::Validator number_in(const bounds::Range& r, const char* unit = "") {
  return CLI::Validator(
      [r, unit](std::string& text) -> std::string {
        double v = 0;
        std::size_t pos = 0;
        try {
          v = std::stod(text, &pos);
        } catch (const std::exception&) {
          pos = 0;
        }
        if (pos == 0 || pos != text.size() || !r.contains(v))
          return "'" + text + "': expected " + bounds::describe_number(r, unit);
        return {};
      },
      "NUMBER");
}

}  // namespace syncscope::cli
