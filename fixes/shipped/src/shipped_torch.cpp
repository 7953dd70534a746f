// One line per fix folder with a LibTorch hook (shipped.hpp), beside shipped.cpp's registry lines.
#include "syncscope/fixes/logging/logging.hpp"
#include "syncscope/fixes/shipped.hpp"

namespace syncscope::fixes {

void register_shipped_torch_steps() {
  register_shipped_fixes();
  logging::register_logging_torch_step();
}

}  // namespace syncscope::fixes
