// What one reference training step runs: model shape, packed batch, dtype, device and the
// variant of each fix. Shared by the step-program builder (torch-free, program.hpp) and
// the LibTorch reference step (step.hpp), so both describe the same step. Torch-free.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "syncscope/scenario/scenario.hpp"

namespace syncscope::program {

struct ProgramSchedule;  // program_layer.hpp

struct StepOptions {
  scenario::ModelShape model;
  scenario::BatchSpec batch;
  std::string dtype = "fp32";  // "fp32" | "bf16" | "fp16"
  std::string device = "cpu";  // "cpu" | "cuda"
  int layers = 0;              // decoder layers to run; 0: model.num_hidden_layers
  // Each registered fix's part of the step, keyed by the fix and read and written only by the
  // fix's own folder (its typed accessors, e.g. fixes/offload/offload.hpp) and its hooks; the
  // layers below loop over the registry (fix_spec.hpp) and never name a fix:
  //   fix_variants  the variant (FixSpec::variants index); a fix absent here is not applied
  //                 ("off"), or runs its baseline where the step cannot go without it (packing);
  //   fix_numbers   its numeric settings by key (FixSpec::step_number_keys: range, integer);
  //   fix_words     its word settings by key (FixSpec::step_word_keys: the words allowed).
  // A key absent from fix_numbers / fix_words takes the fix's default. validate() checks
  // every entry against the fix's declarations; the backend wire carries them as they are.
  std::map<fixes::Fix, std::uint8_t> fix_variants{};
  std::map<fixes::Fix, std::map<std::string, double>> fix_numbers{};
  std::map<fixes::Fix, std::map<std::string, std::string>> fix_words{};
  // A fix's entries as its folder's typed accessors read them: nullopt / `otherwise` when
  // absent (the fix not applied, the key left at its default).
  std::optional<std::uint8_t> fix_variant(fixes::Fix fix) const;
  double fix_number(fixes::Fix fix, const std::string& key, double otherwise) const;
  std::string fix_word(fixes::Fix fix, const std::string& key, const std::string& otherwise) const;
  std::uint64_t seed = 0;       // weights, token ids and (with batch.seed) the lengths
  bool nvtx = true;             // emit NVTX ranges (CUDA builds)
  double learning_rate = 1e-4;  // AdamW
  double weight_decay = 0.0;    // AdamW; 0 keeps cross-variant parameter checks simple
  // full | lora | qlora, LoRA rank/alpha/targets, NF4 double quantization
  // (scenario.hpp TrainingSpec). AdamW updates only what trains (adapters under lora/qlora).
  scenario::TrainingSpec training;
  // The first step of a run (ReferenceStep sets it for its own first run()). A fix may run
  // its first step differently: Unsloth's checkpointer still offloads the last layer then
  // (its FIRST_PASS counts the layers; from the second step that input stays on the device).
  bool first_step = false;
  // Step programs only: model gpt-oss's experts and attention as Unsloth runs them (biases,
  // clamped SwiGLU with model.swiglu_limit, fp32 down-projection and weighting, attention
  // sinks in an eager softmax) instead of the reference step's bf16 Llama-style form. The
  // LibTorch step does not implement them; the simulator measures what the difference costs
  // (model/README.md, "Where we differ from Unsloth").
  bool gpt_oss_unsloth_form = false;
};

// gpt-oss (model_type "gpt_oss", or a name containing "gpt-oss"): attention biases, sinks,
// router and expert biases, the clamped SwiGLU.
bool is_gpt_oss(const scenario::ModelShape& model);
// True when `module` ("q_proj", ..., "down_proj") carries a LoRA adapter in these options.
// MoE experts and the router never do (Unsloth's gate/up/down targets name dense MLPs).
bool lora_adapted(const StepOptions& options, const std::string& module);
// True when the base weight of `module` is stored in NF4 (qlora: attention and dense MLP
// projections, as bitsandbytes converts nn.Linear layers; not the LM head, embeddings,
// router or 3-D expert tensors).
bool nf4_quantized(const StepOptions& options, const std::string& module);

// Sets every registered fix's variant in `o` through its set_step_option hook (fix_spec.hpp;
// for a fix without one, the variant alone goes into fix_variants): the fix under test takes `variant`
// (a name from its FixSpec; InputError otherwise), every other fix its default for runs of
// other fixes (each fix's hook reads its own scenario keys: offload's prefetch_depth and
// budget).
void apply_fix_variants(StepOptions& o, const scenario::Scenario& s, fixes::Fix under_test, const std::string& variant);
// "packing=rebuild/offload=double/moe=loop": each registered fix's variant in `o`, in
// registry order (FixSpec::option_name; "off" where a fix is not applied).
std::string fix_variants_key(const StepOptions& o);
// The step's layer schedule from the first registered fix whose build_program_schedule
// gives one (offload's reload choreography): true, with `out` filled; false for plain
// autograd. StepBuilder and the packing fix's visit_windows walk the same one.
bool fix_program_schedule(const StepOptions& o, ProgramSchedule& out);

// True when the step recomputes each layer in the backward: a fix's schedule checkpoints
// (`scheduled`: offload), or the scenario's gradient_checkpointing is "full" (transformers'
// gradient_checkpointing: the layer inputs stay on the device, no copies).
bool recomputes_layers(const StepOptions& options, bool scheduled);

// Layers actually run (options.layers or the model's).
int effective_layers(const StepOptions& options);

// Throws InputError naming the field and the accepted values when an option is invalid
// (unknown variant, shapes that do not divide, top-k > experts, lengths not summing to T).
void validate(const StepOptions& options);
// The fixes' part of it (fix_loops.cpp): each entry of fix_variants, fix_numbers and fix_words
// must belong to a registered fix, a variant must be one of its variants, and a setting one
// its entry declares (FixSpec::step_number_keys / step_word_keys) with a value it allows.
void validate_fix_settings(const StepOptions& options);

// Sequence lengths of the `batch_index`-th packed batch of a run: batch 0 uses
// options.batch as given; later batches (ReferenceStep::next_batch) reseed a "uniform"
// spec deterministically (seed + index) and rotate a "list"/"fixed" spec, so two
// consecutive batches differ in their lengths whenever more than one sequence exists.
std::vector<int> batch_lengths(const StepOptions& options, int batch_index);

// Qwen3, Qwen3-MoE and Gemma 3 apply RMSNorm to q and k per head before RoPE (q_norm/k_norm):
// from the model's traits (model_type's config class, scenario/model_traits.hpp).
bool uses_qk_norm(const scenario::ModelShape& model);

// The sliding window of `layer` as the model's traits place it (every layer for Mistral,
// alternating from layer 0 for Gemma 2 and gpt-oss, layer_types when the config states it),
// or 0 for full attention.
int layer_sliding_window(const scenario::ModelShape& model, int layer);

// Bytes per element of a dtype name ("fp32" 4, "bf16"/"fp16" 2).
int dtype_bytes(const std::string& dtype);

}  // namespace syncscope::program
