// The logging fix in the step program and the run plan: its step option (the variant and
// logging_steps, kept in StepOptions::fix_variants / fix_numbers as every fix's are) and its operators at the
// optimizer's two points (program_layer.hpp).
#include <fmt/format.h>

#include <cmath>

#include "step_internal.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/fixes/logging/logging.hpp"
#include "syncscope/program/network.hpp"
#include "syncscope/program/program_layer.hpp"
#include "syncscope/program/step_options.hpp"

namespace syncscope::fixes::logging::detail {

namespace {

enum class Variant : std::uint8_t { Item = 0, Every = 1, Deferred = 2 };

// The trainer's logging window N. Bounded: a window longer than a run's steps would never log.
int logging_steps(const scenario::Scenario& s) {
  for (const auto& f : s.fixes) {
    if (f.fix != kLogging) continue;
    // Checked when the scenario loads (FixSpec::number_keys); again here for a scenario built
    // in code.
    const double n = f.number("logging_steps");
    SYNCSCOPE_INPUT_ERROR_IF(!(kLoggingSteps.contains(n) && n == std::floor(n)),
                             fmt::format("{}: fixes.logging.logging_steps: expected a whole number of steps in "
                                         "[{:g}, {:g}], got {}",
                                         s.source.string(), kLoggingSteps.lo, kLoggingSteps.hi, n));
    return static_cast<int>(n);
  }
  return kDefaultLoggingSteps;
}

}  // namespace

void set_step_option(program::StepOptions& o, const StepOptionContext& c) {
  // Runs of the other fixes keep the step as it was (one loss read, no clipping): the fix is
  // applied only to its own runs.
  if (!c.variant) {
    o.fix_variants.erase(kLogging);
    o.fix_numbers.erase(kLogging);
    return;
  }
  const int n = logging_steps(c.scenario);
  // The mean step of a run covers whole logging windows only: a run of 5 steps with a read
  // every 10 would show no read at all.
  SYNCSCOPE_INPUT_ERROR_IF(
      static_cast<Variant>(*c.variant) == Variant::Every && c.scenario.measure.repeat_steps % n != 0,
      fmt::format("{}: fixes.logging.logging_steps {} does not divide measure.repeat_steps {}: the measured steps "
                  "must hold whole logging windows (set repeat_steps to a multiple of {})",
                  c.scenario.source.string(), n, c.scenario.measure.repeat_steps, n));
  o.fix_variants[kLogging] = *c.variant;
  o.fix_numbers[kLogging]["logging_steps"] = n;
}

std::string step_option_name(const program::StepOptions& o) {
  const auto v = o.fix_variant(kLogging);
  return v ? fix_spec(kLogging).variant_name(*v) : "";
}

void program_point(program::ProgramLayerBuilder& b, program::ProgramPoint at) {
  const auto applied = b.options().fix_variant(kLogging);
  if (!applied) return;  // not applied in this run
  const auto v = static_cast<Variant>(*applied);
  const int eb = b.element_bytes();
  if (at == program::ProgramPoint::BeforeOptimizer) {
    // torch.nn.utils.clip_grad_norm_ (foreach): a norm per gradient, the norm of the norms,
    // the clip coefficient clamped at 1, and every gradient scaled by it. No host read.
    double elems = 0;
    int tensors = 0;
    for (const auto& p : program::network_parameters(b.options()))
      if (p.trainable) {
        elems += static_cast<double>(p.numel);
        ++tensors;
      }
    b.push_range("clip_grad_norm_");
    b.bookkeeping("logging.clip._foreach_norm", elems, elems * eb + tensors * 4.0);
    b.bookkeeping("logging.clip.stack_norm", tensors, tensors * 8.0);
    b.bookkeeping("logging.clip.coef_clamp", 1, 16);
    b.bookkeeping("logging.clip._foreach_mul_", elems, 2 * elems * eb);
    b.pop_range();
    return;
  }
  if (at != program::ProgramPoint::AfterOptimizer) return;
  b.take_loss_read();
  b.push_range("logging");
  switch (v) {
    case Variant::Item:
      // logging_steps = 1: the trainer's two reads, each a D2H copy and a stream sync.
      b.host_read("aten::item loss", eb);
      b.host_read("aten::item grad_norm", 4);
      break;
    case Variant::Every: {
      // tr_loss += loss on the device every step; the reads on the last step of each window.
      b.bookkeeping("logging.tr_loss.add_", 1, 3.0 * eb);
      const int n = static_cast<int>(b.options().fix_numbers.at(kLogging).at("logging_steps"));
      b.set_issue_period(n);
      b.bookkeeping("logging.tr_loss.mean", 1, 2.0 * eb);
      b.host_read("aten::item loss", eb);
      b.host_read("aten::item grad_norm", 4);
      b.bookkeeping("logging.tr_loss.sub_", 1, 3.0 * eb);
      b.set_issue_period(1);
      break;
    }
    case Variant::Deferred: {
      // Read the previous step's values (their event is long done: no wait on this step's
      // work), then stage this step's into pinned memory behind an event.
      std::any& state = b.fix_state(kLogging);
      if (!state.has_value()) state = b.new_event("logging.values_in_pinned");
      const int ev = std::any_cast<int>(state);
      b.event_sync(ev);
      b.bookkeeping("logging.stack_loss_grad_norm", 2, 4.0 * eb + 8);
      b.device_to_pinned("Memcpy DtoH (Device -> Pinned) logging values", 8);
      b.record_event(ev);
      break;
    }
  }
  b.pop_range();
}

}  // namespace syncscope::fixes::logging::detail
