// The offload fix's model half (offload.hpp): the hooks the model, the replay and validate
// call, added to its step half's entry (step_entry.cpp).
#include <mutex>

#include "internal.hpp"
#include "syncscope/fixes/offload/offload.hpp"
#include "syncscope/fixes/offload/published.hpp"
#include "syncscope/model/trace_predict.hpp"
#include "syncscope/program/step_options.hpp"
#include "syncscope/scenario/scenario.hpp"

namespace syncscope::fixes::offload {

void register_offload_fix() {
  static std::once_flag once;
  std::call_once(once, [] {
    register_offload_fix_step();
    extend_fix(kFix, [](FixSpec& f) {
      f.trace_predict_options = [](const scenario::FixSelection& sel, const program::StepOptions&,
                                   model::TracePredictOptions& po) {
        po.fix_numbers["offload"][detail::kPrefetchDepthTraceKey] = sel.number(detail::kStepPrefetchDepth.key);
      };
      f.detect = detail::detect;
      f.has_inputs = detail::has_inputs;
      f.predict = detail::predict_explicit;
      f.predict_options = detail::predict_options();
      f.predict_from_scenario = detail::predict_from_scenario;
      f.published = published_figures;
      f.published_scenarios = published_scenario_figures();
      f.what_if_edits = {{"double-buffer", "double", "", {}},
                         {"prefetch", "prefetch", "K", [](const std::string& text, const std::string& k) {
                            (void)detail::prefetch_depth_argument(text, k);
                          }}};
      f.replay_edit = detail::replay_edit;
    });
  });
}

}  // namespace syncscope::fixes::offload
