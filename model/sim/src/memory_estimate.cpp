#include "syncscope/sim/memory_estimate.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "syncscope/core/bounds.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/fixes/fix_spec.hpp"
#include "syncscope/program/layer_schedule.hpp"
#include "syncscope/program/network.hpp"
#include "syncscope/program/program.hpp"
#include "syncscope/program/program_layer.hpp"
#include "syncscope/program/step_program.hpp"
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

namespace {

// The checkpointing mode and, for "offload", the plan of the fix that schedules the layers:
// one walk of the registry for both (estimate_step_memory needs the two together).
std::string checkpointing(const program::StepOptions& o, program::LayerPlan* plan) {
  program::ProgramSchedule schedule;  // a fix that schedules the layers offloads their inputs
  if (program::fix_program_schedule(o, schedule)) {
    if (plan != nullptr) *plan = schedule.choreography.plan;
    return "offload";
  }
  return o.training.gradient_checkpointing == "full" ? "full" : "none";
}

}  // namespace

std::string checkpointing_mode(const program::StepOptions& o) { return checkpointing(o, nullptr); }

std::string describe_checkpointing(const std::string& mode) {
  if (mode == "offload") return "gradient checkpointing offload (layer inputs in host memory, reloaded for recompute)";
  if (mode == "full") return "gradient checkpointing full (layer inputs kept on the device, layers recomputed)";
  return "gradient checkpointing none (every layer's activations kept)";
}

double StepMemory::total() const {
  return std::accumulate(parts.begin(), parts.end(), 0.0, [](double a, const auto& p) { return a + p.second; });
}

