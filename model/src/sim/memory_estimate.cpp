#include "syncscope/sim/memory_estimate.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "syncscope/core/bounds.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/kernels/network.hpp"
#include "syncscope/kernels/program.hpp"
#include "syncscope/kernels/step_program.hpp"
#include "syncscope/sim/simulator.hpp"

namespace syncscope::sim {

namespace {

// The ops of the program at `layers` layers over `sequences` sequences of the same tokens.
double ops_of(const program::StepOptions& base, int layers, int sequences) {
  program::StepOptions o = base;
  o.layers = layers;
  const int t = o.batch.packed_tokens;
  o.batch.distribution = "list";
  o.batch.lengths.clear();
  for (int i = 0; i < sequences; ++i) o.batch.lengths.push_back(t / sequences + (i < t % sequences ? 1 : 0));
  return static_cast<double>(program::build_step_program(o).ops.size());
}

}  // namespace

std::uint64_t estimate_step_program_ops(const program::StepOptions& options) {
  const int layers = program::effective_layers(options);
  const int sequences = static_cast<int>(program::batch_lengths(options, 0).size());
  const int l2 = std::min(layers, 2), n2 = std::min({sequences, options.batch.packed_tokens, 2});
  const double o11 = ops_of(options, 1, 1);
  const double per_layer = l2 > 1 ? std::max(0.0, ops_of(options, 2, 1) - o11) : 0.0;
  const double per_sequence = n2 > 1 ? std::max(0.0, ops_of(options, 1, 2) - o11) : 0.0;
  const double per_both =
      l2 > 1 && n2 > 1 ? std::max(0.0, ops_of(options, 2, 2) - ops_of(options, 2, 1) - ops_of(options, 1, 2) + o11)
                       : 0.0;
  const double L = layers - 1.0, n = sequences - 1.0;
  // 10% margin: some per-layer choices are not exactly linear (gpt-oss alternates
  // sliding-window layers; the reload ring starts and ends with the model), measured under
  // 4% on the shipped scenarios (tests/model/test_safety.cpp).
  return static_cast<std::uint64_t>(std::ceil(1.1 * (o11 + L * per_layer + n * per_sequence + L * n * per_both)));
}

void check_simulation_memory(const program::StepOptions& options, int steps, const std::string& what) {
  const std::uint64_t ops = estimate_step_program_ops(options);
  // The program itself: one Op (with its name) per op.
  const double program = static_cast<double>(ops) * (sizeof(program::Op) + 48.0);
  bounds::check_memory(program + simulation_bytes(ops, steps),
                       fmt::format("{}: simulating {} step(s) of about {} ops each", what, steps, ops),
                       "run fewer steps (measure.repeat_steps, --repeats), fewer layers (--layers) or fewer, longer "
                       "sequences (batch.min_len)");
}

namespace {

double gb(double bytes) { return bytes / 1e9; }

// GB (10^9 bytes, as GPU datasheets count) down to 0.1 GB, MB below.
std::string size_text(double bytes) {
  return bytes >= 1e8 ? fmt::format("{:.1f} GB", gb(bytes)) : fmt::format("{:.1f} MB", bytes / 1e6);
}

std::string parts_text(const StepMemory& m) {
  std::string out;
  for (const auto& [name, bytes] : m.parts)
    if (bytes > 0) out += fmt::format("{}{} {}", out.empty() ? "" : ", ", name, size_text(bytes));
  return out;
}

}  // namespace

double StepMemory::total() const {
  return std::accumulate(parts.begin(), parts.end(), 0.0, [](double a, const auto& p) { return a + p.second; });
}

StepMemory estimate_step_memory(const program::StepOptions& o) {
  const scenario::ModelShape& m = o.model;
  const double b = program::dtype_bytes(o.dtype);
  const int L = program::effective_layers(o);
  double weights = 0, adapters = 0, trainable = 0;
  // The base as the architecture has it (biases and sinks included: a real checkpoint
  // loads them whether or not our step computes with them).
  for (const auto& p : program::architecture_parameters(o)) {
    weights += p.storage == program::ParamStorage::Nf4 ? program::nf4_storage_bytes(p.numel, o.training.double_quant)
                                                       : static_cast<double>(p.numel) * b;
    if (!o.training.adapters()) trainable += static_cast<double>(p.numel);
  }
  for (const auto& p : program::network_parameters(o))
    if (p.name.find(".lora_") != std::string::npos) {
      adapters += static_cast<double>(p.numel) * b;
      trainable += static_cast<double>(p.numel);
    }
  const double T = o.batch.packed_tokens, H = m.hidden_size,
               q = static_cast<double>(m.num_attention_heads) * m.head_dim,
               kv = static_cast<double>(m.num_key_value_heads) * m.head_dim, I = m.intermediate_size,
               E = m.num_local_experts, k = m.num_experts_per_tok, V = m.vocab_size;
  // One layer's tensors kept for its backward (elements): normed input and output, q/k/v
  // before and after RoPE, GQA-expanded k/v, attention output; MLP gate/up/product (per
  // routed token for MoE, with the router's fp32 logits counted as two elements each).
  double layer = T * (2 * H + 3 * q + 3 * kv + (q != kv ? 2 * q : 0));
  layer += m.is_moe() ? T * k * (H + 3 * I) + 2 * T * E : T * (3 * I + H);
  double layer_bytes = layer * b + T * T * b;  // the packed [T, T] mask
  if (program::is_gpt_oss(m) && o.gpt_oss_unsloth_form)
    layer_bytes += 2.0 * m.num_attention_heads * T * T * 4;  // eager scores and probabilities, fp32
  const double logits = 2 * T * V * 4;                       // logits and their gradient, fp32
  const double input = T * H * b;                            // one layer input
  double checkpoints = 0, activations = 0;
  if (!o.offload) {
    activations = L * layer_bytes + logits;  // no checkpointing: every layer's tensors stay
  } else {
    activations = layer_bytes + logits;
    const int ring = *o.offload == model::OffloadVariant::Single   ? 1
                     : *o.offload == model::OffloadVariant::Double ? 2
                                                                   : o.prefetch_depth + 1;
    // Inputs at or under Unsloth's minimum stay on the device (offload_min_bytes).
    checkpoints = input <= o.offload_min_bytes ? L * input : ring * input;
  }
  StepMemory r;
  r.parts = {{"weights", weights},         {"adapters", adapters},
             {"gradients", trainable * b}, {"optimizer", 2 * trainable * b},
             {"activations", activations}, {"checkpoints", checkpoints}};
  return r;
}

std::string check_step_memory(const program::StepOptions& o, double capacity, const std::string& gpu,
                              const std::string& what, bool force) {
  if (!(capacity > 0)) return "";
  const StepMemory need = estimate_step_memory(o);
  if (need.total() <= capacity) return "";
  const int L = program::effective_layers(o);
  std::vector<std::string> fits;
  if (o.training.mode != "qlora") {
    program::StepOptions q = o;
    q.training.mode = "qlora";
    if (q.training.target_modules.empty())
      q.training.target_modules = {std::begin(scenario::kLoraModules), std::end(scenario::kLoraModules)};
    const double t = estimate_step_memory(q).total();
    // bitsandbytes converts nn.Linear layers only: an MoE's 3-D expert tensors stay dense.
    fits.push_back(fmt::format("training: qlora needs {:.1f} GB{}", gb(t),
                               t <= capacity      ? ""
                               : o.model.is_moe() ? ", still over: its experts' 3-D tensors stay in the compute dtype"
                                                  : ", still over"));
  }
  // The deepest run that fits (the embedding and head stay whatever the depth).
  int lo = 0;
  for (int hi = L - 1, l = 1; l <= hi;) {
    const int mid = (l + hi) / 2;
    program::StepOptions d = o;
    d.layers = mid;
    if (estimate_step_memory(d).total() <= capacity) lo = mid, l = mid + 1;
    else hi = mid - 1;
  }
  if (lo > 0) {
    program::StepOptions d = o;
    d.layers = lo;
    fits.push_back(fmt::format("--layers {} of {} ({:.1f} GB)", lo, L, gb(estimate_step_memory(d).total())));
  } else {
    fits.push_back("no depth fits (not even one layer with the embedding and head)");
  }
  if (o.offload) {
    fits.push_back("checkpoint offload is already on");
  } else {
    program::StepOptions f = o;
    f.offload = program::kUnslothDefaultReload;
    const double t = estimate_step_memory(f).total();
    fits.push_back(fmt::format("offload: true (checkpointing, reloads double-buffered) needs {:.1f} GB{}", gb(t),
                               t <= capacity ? "" : ", still over"));
  }
  const std::string text = fmt::format(
      "{}: the step needs about {:.1f} GB of GPU memory, more than the {} profile's {:.1f} GB ({}; an estimate "
      "from the step's parameters and shapes, not a measurement). What would fit: {}",
      what, gb(need.total()), gpu, gb(capacity), parts_text(need), fmt::join(fits, "; "));
  if (!force) throw InputError(text + "; or pass --force-memory to simulate it anyway (labelled in every output)");
  return text;
}

}  // namespace syncscope::sim
