#include "syncscope/sim/memory_estimate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "syncscope/core/bounds.hpp"
#include "syncscope/kernels/program.hpp"
#include "syncscope/kernels/step_program.hpp"
#include "syncscope/sim/simulator.hpp"

namespace syncscope::sim {

namespace {

// The ops of the program at `layers` layers over `sequences` sequences of the same tokens.
double ops_of(const kernels::StepOptions& base, int layers, int sequences) {
  kernels::StepOptions o = base;
  o.layers = layers;
  const int t = o.batch.packed_tokens;
  o.batch.distribution = "list";
  o.batch.lengths.clear();
  for (int i = 0; i < sequences; ++i) o.batch.lengths.push_back(t / sequences + (i < t % sequences ? 1 : 0));
  return static_cast<double>(kernels::build_step_program(o).ops.size());
}

}  // namespace

std::uint64_t estimate_step_program_ops(const kernels::StepOptions& options) {
  const int layers = kernels::effective_layers(options);
  const int sequences = static_cast<int>(kernels::batch_lengths(options, 0).size());
  const int l2 = std::min(layers, 2), n2 = std::min({sequences, options.batch.packed_tokens, 2});
  const double o11 = ops_of(options, 1, 1);
  const double per_layer = l2 > 1 ? std::max(0.0, ops_of(options, 2, 1) - o11) : 0.0;
  const double per_sequence = n2 > 1 ? std::max(0.0, ops_of(options, 1, 2) - o11) : 0.0;
  const double per_both =
      l2 > 1 && n2 > 1 ? std::max(0.0, ops_of(options, 2, 2) - ops_of(options, 2, 1) - ops_of(options, 1, 2) + o11) : 0.0;
  const double L = layers - 1.0, n = sequences - 1.0;
  // 10% margin: some per-layer choices are not exactly linear (gpt-oss alternates
  // sliding-window layers; the reload ring starts and ends with the model), measured under
  // 4% on the shipped scenarios (tests/model/test_safety.cpp).
  return static_cast<std::uint64_t>(std::ceil(1.1 * (o11 + L * per_layer + n * per_sequence + L * n * per_both)));
}

void check_simulation_memory(const kernels::StepOptions& options, int steps, const std::string& what) {
  const std::uint64_t ops = estimate_step_program_ops(options);
  // The program itself: one Op (with its name) per op.
  const double program = static_cast<double>(ops) * (sizeof(program::Op) + 48.0);
  bounds::check_memory(program + simulation_bytes(ops, steps),
                       fmt::format("{}: simulating {} step(s) of about {} ops each", what, steps, ops),
                       "run fewer steps (measure.repeat_steps, --repeats), fewer layers (--layers) or fewer, longer "
                       "sequences (batch.min_len)");
}

}  // namespace syncscope::sim