namespace {

// The CUDA context and the libraries' handles the process holds before its first tensor:
// 723 MiB measured on the PyTorch forum ("What is the reason for pytorch's GPU memory
// floor?", discuss.pytorch.org/t/73021: x = th.randn(1).cuda() takes a process from 0 to
// 723 MiB). A floor, not a function of the model.
constexpr double kCudaContextBytes = 723.0 * 1024 * 1024;

// PyTorch's caching allocator (c10/cuda/CUDACachingAllocator.cpp): every block is a
// multiple of 512 bytes (kMinBlockSize), and an allocation above 1 MiB (kSmallSize) is
// rounded up to a multiple of 2 MiB (kRoundLarge). The slack of one tensor of `bytes`.
double allocator_slack(double bytes) {
  constexpr double kMin = 512, kSmall = 1048576, kRound = 2097152;
  const double unit = bytes > kSmall ? kRound : kMin;
  return std::ceil(bytes / unit) * unit - bytes;
}

// LoRA targets as PEFT matches them: a module whose last name component is a target.
bool targeted(const program::StepOptions& o, const std::string& kind) {
  const auto dot = kind.rfind('.');
  const std::string last = dot == std::string::npos ? kind : kind.substr(dot + 1);
  const auto& t = o.training.target_modules;
  return std::find(t.begin(), t.end(), last) != t.end();
}

// "layers.3.q_proj" -> "q_proj".
std::string kind_of(const std::string& name) {
  if (name.rfind("layers.", 0) != 0) return name;
  const auto dot = name.find('.', 7);
  return dot == std::string::npos ? name : name.substr(dot + 1);
}

// Elements of the LoRA adapters PEFT adds for the targets: r x (in + out) per targeted
// nn.Linear. Routed experts count when transformers holds them as nn.Linear modules named
// gate_proj/up_proj/down_proj (Qwen-MoE, OLMoE, DeepSeek: one adapter per expert); Mixtral's
// are w1/w2/w3 and gpt-oss's and Llama 4's fused parameters, which the default targets miss.
double adapter_values(const program::StepOptions& o, const std::vector<program::ParamInfo>& arch) {
  if (!o.training.adapters()) return 0;
  const double r = o.training.lora_rank;
  const std::string family = scenario::model_traits(o.model).family;
  const bool named_experts = family == "qwen2_moe" || family == "qwen3_moe" || family == "olmoe" ||
                             family == "deepseek_v2" || family == "deepseek_v3";
  double n = 0;
  for (const auto& p : arch) {
    const std::string kind = kind_of(p.name);
    if (p.shape.size() == 2 && kind.find("norm") == std::string::npos && kind != "embed_tokens" && kind != "lm_head" &&
        kind != "router" && targeted(o, kind)) {
      n += r * static_cast<double>(p.shape[0] + p.shape[1]);
    } else if (p.shape.size() == 3 && named_experts && kind.rfind("experts.", 0) == 0) {
      const std::string proj = kind.substr(8) + "_proj";  // experts.gate -> gate_proj
      if (std::find(o.training.target_modules.begin(), o.training.target_modules.end(), proj) !=
          o.training.target_modules.end())
        n += r * static_cast<double>(p.shape[0]) * static_cast<double>(p.shape[1] + p.shape[2]);
    }
  }
  return n;
}

// The attention's tensors one token keeps for the backward, in values: the two norms'
// outputs and what the projections, RoPE and SDPA save.
double attention_values(const scenario::ModelShape& m) {
  const double H = m.hidden_size, nh = m.num_attention_heads;
  if (m.is_mla()) {
    // Multi-head latent attention as DeepseekV2Attention.forward (transformers
    // modeling_deepseek_v2.py; DeepseekV3Attention is the same) computes it: q_a_proj's output
    // and q_a_layernorm's (q_b_proj's input), unless q_lora_rank is null (q_proj direct);
    // kv_a_proj_with_mqa's compressed_kv [kv_lora_rank + qk_rope_head_dim], kv_a_layernorm's
    // output (kv_b_proj's input) and the rotated k_pe [qk_rope_head_dim], shared by every head;
    // per head: q [qk_head_dim], the rotated q_pe [qk_rope_head_dim], kv_b_proj's output
    // [qk_nope_head_dim + v_head_dim] (k_nope and value are views of it), query_states and
    // key_states (torch.cat: new tensors, what SDPA saves) [qk_head_dim each], and the
    // attention output [v_head_dim], o_proj's input.
    const double qr = m.q_lora_rank, kvr = m.kv_lora_rank, rope = m.qk_rope_head_dim, qk = nh * m.head_dim;
    return 2 * H + (qr > 0 ? 2 * qr : 0) + (kvr + rope) + kvr + rope + nh * rope + qk +
           nh * (m.qk_nope_head_dim + m.v_head_dim) + 2 * qk + nh * m.v_head_dim;
  }
  // q_proj's output, the rotated q and the attention output; k_proj's, v_proj's and the
  // rotated k; with grouped kv heads, k and v repeated to every head (repeat_kv).
  const double q = nh * m.head_dim, kv = static_cast<double>(m.num_key_value_heads) * m.head_dim;
  return 2 * H + 3 * q + 3 * kv + (q != kv ? 2 * q : 0);
}

// Layer `layer`'s activations kept for its backward, in bytes (see the header): its
// attention, its MLP (the routed experts with their router and shared experts on an MoE
// layer, the dense MLP on a dense one), the packed [T, T] mask.
double layer_activation_bytes(const program::StepOptions& o, int layer) {
  const scenario::ModelShape& m = o.model;
  const double b = program::dtype_bytes(o.dtype);
  const double T = o.batch.packed_tokens, H = m.hidden_size, E = m.num_local_experts, k = m.num_experts_per_tok;
  double layer_values = T * attention_values(m);
  if (m.moe_layer(layer)) {
    const double I = m.intermediate_size;
    layer_values += T * k * (H + 3 * I) + 2 * T * E;
    if (m.shared_expert_intermediate_size > 0) layer_values += T * 3.0 * m.shared_expert_intermediate_size;
  } else {
    const double I = m.is_moe() && m.dense_intermediate_size > 0 ? m.dense_intermediate_size : m.intermediate_size;
    layer_values += T * (3 * I + H);
  }
  double bytes = layer_values * b + T * T * b;  // the packed [T, T] mask
  if (program::is_gpt_oss(m) && o.gpt_oss_unsloth_form)
    bytes += 2.0 * m.num_attention_heads * T * T * 4;  // eager scores and probabilities, fp32
  return bytes;
}

}  // namespace

