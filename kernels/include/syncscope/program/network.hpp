// The network a reference step builds, parameter by parameter: names, element counts, what
// trains and how the frozen base is stored. One list for the LibTorch step (make_weights
// builds exactly these, in this order), the step program's optimizer, and results.json's
// `network` block. Torch-free.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "syncscope/program/step_options.hpp"

namespace syncscope::program {

enum class ParamStorage : std::uint8_t {
  Dense,  // the compute dtype (fp32 on CPU by default, bf16 on CUDA)
  Nf4,    // 4-bit NF4 codes + absmax per 64 values (bitsandbytes layout); qlora bases
};

struct ParamInfo {
  std::string name;  // "embed_tokens", "layers.0.q_proj", "layers.0.q_proj.lora_A", ...
  std::vector<std::int64_t> shape;
  std::int64_t numel = 0;
  bool trainable = true;  // AdamW updates it
  ParamStorage storage = ParamStorage::Dense;
};

// Every parameter of the network for these options (effective_layers() deep). With tied
// embeddings the LM head is "embed_tokens" itself and is not listed twice.
std::vector<ParamInfo> network_parameters(const StepOptions& options);

// The frozen base as the model's config class defines it (model_traits.hpp), at the same
// depth, without adapters: every bias, sink and norm the architecture has, whether or not the
// step builds it. At full depth its count is the one published with the model.
std::vector<ParamInfo> architecture_parameters(const StepOptions& options);

struct NetworkSummary {
  std::int64_t parameters = 0;            // every element the step builds, adapters included
  std::int64_t trainable_parameters = 0;  // what AdamW updates
  bool tied_embeddings = false;
  std::string training;  // "full" | "lora" | "qlora"
  // The architecture's own base (architecture_parameters), and what of it the
  // step leaves out (kinds such as "q_proj.bias", and their values over every layer).
  std::int64_t base_parameters = 0;
  std::vector<std::string> step_omits;
  std::int64_t omitted_parameters = 0;
};
NetworkSummary network_summary(const StepOptions& options);

// True when bitsandbytes' 4-bit conversion (it replaces nn.Linear modules) reaches the
// routed experts: transformers 4.x holds Mixtral's, Qwen-MoE's, OLMoE's and DeepSeek's
// experts as one nn.Linear per projection per expert; gpt-oss and Llama 4 hold them as
// fused 3-D parameters, which stay in the compute dtype.
bool experts_quantized(const scenario::ModelShape& model);

// Bytes of one NF4-stored weight of `numel` elements: numel/2 code bytes plus, per block of
// 64, an fp32 absmax (4 bytes) or, with double quantization, an 8-bit code (1 byte) plus an
// fp32 absmax per 256 blocks and one fp32 offset.
double nf4_storage_bytes(std::int64_t numel, bool double_quant);

}  // namespace syncscope::program
