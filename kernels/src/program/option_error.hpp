#pragma once
// The step options' one error form, for step_options.cpp and fix_loops.cpp: "step options:
// <field>: expected <what>, got <value>".
#include <fmt/format.h>

#include <string>

#include "syncscope/core/error.hpp"

namespace syncscope::program::detail {

[[noreturn]] inline void bad_option(const std::string& field, const std::string& expected, const std::string& got) {
  throw InputError(fmt::format("step options: {}: expected {}, got {}", field, expected, got));
}

}  // namespace syncscope::program::detail
