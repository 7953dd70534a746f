// One line per fix folder (shipped.hpp), beside shipped.cpp's: each registers its step half
// alone (identity, step options, program operators), for what builds steps and predicts
// nothing: the LibTorch step's tests and register_shipped_torch_steps().
#include "syncscope/fixes/logging/logging.hpp"
#include "syncscope/fixes/moe_routing/moe_routing.hpp"
#include "syncscope/fixes/offload/offload.hpp"
#include "syncscope/fixes/packing/packing.hpp"
#include "syncscope/fixes/shipped.hpp"

namespace syncscope::fixes {

void register_shipped_fix_steps() {
  packing::register_packing_fix_step();
  offload::register_offload_fix_step();
  moe_routing::register_moe_routing_fix_step();
  logging::register_logging_fix_step();
}

}  // namespace syncscope::fixes
