#pragma once
// Units for hand-built traces, one definition for every test file of an executable (a unity
// build compiles several files as one unit).
#include "syncscope/core/units.hpp"

namespace syncscope::test {

inline constexpr Ns us = kNsPerUs;  // `5 * us`: 5 microseconds in ns

}  // namespace syncscope::test
