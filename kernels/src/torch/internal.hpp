// Internals of the LibTorch reference step, shared by its sources, the tests and the
// benchmarks (which include this private header through kernels/src).
#pragma once

#include <torch/torch.h>

#include <any>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "syncscope/kernels/step.hpp"
#include "syncscope/kernels/torch_step_point.hpp"
#include "syncscope/program/layer_schedule.hpp"

namespace syncscope::kernels::detail {

// A device context wired to counters of its own (CPU, fp32 unless set), for the tests and
// benchmarks that drive a fix's LibTorch code or a layer without a ReferenceStep.
struct StandaloneCtx {
  SyncCounts syncs;
  int builds = 0;
  Ranges ranges;
  Ctx ctx;
  StandaloneCtx() {
    ctx.syncs = &syncs;
    ctx.metadata_builds = &builds;
    ctx.ranges = &ranges;
  }
  StandaloneCtx(const StandaloneCtx&) = delete;
  StandaloneCtx& operator=(const StandaloneCtx&) = delete;
};

// The copy stream a layer choreography runs on (program::Choreography, built by whichever
// fix schedules the layers): executes its primitives, CUDA streams/events/async copies, or
// plain copies on CPU (where every op completes in order, so the choreography is trivially
// safe there).
class CopyStream {
 public:
  CopyStream(const program::Choreography& choreo, std::int64_t rows, std::int64_t cols, Ctx& ctx);
  ~CopyStream();
  CopyStream(const CopyStream&) = delete;
  CopyStream& operator=(const CopyStream&) = delete;

  void record_main(int event);
  void record_copy(int event);
  void copy_waits(int event);
  void main_waits(int event);
  void to_host(int layer, const torch::Tensor& input);  // D2H on the copy stream
  void reload(int layer, int buffer);                   // H2D on the copy stream
  const torch::Tensor& ring(int buffer) const { return ring_.at(static_cast<std::size_t>(buffer)); }
  const torch::Tensor& host_slot(int layer) const { return host_.at(static_cast<std::size_t>(layer)); }

 private:
  bool cuda_ = false;
  void* copy_stream_ = nullptr;
  std::vector<void*> events_;
  std::vector<torch::Tensor> host_;  // pinned on CUDA
  std::vector<torch::Tensor> ring_;
};

// A frozen base weight in NF4 as bitsandbytes stores it (reference.hpp Nf4Tensor), on the
// device: codes [ceil(n/2)] uint8 and the per-64 absmax fp32 (resolved), or with double
// quantization the 8-bit absmax codes, their per-256 fp32 scales, the offset and the map.
struct Nf4Weight {
  std::int64_t rows = 0, cols = 0;
  torch::Tensor codes, absmax;               // absmax: fp32 [blocks] (undefined with double quant)
  torch::Tensor absmax_codes, absmax2, map;  // double quantization
  double offset = 0;
  bool defined() const { return codes.defined(); }
};

// A projection [out, in]: dense `w` (trainable in full fine-tuning, frozen otherwise) or an
// NF4 base, plus the LoRA adapter A [r, in], B [out, r] with scale alpha / r when targeted.
struct LinearWeight {
  torch::Tensor w;
  Nf4Weight nf4;
  torch::Tensor lora_a, lora_b;
  double scale = 0;
};

// Model weights and the layer / head computations.
struct LayerWeights {
  torch::Tensor input_norm, q_norm, k_norm, post_norm;
  LinearWeight q, k, v, o;
  LinearWeight gate, up, down;  // dense MLP: [I, H], [I, H], [H, I]
  torch::Tensor router;         // MoE: [E, H]
  ExpertWeights experts;        // the routing fix's hook runs them (TorchLayerContext)
};

struct ModelWeights {
  torch::Tensor embed, final_norm, lm_head;  // lm_head is embed itself when tied
  std::vector<LayerWeights> layers;
  // What trains (AdamW's parameters; gradients() and parameters() report these), in
  // network_parameters() order: everything in full fine-tuning, the adapters otherwise.
  std::vector<std::pair<std::string, torch::Tensor>> named;
  std::int64_t frozen_elements = 0;  // elements of the frozen base (dense or NF4)
};

// NF4 on the device: quantize like bitsandbytes' quantize_4bit (blocks of 64, nearest code by
// the midpoints) with torch ops, and dequantize into ctx.dtype (our CUDA kernel on CUDA, the
// CPU reference's arithmetic with torch ops on CPU).
Nf4Weight quantize_nf4(const torch::Tensor& w, bool double_quant);
torch::Tensor dequantize_nf4(const Nf4Weight& w, const Ctx& ctx);
// y = x W^T for an NF4 W that is dequantized in forward and again in backward (as
// bitsandbytes' MatMul4Bit does), never kept; the weight gets no gradient.
torch::Tensor nf4_linear(const torch::Tensor& x, const Nf4Weight& w, const Ctx& ctx);
// The projection with its adapter: base(x) + (x A^T) B^T * scale.
torch::Tensor apply_linear(const LinearWeight& l, const torch::Tensor& x, const Ctx& ctx);

ModelWeights make_weights(const program::StepOptions& options, int layers, const Ctx& ctx);

struct Rope {
  torch::Tensor cos, sin;  // [T, 1, head_dim], dtype
};
Rope rope_tables(const torch::Tensor& position_ids, const scenario::ModelShape& model, const Ctx& ctx);

torch::Tensor rmsnorm(const torch::Tensor& x, const torch::Tensor& w, double eps, const Ctx& ctx);
// One decoder layer. Every registered fix's torch_layer_point runs at BeforeAttention (the
// attention mask) and, in MoE layers, at ExpertDispatch (the experts), with `fix_states` as
// their state across layers and steps (layer_points.cpp).
torch::Tensor layer_forward(const program::StepOptions& options, int layer, const LayerWeights& w,
                            const torch::Tensor& x, const PackedBatch& batch, const Rope& rope,
                            std::map<fixes::Fix, std::any>& fix_states, Ctx& ctx);
// The fixes' hooks at those two points (layer_points.cpp): the mask and the experts' output,
// Error naming the missing hook when no registered fix sets them.
torch::Tensor fix_attention_mask(const program::StepOptions& options, int layer, int window, const PackedBatch& batch,
                                 std::map<fixes::Fix, std::any>& fix_states, Ctx& ctx);
torch::Tensor fix_expert_dispatch(const program::StepOptions& options, int layer, const torch::Tensor& x,
                                  const torch::Tensor& expert_ids, const torch::Tensor& weights,
                                  const ExpertWeights& experts, const PackedBatch& batch,
                                  std::map<fixes::Fix, std::any>& fix_states, Ctx& ctx);
torch::Tensor head_loss(const program::StepOptions& options, const ModelWeights& w, const torch::Tensor& x,
                        const torch::Tensor& labels, const Ctx& ctx);

// The packer: token ids, labels (next token within a sequence, -100 at each sequence's
// last token), positions restarting per sequence, from lengths and a seed.
struct HostBatch {
  std::vector<std::int32_t> lengths;
  torch::Tensor input_ids, labels, position_ids, seq_lengths;  // host (pinned on CUDA)
};
HostBatch pack_batch(const std::vector<int>& lengths, int vocab, std::uint64_t seed, bool pinned);
PackedBatch upload(const HostBatch& host, const Ctx& ctx, std::uint64_t generation);

torch::ScalarType parse_dtype(const std::string& dtype);

}  // namespace syncscope::kernels::detail
