// Stable spellings of the critical path's kinds (critical_path.hpp), as JSON and CSV write them.
#include "syncscope/analysis/critical_path.hpp"

namespace syncscope {

std::string_view critical_kind_name(CriticalKind k) {
  switch (k) {
    case CriticalKind::Host: return "host";
    case CriticalKind::Gpu: return "gpu";
    case CriticalKind::Launch: return "launch";
    case CriticalKind::SyncWait: return "sync_wait";
    case CriticalKind::Other: break;
  }
  return "other";
}

}  // namespace syncscope
