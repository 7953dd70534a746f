// Linked into every test that builds a LibTorch reference step (syncscope_add_gtest links it
// where LIBS has syncscope_kernels, tests/CMakeLists.txt): installs every fix's LibTorch hooks
// before the first test, as the measured backend does at load (the step cannot build its
// attention mask or run its experts without them: fixes/shipped/include/syncscope/fixes/shipped.hpp).
#include <gtest/gtest.h>

#include "syncscope/fixes/shipped.hpp"

namespace {

class ShippedTorchSteps : public ::testing::Environment {
 public:
  void SetUp() override { syncscope::fixes::register_shipped_torch_steps(); }
};

// gtest owns the environment once added.
[[maybe_unused]] ::testing::Environment* const kShippedTorchSteps =
    ::testing::AddGlobalTestEnvironment(new ShippedTorchSteps);

}  // namespace
