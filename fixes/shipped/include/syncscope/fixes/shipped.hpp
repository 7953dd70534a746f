// The fixes that live in their own folders (fixes/<name>/, above the layers they plug
// into), registered in one call: the executable and the Python module call it at start,
// before any scenario is read or any trace predicted. Idempotent.
#pragma once

namespace syncscope::fixes {

void register_shipped_fixes();

}  // namespace syncscope::fixes
