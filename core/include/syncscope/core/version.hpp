#pragma once

#include <string>

namespace syncscope {

// The project version and the git commit it was built from ("unknown" outside a checkout).
const char* version();
const char* build_commit();

// UTC now as ISO 8601 ("2026-11-30T12:34:56Z"), for provenance fields.
std::string utc_now_iso8601();

}  // namespace syncscope
