// One line per fix folder with LibTorch hooks (shipped.hpp), beside shipped.cpp's registry lines.
#include "syncscope/fixes/logging/logging.hpp"
#include "syncscope/fixes/moe_routing/moe_routing.hpp"
#include "syncscope/fixes/offload/offload.hpp"
#include "syncscope/fixes/packing/packing.hpp"
#include "syncscope/fixes/shipped.hpp"

namespace syncscope::fixes {

void register_shipped_torch_steps() {
  register_shipped_fix_steps();
  packing::register_packing_torch_step();
  offload::register_offload_torch_step();
  moe_routing::register_moe_routing_torch_step();
  logging::register_logging_torch_step();
}

}  // namespace syncscope::fixes
