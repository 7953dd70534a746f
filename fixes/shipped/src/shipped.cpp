// One line per fix folder (shipped.hpp): each registers its identity and hooks; the registry
// keeps them in id order whatever the order here.
#include "syncscope/fixes/shipped.hpp"

#include "syncscope/fixes/logging/logging.hpp"
#include "syncscope/fixes/moe_routing/moe_routing.hpp"
#include "syncscope/fixes/offload/offload.hpp"
#include "syncscope/fixes/packing/packing.hpp"

namespace syncscope::fixes {

void register_shipped_fixes() {
  packing::register_packing_fix();
  offload::register_offload_fix();
  moe_routing::register_moe_routing_fix();
  logging::register_logging_fix();
}

}  // namespace syncscope::fixes
