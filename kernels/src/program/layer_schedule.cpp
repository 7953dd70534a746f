#include "syncscope/program/layer_schedule.hpp"

#include "syncscope/core/error.hpp"

namespace syncscope::program {

Choreography build_plain_choreography(int layers) {
  SYNCSCOPE_THROW_IF(layers <= 0, "build_plain_choreography: layers must be positive");
  Choreography c;
  c.plan.layers = layers;
  c.plan.first_resident = 0;
  for (int l = 0; l < layers; ++l) c.steps.push_back({ChoreoKind::ForwardLayer, l});
  c.steps.push_back({ChoreoKind::Head});
  for (int l = layers - 1; l >= 0; --l) c.steps.push_back({ChoreoKind::BackwardLayer, l});
  return c;
}

}  // namespace syncscope::program
