// The step program's builder (step_program.cpp: buffers, ranges, primitives, the step's
// skeleton, backward and optimizer; step_layers.cpp: attention, MLP, the MoE block and its
// experts). The fixes' own operators come from their FixSpec hooks (fix_*_program.cpp),
// which drive the builder through ProgramLayerBuilder. Private to syncscope_program.
#pragma once

#include <any>
#include <map>
#include <string>
#include <vector>

#include "syncscope/program/layer_schedule.hpp"
#include "syncscope/program/program_layer.hpp"
#include "syncscope/program/step_options.hpp"
#include "syncscope/program/step_program.hpp"

namespace syncscope::program::detail {

using program::Access;
using program::BufferUse;
using program::Op;
using program::OpKind;
using program::Program;

inline constexpr int kMain = 0;
inline constexpr int kCopy = 1;

// One kernel of a forward pass, remembered so backward can be modelled from it.
struct FwdKernel {
  enum class Kind { Gemm, Attention, Elementwise } kind;
  std::string name;
  double flops = 0;
  double bytes = 0;
  bool frozen = false;       // Gemm of a frozen weight: backward computes the input gradient only
  double dequant_elems = 0;  // NF4 weight: dequantized again before the input-gradient GEMM
  bool fp32 = false;         // runs at the fp32 rate (gpt-oss down-projection as Unsloth runs it)
};

// Builds one step's Program operator by operator, as the LibTorch reference step issues it.
class StepBuilder final : public ProgramLayerBuilder {
 public:
  explicit StepBuilder(const StepOptions& o);

  Program build();

  // ProgramLayerBuilder: what the fixes' layer hooks drive.
  const StepOptions& options() const override { return o_; }
  int layer() const override { return layer_; }
  int tokens() const override { return T_; }
  const std::vector<int>& lengths() const override { return lengths_; }
  int element_bytes() const override { return b_; }
  std::any& fix_state(fixes::Fix fix) override { return fix_state_[fix]; }
  void push_range(const std::string& name) override { push(name); }
  void pop_range() override { pop(); }
  Op& elementwise(const std::string& name, double elems, double bytes_per) override {
    return ew(name, elems, bytes_per);
  }
  Op& bookkeeping(const std::string& name, double elems, double bytes) override { return nograd(name, elems, bytes); }
  Op& gemm(const std::string& name, double m, double n, double k) override;
  Op& host_read(const std::string& aten_op, double bytes) override;
  Op& host_to_device(const std::string& name, double bytes) override {
    return copy(name, kMain, CopyKind::HtoD, MemoryKind::Pageable, bytes);
  }
  void expert(const std::string& p, double rows) override;
  Op& device_to_pinned(const std::string& name, double bytes) override {
    return copy(name, kMain, CopyKind::DtoH, MemoryKind::Pinned, bytes);
  }
  int new_event(const std::string& name) override {
    p_.event_names.resize(static_cast<std::size_t>(p_.num_events));
    p_.event_names.push_back(name);
    return p_.num_events++;
  }
  void record_event(int ev) override { event(OpKind::EventRecord, kMain, ev, "cudaEventRecord"); }
  void event_sync(int ev) override { event(OpKind::EventSync, kMain, ev, "cudaEventSynchronize"); }
  void set_issue_period(int steps) override { period_ = steps < 1 ? 1 : steps; }
  void take_loss_read() override { loss_read_taken_ = true; }

 private:
  int new_buffer(std::string name);

  Op& emit(Op op);
  void push(const std::string& name);
  void pop();

  Op& kernel(const std::string& name, double flops, double bytes, bool tensor_core = false);
  // A kernel that autograd differentiates: remembered for the backward model.
  Op& fwd(FwdKernel::Kind kind, const std::string& name, double flops, double bytes);
  // A GEMM whose weight trains whatever the mode (LoRA adapters).
  Op& trainable_gemm(const std::string& name, double m, double n, double k);
  // bitsandbytes' dequantize_4bit of a [out, in] NF4 weight into the compute dtype (our
  // kernel, kernels/src/cuda/nf4_dequant.cu); with double quantization the absmax first.
  void dequantize(const std::string& name, double elems);
  // A projection `module` of [out, in] over T rows: the base (NF4-dequantized under qlora),
  // plus the LoRA path x A^T B^T * alpha/r where adapted (as the LibTorch step computes it).
  void linear(const std::string& module, const std::string& name, double T, double out, double in);
  // Elementwise over `elems` elements of `bytes_per` bytes, one input and one output.
  Op& ew(const std::string& name, double elems, double bytes_per = -1);
  // Bookkeeping kernels autograd does not differentiate (metadata, routing indices).
  Op& nograd(const std::string& name, double elems, double bytes);

  Op& copy(const std::string& name, int stream, CopyKind kind, MemoryKind host, double bytes);
  void event(OpKind kind, int stream, int ev, const std::string& name);

  void rmsnorm(const std::string& what, double rows, double cols);

  void rope(const std::string& what, double elems);

  void upload_batch();

  void embedding_forward();
  void rope_tables();

  // Every registered fix's operators at `at` of the current layer, in registry order.
  void fix_point(ProgramPoint at);

  void attention();

  void mlp();

  // gpt-oss's experts as Unsloth runs them (unsloth_zoo temporary_patches/gpt_oss.py, HF
  // GptOssExperts): gate_up with bias, gate clamped above at the limit, up clamped to
  // [-limit, limit], glu = gate * sigmoid(1.702 gate), (up + 1) * glu, then the down
  // projection with bias in fp32 with autocast off (the weighting follows in fp32).
  void oss_expert(const std::string& p, double rows);

  // The MoE block: norm, router, top-k and softmax, the experts as the routing fix
  // dispatches them (ProgramPoint::ExpertDispatch), the residual.
  void moe();
  // The shared experts of an MoE layer (DeepSeek, Qwen2-MoE, Llama 4), after the routed ones.
  void shared_experts();

  // One layer's forward kernels; the first reads `input`, the last writes `output`.
  void layer_forward(int input, int output);

  void mark_first_kernel(std::size_t from, int buffer, Access access);
  void mark_last_kernel(int buffer, Access access);

  // Backward of the kernels recorded for one forward, in reverse order.
  void backward_of(const std::vector<FwdKernel>& ks);

  void step(const ChoreoStep& s);

  void head();

  void embedding_backward();

  void optimizer();

  void loss_item();

  StepOptions o_;
  Program p_;
  Choreography choreo_;
  int L_ = 0, b_ = 4, T_ = 0, H_ = 0, nh_ = 0, nkv_ = 0, d_ = 0, I_ = 0, V_ = 0, E_ = 0, k_ = 0;
  // checkpointing_: a fix's schedule (build_program_schedule) offloads layer checkpoints,
  // so backward recomputes each layer from its reloaded input. recompute_: it does, or the
  // scenario's gradient_checkpointing is "full" (inputs kept on the device, no copies).
  bool low_precision_ = false, checkpointing_ = false, forward_open_ = false, recompute_ = false;
  std::vector<int> lengths_;
  std::vector<int> act_, host_, ring_;
  int layer_ = -1;
  int period_ = 1;                // set_issue_period
  bool loss_read_taken_ = false;  // take_loss_read
  bool recording_ = false;
  std::vector<FwdKernel> fwd_kernels_;
  std::map<int, std::vector<FwdKernel>> layer_fwd_;
  std::map<fixes::Fix, std::any> fix_state_;  // ProgramLayerBuilder::fix_state
  bool adapters_ = false, oss_ = false;
  int lora_scale_rank_ = 16;
};

}  // namespace syncscope::program::detail
