// Linked into every test that reads a scenario, builds a step or predicts
// (syncscope_add_gtest, tests/CMakeLists.txt): registers every fix before the first test, as
// the executable does at start (fix_spec.hpp: the registry is empty until then).
#include <gtest/gtest.h>

#include "syncscope/fixes/shipped.hpp"

namespace {

class ShippedFixes : public ::testing::Environment {
 public:
  void SetUp() override { syncscope::fixes::register_shipped_fixes(); }
};

// gtest owns the environment once added.
[[maybe_unused]] ::testing::Environment* const kShippedFixes = ::testing::AddGlobalTestEnvironment(new ShippedFixes);

}  // namespace
