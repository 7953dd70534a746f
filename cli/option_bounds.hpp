// CLI11 validators from core/bounds.hpp: an option outside physical sense is refused with
// its name, the range and the reason, before any work starts.
#pragma once

#include <CLI/CLI.hpp>

#include <cmath>
#include <string>

#include "syncscope/core/bounds.hpp"
#include "syncscope/core/text.hpp"

namespace syncscope::cli {

// An integer option within `r`.
inline CLI::Validator int_in(const bounds::Range& r) {
  return CLI::Validator(
      [r](std::string& text) -> std::string {
        return bounds::parse_int_in(text, r) ? std::string() : "'" + text + "': expected " + bounds::describe_int(r);
      },
      "INT in " + std::to_string(static_cast<long long>(r.lo)) + ".." + std::to_string(static_cast<long long>(r.hi)));
}

// A number option within `r` (in the option's own unit).
inline CLI::Validator number_in(const bounds::Range& r, const char* unit = "") {
  return CLI::Validator(
      [r, unit](std::string& text) -> std::string {
        return bounds::parse_number_in(text, r) ? std::string()
                                                : "'" + text + "': expected " + bounds::describe_number(r, unit);
      },
      "NUMBER");
}

// A name option that becomes a file name or is printed (`calibrate --name`): the scenario-name
// rule (core/text.hpp file_name_problem: no '/', not '.' or '..', at most 255 bytes in UTF-8,
// no control or format character), refused at parse time; CLI11 names the option.
inline CLI::Validator name_rule() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        if (auto p = file_name_problem(text, bounds::kMaxNameChars))
          return "'" + printable(text) + "': the name " + *p + "; use a printable name of at most " +
                 std::to_string(bounds::kMaxNameChars) + " characters without '/'";
        return {};
      },
      "NAME");
}

// A non-negative integer index (a task number): "-1" is not one (std::stoull would wrap it to
// 18446744073709551615), nor are "+3", " 3", "3x" or one past `max`.
inline CLI::Validator index_rule(unsigned long long max) {
  return CLI::Validator(
      [max](std::string& text) -> std::string {
        const bool digits =
            !text.empty() && text.size() <= 19 && text.find_first_not_of("0123456789") == std::string::npos;
        if (!digits || std::stoull(text) > max)
          return "'" + printable(text) + "' is not a number 0.." + std::to_string(max);
        return {};
      },
      "INDEX");
}

}  // namespace syncscope::cli