StepMemory estimate_step_memory(const program::StepOptions& o) {
  const scenario::ModelShape& m = o.model;
  const double b = program::dtype_bytes(o.dtype);
  const int L = program::effective_layers(o);
  const bool full = !o.training.adapters();
  const bool eight_bit = o.training.optimizer == "adamw_8bit";
  double weights = 0, trainable = 0, slack = 0, nf4_values = 0, dense_values = 0;
  // The base as the architecture has it (biases and sinks included: a real checkpoint
  // loads them whether or not our step computes with them).
  const auto arch = program::architecture_parameters(o);
  for (const auto& p : arch) {
    const double n = static_cast<double>(p.numel);
    const bool nf4 = p.storage == program::ParamStorage::Nf4;
    const double w = nf4 ? program::nf4_storage_bytes(p.numel, o.training.double_quant) : n * b;
    weights += w;
    slack += allocator_slack(w);
    (nf4 ? nf4_values : dense_values) += n;
    if (full) {
      trainable += n;
      // Its gradient, fp32 master copy and two moments are tensors of their own.
      slack +=
          allocator_slack(n * b) + (b < 4 ? allocator_slack(4 * n) : 0) + 2 * allocator_slack(eight_bit ? n : 4 * n);
    }
  }
  // Adapters: PEFT casts bf16/fp16 adapter weights to fp32 (LoraModel's
  // autocast_adapter_dtype=True), so they, their gradients and their moments are fp32.
  const double adapter_n = adapter_values(o, arch);
  const double adapters = 4 * adapter_n;
  if (!full) trainable = adapter_n;
  // Full fine-tune under bf16/fp16 mixed precision: gradients in the compute dtype, an fp32
  // master copy for the optimizer (none when the weights are fp32 already); adapters: fp32.
  const double gradients = full ? trainable * b : 4 * adapter_n;
  const double master = full && b < 4 ? 4 * trainable : 0;
  // torch AdamW: exp_avg and exp_avg_sq in fp32 (8 B per value); bitsandbytes AdamW8bit:
  // one byte each plus an fp32 absmax per block of 2048 values (bnb.optim's block_wise).
  const double optimizer = eight_bit ? trainable * (2 + 2 * 4.0 / 2048) : 8 * trainable;
  const double logits = 2.0 * o.batch.packed_tokens * m.vocab_size * 4;  // logits and their gradient, fp32
  const double input = static_cast<double>(o.batch.packed_tokens) * m.hidden_size * b;  // one layer input
  // Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer Models"
  // (arXiv 2205.05198), section 4 and Table 2: without recomputation every layer keeps its
  // activations for the backward (the sum over layers); with full recomputation only each
  // layer's input is stored (2sbh bytes per layer in 16 bits: T x hidden here) and one layer's
  // activations exist at a time, while it is recomputed and back-propagated (the largest).
  // transformers' gradient_checkpointing wraps each decoder layer (GradientCheckpointingLayer,
  // torch.utils.checkpoint), so it keeps exactly the layer inputs; Unsloth's offloaded form
  // moves them to host memory and reloads each into a ring of device buffers.
  double all_layers = 0, largest_layer = 0;
  for (int l = 0; l < L; ++l) {
    const double x = layer_activation_bytes(o, l);
    all_layers += x;
    largest_layer = std::max(largest_layer, x);
  }
  double checkpoints = 0, activations = 0;
  program::LayerPlan plan;
  const std::string mode = checkpointing(o, &plan);
  if (mode == "none") {
    activations = all_layers + logits;  // no checkpointing: every layer's tensors stay
  } else if (mode == "full") {
    activations = largest_layer + logits;
    checkpoints = L * input;  // every layer input on the device
  } else {
    activations = largest_layer + logits;
    // The reload ring the fix's plan holds (1, 2, or k+1 for prefetch); inputs at or under
    // Unsloth's minimum are not offloaded and stay on the device (the plan offloads none).
    checkpoints = plan.offloaded() == 0 ? L * input : plan.ring_buffers * input;
  }
  StepMemory r;
  r.checkpointing = mode;
  r.parts = {{"weights", weights},
             {"adapters", adapters},
             {"gradients", gradients},
             {"fp32 master weights", master},
             {eight_bit ? "8-bit AdamW moments" : "AdamW moments (fp32)", optimizer},
             {"activations", activations},
             {"checkpoints", checkpoints},
             {"CUDA context", kCudaContextBytes},
             {"allocator rounding", slack}};
  if (o.training.mode == "qlora") {
    r.notes.push_back(fmt::format(
        "qlora: bitsandbytes stores every nn.Linear of the decoder layers in NF4 ({:.2f}B values{}); the embeddings, "
        "norms{} and LM head stay in {} ({:.2f}B values)",
        nf4_values / 1e9,
        m.is_moe() ? (program::experts_quantized(m) ? ", the routed experts included: transformers holds them as one "
                                                      "nn.Linear per expert"
                                                    : "")
                   : "",
        !m.is_moe()                     ? ""
        : program::experts_quantized(m) ? ", router"
                                        : ", router, the routed experts (fused 3-D parameters, which bitsandbytes does "
                                          "not convert)",
        o.dtype, dense_values / 1e9));
  }
  return r;
}

