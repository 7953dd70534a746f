// The packing fix's model half (packing.hpp): the hooks the model, the replay and validate
// call, added to its step half's entry (step_entry.cpp).
#include <mutex>

#include "internal.hpp"
#include "syncscope/fixes/packing/packing.hpp"
#include "syncscope/fixes/packing/published.hpp"
#include "syncscope/fixes/packing/visit_windows.hpp"
#include "syncscope/model/trace_predict.hpp"
#include "syncscope/program/step_options.hpp"
#include "syncscope/scenario/scenario.hpp"

namespace syncscope::fixes::packing {

void register_packing_fix() {
  static std::once_flag once;
  std::call_once(once, [] {
    register_packing_fix_step();
    extend_fix(kFix, [](FixSpec& f) {
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
      f.published = published_figures;
      f.published_scenarios = published_scenario_figures();
      f.what_if_edits = {{"packing-cache", "cached", "", {}}, {"packing-device", "device", "", {}}};
      f.replay_edit = detail::replay_edit;
    });
  });
}

}  // namespace syncscope::fixes::packing
