// Every fix, each in its own folder (fixes/<name>/, above the layers it plugs into),
// registered in one call. The registry is empty until then (fix_spec.hpp), so everything that
// reads a scenario, builds a step or predicts calls it first: the executable and the Python
// module at start, the library entry points (api/, the run pipeline), the measured backend at
// load, the benchmarks, the fuzz targets and the tests (tests/support/shipped_fixes.cpp).
// Idempotent.
#pragma once

namespace syncscope::fixes {

void register_shipped_fixes();

// Every fix's step half alone (identity, step options, program operators: each folder's
// syncscope_fix_<name>_step), without the model's hooks (detectors, closed forms, predict
// options, replay edits), for what builds steps and predicts nothing: the LibTorch step's
// tests, through register_shipped_torch_steps(). register_shipped_fixes() after it adds the
// rest. Defined in syncscope_fixes_shipped_steps (src/shipped_steps.cpp). Idempotent.
void register_shipped_fix_steps();

// register_shipped_fix_steps() and each fix's LibTorch hooks (FixSpec::torch_step_point,
// torch_layer_point, torch_step_setup), for the LibTorch reference step, which cannot build its
// attention mask or run its experts without them: everything that builds a ReferenceStep
// calls it first (the measured backend at load, the kernel benchmark and probe, the LibTorch
// tests: tests/support/shipped_torch_steps.cpp). Defined in syncscope_fixes_shipped_torch (src/shipped_torch.cpp),
// built only with LibTorch. Idempotent.
void register_shipped_torch_steps();

}  // namespace syncscope::fixes