namespace {

// The two largest parts, for a refusal ("weights 16.1 GB, AdamW moments (fp32) 64.2 GB").
std::string largest_parts(const StepMemory& m) {
  auto parts = m.parts;
  std::sort(parts.begin(), parts.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string out;
  for (std::size_t i = 0; i < parts.size() && i < 3; ++i)
    if (parts[i].second > 0)
      out += fmt::format("{}{} {}", out.empty() ? "" : ", ", parts[i].first, size_text(parts[i].second));
  return out;
}

// What would fit, tried one change at a time: adapters (lora, then qlora), 8-bit AdamW,
// checkpoint offload, fewer layers.
std::vector<std::string> what_would_fit(const program::StepOptions& o, double capacity) {
  std::vector<std::string> fits;
  auto tried = [&](program::StepOptions t, const std::string& what) {
    const double need = estimate_step_memory(t).total();
    const bool fused = t.training.mode == "qlora" && o.model.is_moe() && !program::experts_quantized(o.model);
    fits.push_back(fmt::format("{} needs {:.1f} GB{}", what, gb(need),
                               need <= capacity ? " (fits)"
                               : fused          ? ", still over: its experts' 3-D tensors stay in the compute dtype "
                                                  "(bitsandbytes converts nn.Linear modules only)"
                                                : ", still over"));
  };
  for (const char* mode : {"lora", "qlora"}) {
    if (o.training.mode == mode || (o.training.mode == "qlora" && std::string(mode) == "lora")) continue;
    program::StepOptions q = o;
    q.training.mode = mode;
    if (q.training.target_modules.empty())
      q.training.target_modules = {std::begin(scenario::kLoraModules), std::end(scenario::kLoraModules)};
    tried(q, fmt::format("training: {}", mode));
  }
  if (o.training.optimizer != "adamw_8bit") {
    program::StepOptions e = o;
    e.training.optimizer = "adamw_8bit";
    tried(e, "optimizer: adamw_8bit");
  }
  if (checkpointing_mode(o) == "none") {
    program::StepOptions c = o;
    c.training.gradient_checkpointing = "full";
    tried(c, "gradient_checkpointing: full (layer inputs kept, layers recomputed)");
  }
  if (checkpointing_mode(o) != "offload") {
    // `offload: true` as a scenario says it: each fix that schedules the layers takes its
    // default for a run of another fix (offload's: Unsloth's double-buffered reloads).
    program::StepOptions f = o;
    f.training.gradient_checkpointing = "offload";
    scenario::Scenario s;
    s.offload = true;
    s.model = o.model;
    std::string defaults;  // what each scheduling fix took, as the run plan names it
    for (const fixes::FixSpec& spec : fixes::fix_registry())
      if (spec.build_program_schedule && spec.set_step_option) {
        spec.set_step_option(f, {s, std::nullopt});
        if (spec.step_option_name) defaults += fmt::format(", {} {}", spec.name, spec.step_option_name(f));
      }
    tried(f, "offload: true (checkpointing" + defaults + ")");
  }
  // The deepest run that fits (the embedding and head stay whatever the depth).
  const int L = program::effective_layers(o);
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
  return fits;
}

}  // namespace

std::string describe_step_memory(const program::StepOptions& o, double capacity, const std::string& gpu) {
  const StepMemory need = estimate_step_memory(o);
  std::string notes;
  for (const auto& n : need.notes) notes += "; " + n;
  return fmt::format("needs {:.1f} GB of the {} profile's {:.1f} GB ({}, {} training{}, {}{})", gb(need.total()), gpu,
                     gb(capacity), parts_text(need), o.training.mode,
                     o.training.adapters() ? "" : fmt::format(", {}", o.training.optimizer),
                     describe_checkpointing(need.checkpointing), notes);
}

std::string check_step_memory(const program::StepOptions& o, double capacity, const std::string& gpu,
                              const std::string& what, bool force) {
  if (!(capacity > 0)) return "";
  const StepMemory need = estimate_step_memory(o);
  if (need.total() <= capacity) return "";
  const std::vector<std::string> fits = what_would_fit(o, capacity);
  std::string notes;
  for (const auto& n : need.notes) notes += "; " + n;
  const std::string text = fmt::format(
      "{}: the step needs about {:.1f} GB of GPU memory, more than the {} profile's {:.1f} GB; largest: {} ({}; {}{}; "
      "an estimate from the architecture's parameters and the step's shapes, not a measurement). What would fit: {}",
      what, gb(need.total()), gpu, gb(capacity), largest_parts(need), parts_text(need),
      describe_checkpointing(need.checkpointing), notes, fmt::join(fits, "; "));
  if (!force) throw InputError(text + "; or pass --force-memory to simulate it anyway (labelled in every output)");
  return text;
}

}  // namespace syncscope::sim
