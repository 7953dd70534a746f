// The packing fix's registry entry (its identity) and the hooks it installs (packing.hpp).
#include <mutex>

#include "internal.hpp"
#include "syncscope/fixes/packing/options.hpp"
#include "syncscope/fixes/packing/packing.hpp"
#include "syncscope/fixes/packing/published.hpp"
#include "syncscope/fixes/packing/visit_windows.hpp"
#include "syncscope/model/trace_predict.hpp"
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

void register_packing_fix() {
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
    // The windows of the step's metadata builds: the cached variant rebuilds at each change.
    f.trace_predict_options = [](const scenario::FixSelection&, const program::StepOptions& o,
                                 model::TracePredictOptions& po) {
      std::vector<double>& list = po.fix_lists["packing"][detail::kVisitWindowsTraceKey];
      list.clear();
      for (const int w : visit_windows(o)) list.push_back(w);
    };
    f.detect = detail::detect;
    f.has_inputs = detail::has_inputs;
    f.predict = detail::predict_explicit;
    f.predict_options = detail::predict_options();
    f.predict_from_scenario = detail::predict_from_scenario;
    // Unsloth's uncached path rebuilds in the forward and again in the checkpoint recompute:
    // its trace shows 2 rebuilds per layer (56 for 28 layers; detect.cpp).
    f.layer_count_note = [](double count, int layers) -> std::optional<std::string> {
      if (count != 2.0 * layers) return std::nullopt;
      return "the baseline rebuilds the metadata in each layer's forward and again in its checkpoint recompute";
    };
    f.published = published_figures;
    f.published_scenarios = published_scenario_figures();
    f.what_if_edits = {{"packing-cache", "cached", "", {}}, {"packing-device", "device", "", {}}};
    f.replay_edit = detail::replay_edit;
    register_fix(std::move(f));
  });
}

}  // namespace syncscope::fixes::packing
