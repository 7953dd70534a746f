// The attention windows of a step's packing-metadata builds in issue order (visit_windows.hpp).
#include "syncscope/fixes/packing/visit_windows.hpp"

#include "syncscope/program/layer_schedule.hpp"
#include "syncscope/program/program_layer.hpp"

namespace syncscope::fixes::packing {

using namespace syncscope::program;  // the step options, the schedule and the choreography

std::vector<int> visit_windows(const StepOptions& o) {
  validate(o);
  const int L = effective_layers(o);
  ProgramSchedule schedule;
  const bool checkpointing = fix_program_schedule(o, schedule);
  const Choreography choreo = checkpointing ? std::move(schedule.choreography) : build_plain_choreography(L);
  std::vector<int> out;
  for (const ChoreoStep& s : choreo.steps)
    if (s.kind == ChoreoKind::ForwardLayer ||
        (recomputes_layers(o, checkpointing) && s.kind == ChoreoKind::BackwardLayer))
      out.push_back(layer_sliding_window(o.model, s.layer));
  return out;
}

}  // namespace syncscope::fixes::packing
