// The fixes that live in their own folders (fixes/<name>/, above the layers they plug
// into), registered in one call: the executable and the Python module call it at start,
// before any scenario is read or any trace predicted. Idempotent.
#pragma once

namespace syncscope::fixes {

void register_shipped_fixes();

// register_shipped_fixes() and each such fix's LibTorch hook (FixSpec::torch_step_point),
// for the LibTorch reference step: the measured backend calls it at load, the fixes' LibTorch
// tests before their steps. Defined in syncscope_fixes_shipped_torch (src/shipped_torch.cpp),
// built only with LibTorch. Idempotent.
void register_shipped_torch_steps();

}  // namespace syncscope::fixes
