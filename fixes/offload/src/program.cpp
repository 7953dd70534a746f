// The offload fix's step schedule (FixSpec::build_program_schedule): which layers offload
// their checkpoint (the memory-aware plan) and the copy/event choreography of the variant
// (layer_schedule.hpp), with the names its events carry in the program.
#include <fmt/format.h>

#include <algorithm>

#include "step_internal.hpp"
#include "syncscope/fixes/offload/plan.hpp"
#include "syncscope/program/layer_schedule.hpp"
#include "syncscope/program/step_options.hpp"

namespace syncscope::fixes::offload::detail {

using namespace syncscope::program;  // the schedule and the step options

bool program_schedule(const StepOptions& o, ProgramSchedule& out) {
  const std::optional<fixes::offload::Variant> v = variant(o);
  if (!v) return false;
  const int layers = effective_layers(o);
  // One layer's checkpoint: its input, T x hidden elements of the compute dtype.
  const double act = static_cast<double>(o.batch.packed_tokens) * o.model.hidden_size * dtype_bytes(o.dtype);
  // A budget left to the device (< 0) counts as 0 in programs: every layer offloaded.
  out.choreography = build_choreography(
      plan_offload(*v, layers, act, std::max(0.0, budget_bytes(o)), prefetch_depth(o), o.first_step, min_bytes(o)));
  const ChoreoEvents& ev = out.choreography.events;
  auto& names = out.event_names;
  names.assign(static_cast<std::size_t>(ev.num_events), "");
  names[static_cast<std::size_t>(ev.produced)] = "layer input produced";
  if (ev.main_all >= 0) names[static_cast<std::size_t>(ev.main_all)] = "main stream so far";
  for (std::size_t l = 0; l < ev.offloaded.size(); ++l)
    names[static_cast<std::size_t>(ev.offloaded[l])] = fmt::format("offloaded layer_{:02}", l);
  for (std::size_t b = 0; b < ev.loaded.size(); ++b)
    names[static_cast<std::size_t>(ev.loaded[b])] = fmt::format("loaded ring {}", b);
  for (std::size_t b = 0; b < ev.freed.size(); ++b)
    names[static_cast<std::size_t>(ev.freed[b])] = fmt::format("freed ring {}", b);
  return true;
}

}  // namespace syncscope::fixes::offload::detail
