// The packing fix's step half (packing.hpp): its identity and the hooks a step needs, without
// the model's (registry_entry.cpp adds those), so the LibTorch step and its tests link only
// the step program and the scenario.
#include <mutex>
#include <optional>
#include <string>

#include "step_internal.hpp"
#include "syncscope/fixes/packing/options.hpp"
#include "syncscope/fixes/packing/packing.hpp"
#include "syncscope/program/step_options.hpp"
#include "syncscope/scenario/scenario.hpp"

namespace syncscope::fixes::packing {

namespace {

void set_step_option(program::StepOptions& o, const StepOptionContext& c) {
  set_variant(o, static_cast<Variant>(c.variant.value_or(0)));
  for (const auto& f : c.scenario.fixes)
    if (f.fix == kFix) set_rebuild_form(o, f.word(detail::kRebuildFormKey));
}

}  // namespace

void register_packing_fix_step() {
  static std::once_flag once;
  std::call_once(once, [] {
    // Packed-sequence metadata (cu_seqlens, max_seqlen, the [T,T] mask): rebuilt every layer
    // (Unsloth's baseline), cached once per batch (Unsloth's fix), or built on the device.
    FixSpec f;
    f.id = kFix;
    f.name = "packing";
    f.variants = {"rebuild", "cached", "device"};
    f.baseline_meaning = "metadata rebuilt in every layer";
    // How the step program builds the baseline's per-layer metadata and mask: "reference" (our
    // LibTorch step's kernels, no per-op host cost) or "unsloth_sdpa_mask" (Unsloth's
    // pre-cache Python code op by op, each op charged an eager-PyTorch host cost:
    // unsloth_rebuild.cpp). Step programs only: the LibTorch step runs its own code.
    f.scenario_keys = {detail::kRebuildFormKey};
    f.word_keys = {{detail::kRebuildFormKey, detail::kRebuildForms}};
    f.step_word_keys = f.word_keys;
    f.predicted_variants = {"cached", "device"};
    f.set_step_option = set_step_option;
    f.step_option_name = [](const program::StepOptions& o) { return variant_name(variant(o)); };
    f.build_program_layer = detail::program_layer;
    // Unsloth's uncached path rebuilds in the forward and again in the checkpoint recompute:
    // its trace shows 2 rebuilds per layer (56 for 28 layers; detect.cpp).
    f.layer_count_note = [](double count, int layers) -> std::optional<std::string> {
      if (count != 2.0 * layers) return std::nullopt;
      return "the baseline rebuilds the metadata in each layer's forward and again in its checkpoint recompute";
    };
    register_fix(std::move(f));
  });
}

}  // namespace syncscope::fixes::packing
