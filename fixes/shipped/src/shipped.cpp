// One line per fix folder (shipped.hpp). The first three fixes still register from
// fixes/src/registry.cpp with hooks bound by each layer; a fix in a folder of its own
// registers itself here.
#include "syncscope/fixes/shipped.hpp"

#include "syncscope/fixes/logging/logging.hpp"

namespace syncscope::fixes {

void register_shipped_fixes() { logging::register_logging_fix(); }

}  // namespace syncscope::fixes
