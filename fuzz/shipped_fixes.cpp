// Linked into every fuzz target that reads a scenario, simulates or validates (fuzz/CMakeLists.txt):
// every fix registered before the first input, as the executable registers them at start
// (fix_spec.hpp: the registry is empty until then). libFuzzer calls this once.
#include "syncscope/fixes/shipped.hpp"

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  syncscope::fixes::register_shipped_fixes();
  return 0;
}
