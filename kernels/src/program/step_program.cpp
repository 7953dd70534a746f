// The step program: the LibTorch reference step (kernels/src/torch) operator by operator,
// as the host issues it. Keep the two in step: every host read, copy, event, stream wait
// and NVTX range here has its twin there (the test ProgramMatchesStep compares the counts).
// This file: buffers, ranges and primitives, the step's skeleton, backward and optimizer;
// the layers' own kernels are in step_layers.cpp.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "step_builder.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/program/layer_schedule.hpp"
#include "syncscope/program/network.hpp"
#include "syncscope/program/program_layer.hpp"
#include "syncscope/program/reference.hpp"
#include "syncscope/program/step_program.hpp"

namespace syncscope::program {
namespace detail {

StepBuilder::StepBuilder(const StepOptions& o) : o_(o) {
  validate(o_);
  const scenario::ModelShape& m = o_.model;
  L_ = effective_layers(o_);
  b_ = dtype_bytes(o_.dtype);
  low_precision_ = o_.dtype != "fp32";
  T_ = o_.batch.packed_tokens;
  lengths_ = batch_lengths(o_, 0);
  H_ = m.hidden_size;
  nh_ = m.num_attention_heads;
  nkv_ = m.num_key_value_heads;
  d_ = m.head_dim;
  I_ = m.intermediate_size;
  V_ = m.vocab_size;
  E_ = m.num_local_experts;
  k_ = m.num_experts_per_tok;
  adapters_ = o_.training.adapters();
  lora_scale_rank_ = o_.training.lora_rank;
  oss_ = is_gpt_oss(m) && o_.gpt_oss_unsloth_form;
  // The layer loop: a fix's schedule (offload's choreography) or plain autograd.
  ProgramSchedule schedule;
  checkpointing_ = fix_program_schedule(o_, schedule);
  choreo_ = checkpointing_ ? std::move(schedule.choreography) : build_plain_choreography(L_);
  recompute_ = recomputes_layers(o_, checkpointing_);
  // Each registered fix's variant, as the run plan's job keys spell them (fix_variants_key).
  p_.name = fmt::format("{}/L={}/{}/{}", m.name, L_, o_.training.mode, fix_variants_key(o_));
  p_.streams = {{"main", false}};
  if (checkpointing_) p_.streams.push_back({"copy", true});
  p_.num_events = choreo_.events.num_events;
  if (checkpointing_) p_.event_names = std::move(schedule.event_names);
  p_.event_names.resize(static_cast<std::size_t>(p_.num_events));
  // Buffers: act_l (layer l's input on the device, act_L the last hidden state),
  // host_l (its pinned host copy), ring_b (reload buffers).
  for (int l = 0; l <= L_; ++l) act_.push_back(new_buffer(fmt::format("act_{:02} (layer_{:02} input, device)", l, l)));
  for (int l = 0; l < choreo_.plan.offloaded(); ++l) host_.push_back(new_buffer(fmt::format("host_{:02} (pinned)", l)));
  for (int b = 0; b < choreo_.plan.ring_buffers; ++b) ring_.push_back(new_buffer(fmt::format("ring_{} (device)", b)));
}

Program StepBuilder::build() {
  push("step");
  upload_batch();
  push("forward");
  forward_open_ = true;
  embedding_forward();
  rope_tables();
  bool in_choreo_range = false;
  for (const ChoreoStep& s : choreo_.steps) {
    const bool choreo =
        s.kind != ChoreoKind::ForwardLayer && s.kind != ChoreoKind::BackwardLayer && s.kind != ChoreoKind::Head;
    if (choreo && !in_choreo_range) push("offload_reload");
    if (!choreo && in_choreo_range) pop();
    in_choreo_range = choreo;
    step(s);
  }
  if (in_choreo_range) pop();
  embedding_backward();
  pop();  // backward
  // The step-wide points see layer -1; the optimizer and the loss read keep the layer
  // attribution they had before the points existed.
  const int last_layer = layer_;
  layer_ = -1;
  fix_point(ProgramPoint::BeforeOptimizer);  // gradient clipping (fixes/logging)
  layer_ = last_layer;
  optimizer();
  layer_ = -1;
  fix_point(ProgramPoint::AfterOptimizer);  // a trainer's logging (fixes/logging)
  layer_ = last_layer;
  period_ = 1;
  if (!loss_read_taken_) loss_item();
  pop();  // step
  p_.num_buffers = static_cast<int>(p_.buffer_names.size());
  return std::move(p_);
}

int StepBuilder::new_buffer(std::string name) {
  p_.buffer_names.push_back(std::move(name));
  return static_cast<int>(p_.buffer_names.size()) - 1;
}

Op& StepBuilder::emit(Op op) {
  if (op.layer < 0) op.layer = layer_;
  op.period = period_;
  p_.ops.push_back(std::move(op));
  return p_.ops.back();
}

void StepBuilder::push(const std::string& name) {
  Op op;
  op.kind = OpKind::RangePush;
  op.name = name;
  emit(op);
}

void StepBuilder::pop() {
  Op op;
  op.kind = OpKind::RangePop;
  emit(op);
}

Op& StepBuilder::kernel(const std::string& name, double flops, double bytes, bool tensor_core) {
  Op op;
  op.kind = OpKind::Kernel;
  op.name = name;
  op.stream = kMain;
  op.flops = flops;
  op.bytes = bytes;
  // bf16/fp16 GEMMs run at the tensor-core rate; elementwise kernels are bandwidth-bound.
  op.bf16 = low_precision_ && tensor_core;
  return emit(op);
}

Op& StepBuilder::fwd(FwdKernel::Kind kind, const std::string& name, double flops, double bytes) {
  if (recording_) fwd_kernels_.push_back({kind, name, flops, bytes});
  return kernel(name, flops, bytes, kind != FwdKernel::Kind::Elementwise);
}

Op& StepBuilder::gemm(const std::string& name, double m, double n, double k) {
  Op& op = fwd(FwdKernel::Kind::Gemm, name, 2.0 * m * n * k, (m * k + k * n + m * n) * b_);
  if (adapters_ && recording_) fwd_kernels_.back().frozen = true;
  return op;
}

Op& StepBuilder::trainable_gemm(const std::string& name, double m, double n, double k) {
  return fwd(FwdKernel::Kind::Gemm, name, 2.0 * m * n * k, (m * k + k * n + m * n) * b_);
}

void StepBuilder::dequantize(const std::string& name, double elems) {
  const auto n = static_cast<std::int64_t>(elems);
  if (o_.training.double_quant) {
    const double blocks = std::ceil(elems / kNf4BlockSize);
    nograd("syncscope::nf4_absmax " + name, blocks, blocks * 9);
  }
  nograd("syncscope::nf4_dequantize " + name, elems, nf4_storage_bytes(n, o_.training.double_quant) + elems * b_);
}

void StepBuilder::linear(const std::string& module, const std::string& name, double T, double out, double in) {
  if (!adapters_) {
    gemm(name, T, out, in);
    return;
  }
  const bool nf4 = nf4_quantized(o_, module);
  if (nf4) dequantize(name, out * in);
  gemm(name, T, out, in);
  if (nf4 && recording_) fwd_kernels_.back().dequant_elems = out * in;
  if (lora_adapted(o_, module)) {
    const double r = lora_scale_rank_;
    trainable_gemm(name + ".lora_A", T, r, in);
    trainable_gemm(name + ".lora_B", T, out, r);
    ew(name + ".lora_scale", T * out);
    ew(name + ".lora_add", T * out);
  }
}

Op& StepBuilder::ew(const std::string& name, double elems, double bytes_per) {
  const double bp = bytes_per < 0 ? b_ : bytes_per;
  return fwd(FwdKernel::Kind::Elementwise, name, elems, 2.0 * elems * bp);
}

Op& StepBuilder::nograd(const std::string& name, double elems, double bytes) { return kernel(name, elems, bytes); }

Op& StepBuilder::copy(const std::string& name, int stream, CopyKind kind, MemoryKind host, double bytes) {
  Op op;
  op.kind = OpKind::Copy;
  op.name = name;
  op.stream = stream;
  op.copy = kind;
  op.host_memory = host;
  op.bytes = bytes;
  return emit(op);
}

Op& StepBuilder::host_read(const std::string& aten_op, double bytes) {
  // The framework op's range covers its copy and the sync it issues (program::CpuOp).
  copy(aten_op, kMain, CopyKind::DtoH, MemoryKind::Pageable, bytes).cpu_op = program::CpuOp::Opens;
  Op s;
  s.kind = OpKind::StreamSync;
  s.name = "cudaStreamSynchronize";
  s.stream = kMain;
  s.cpu_op = program::CpuOp::Continues;
  emit(s);
  return p_.ops[p_.ops.size() - 2];  // the copy, emitted just before the sync
}

void StepBuilder::event(OpKind kind, int stream, int ev, const std::string& name) {
  Op op;
  op.kind = kind;
  op.stream = stream;
  op.event = ev;
  op.name = name;
  emit(op);
}

void StepBuilder::rmsnorm(const std::string& what, double rows, double cols) {
  const double n = rows * cols;
  if (low_precision_) ew(what + ".to_fp32", n, (b_ + 4) / 2.0);
  ew(what + ".pow", n, 4);
  ew(what + ".mean", n, 2);  // reads n fp32, writes rows
  ew(what + ".add_eps", rows, 4);
  ew(what + ".rsqrt", rows, 4);
  ew(what + ".mul", n, 4);
  if (low_precision_) ew(what + ".to_dtype", n, (b_ + 4) / 2.0);
  ew(what + ".mul_weight", n);
}

void StepBuilder::rope(const std::string& what, double elems) {
  ew(what + ".mul_cos", elems);
  ew(what + ".neg", elems / 2);
  ew(what + ".cat", elems);
  ew(what + ".mul_sin", elems);
  ew(what + ".add", elems);
}

void StepBuilder::upload_batch() {
  const double T = T_;
  // The packer's tensors: pinned host staging, copied non_blocking on the main stream.
  const char* name = "Memcpy HtoD (Pinned -> Device)";
  copy(std::string(name) + " input_ids", kMain, CopyKind::HtoD, MemoryKind::Pinned, T * 8);
  copy(std::string(name) + " labels", kMain, CopyKind::HtoD, MemoryKind::Pinned, T * 8);
  copy(std::string(name) + " position_ids", kMain, CopyKind::HtoD, MemoryKind::Pinned, T * 8);
  copy(std::string(name) + " seq_lengths", kMain, CopyKind::HtoD, MemoryKind::Pinned,
       static_cast<double>(lengths_.size()) * 4);
}

void StepBuilder::embedding_forward() {
  Op& op = kernel("embedding", 0, 2.0 * T_ * H_ * b_);
  op.buffer = act_[0];
  op.access = Access::Write;
}

void StepBuilder::rope_tables() {
  const double n = static_cast<double>(T_) * d_;
  kernel("rope.inv_freq.arange", d_ / 2.0, d_ * 2.0);
  kernel("rope.inv_freq.div", d_ / 2.0, d_ * 4.0);
  kernel("rope.inv_freq.pow", d_ / 2.0, d_ * 4.0);
  kernel("rope.inv_freq.reciprocal", d_ / 2.0, d_ * 4.0);
  kernel("rope.positions_to_float", T_, T_ * 12.0);
  kernel("rope.outer_inv_freq", n / 2, n * 2 + d_ * 2.0);
  kernel("rope.cat", n, n * 8);
  kernel("rope.cos", n, n * 8);
  kernel("rope.sin", n, n * 8);
  if (low_precision_) {
    kernel("rope.cos.to_dtype", n, n * (4.0 + b_));
    kernel("rope.sin.to_dtype", n, n * (4.0 + b_));
  }
}

void StepBuilder::fix_point(ProgramPoint at) {
  for (const fixes::FixSpec& f : fixes::fix_registry())
    if (f.build_program_layer) f.build_program_layer(*this, at);
}

void StepBuilder::layer_forward(int input, int output) {
  const std::size_t first = p_.ops.size();
  attention();
  // An MoE model's dense layers (DeepSeek's first_k_dense_replace, Llama 4's interleaving)
  // run a plain MLP of their own width: no router, no routing syncs.
  if (o_.model.moe_layer(layer_)) {
    moe();
  } else {
    mlp();
  }
  mark_first_kernel(first, input, Access::Read);
  if (output >= 0) mark_last_kernel(output, Access::Write);
}

void StepBuilder::mark_first_kernel(std::size_t from, int buffer, Access access) {
  for (std::size_t i = from; i < p_.ops.size(); ++i)
    if (p_.ops[i].kind == OpKind::Kernel) {
      p_.ops[i].more_buffers.push_back({buffer, access});
      return;
    }
}

void StepBuilder::mark_last_kernel(int buffer, Access access) {
  for (std::size_t i = p_.ops.size(); i-- > 0;)
    if (p_.ops[i].kind == OpKind::Kernel) {
      p_.ops[i].more_buffers.push_back({buffer, access});
      return;
    }
}

void StepBuilder::backward_of(const std::vector<FwdKernel>& ks) {
  for (auto it = ks.rbegin(); it != ks.rend(); ++it) {
    switch (it->kind) {
      case FwdKernel::Kind::Gemm:
        if (it->dequant_elems > 0) dequantize(it->name, it->dequant_elems);  // MatMul4Bit.backward
        kernel(it->name + ".backward_dgrad", it->flops, it->bytes, !it->fp32);
        if (!it->frozen) kernel(it->name + ".backward_wgrad", it->flops, it->bytes, !it->fp32);
        break;
      case FwdKernel::Kind::Attention: kernel(it->name + ".backward", 2 * it->flops, 2 * it->bytes, true); break;
      case FwdKernel::Kind::Elementwise: kernel(it->name + ".backward", it->flops, 1.5 * it->bytes); break;
    }
  }
}

void StepBuilder::step(const ChoreoStep& s) {
  switch (s.kind) {
    case ChoreoKind::RecordMain: event(OpKind::EventRecord, kMain, s.event, "cudaEventRecord"); break;
    case ChoreoKind::RecordCopy: event(OpKind::EventRecord, kCopy, s.event, "cudaEventRecord"); break;
    case ChoreoKind::CopyWaits: event(OpKind::StreamWait, kCopy, s.event, "cudaStreamWaitEvent"); break;
    case ChoreoKind::MainWaits: event(OpKind::StreamWait, kMain, s.event, "cudaStreamWaitEvent"); break;
    case ChoreoKind::OffloadCopy: {
      layer_ = s.layer;
      Op& op = copy("Memcpy DtoH (Device -> Pinned) checkpoint offload", kCopy, CopyKind::DtoH, MemoryKind::Pinned,
                    static_cast<double>(T_) * H_ * b_);
      op.buffer = act_[static_cast<std::size_t>(s.layer)];
      op.access = Access::Read;
      op.more_buffers.push_back({host_[static_cast<std::size_t>(s.layer)], Access::Write});
      layer_ = -1;
      break;
    }
    case ChoreoKind::ReloadCopy: {
      layer_ = s.layer;
      Op& op = copy("Memcpy HtoD (Pinned -> Device) checkpoint reload", kCopy, CopyKind::HtoD, MemoryKind::Pinned,
                    static_cast<double>(T_) * H_ * b_);
      op.buffer = host_[static_cast<std::size_t>(s.layer)];
      op.access = Access::Read;
      op.more_buffers.push_back({ring_[static_cast<std::size_t>(s.buffer)], Access::Write});
      layer_ = -1;
      break;
    }
    case ChoreoKind::ReleaseInput: {
      Op op;
      op.kind = OpKind::HostWork;
      op.name = fmt::format("release layer_{:02} input to the caching allocator", s.layer);
      op.stream = kMain;
      op.layer = s.layer;
      op.buffer = act_[static_cast<std::size_t>(s.layer)];
      op.access = Access::Write;
      emit(op);
      break;
    }
    case ChoreoKind::ForwardLayer: {
      layer_ = s.layer;
      push(fmt::format("layer_{:02}", s.layer));
      recording_ = true;
      fwd_kernels_.clear();
      layer_forward(act_[static_cast<std::size_t>(s.layer)], act_[static_cast<std::size_t>(s.layer) + 1]);
      recording_ = false;
      layer_fwd_[s.layer] = fwd_kernels_;
      pop();
      layer_ = -1;
      break;
    }
    case ChoreoKind::Head: head(); break;
    case ChoreoKind::BackwardLayer: {
      layer_ = s.layer;
      push(fmt::format("layer_{:02}", s.layer));
      const int input =
          s.buffer >= 0 ? ring_[static_cast<std::size_t>(s.buffer)] : act_[static_cast<std::size_t>(s.layer)];
      std::vector<FwdKernel> ks = layer_fwd_[s.layer];
      if (recompute_) {
        // Checkpointing: recompute the layer with grad from its (reloaded) input.
        recording_ = true;
        fwd_kernels_.clear();
        layer_forward(input, -1);
        recording_ = false;
        ks = fwd_kernels_;
      }
      const std::size_t first = p_.ops.size();
      backward_of(ks);
      // The input layernorm's backward reads the layer input last.
      if (p_.ops.size() > first) mark_last_kernel(input, Access::Read);
      pop();
      layer_ = -1;
      break;
    }
  }
}

void StepBuilder::head() {
  const double T = T_;
  recording_ = true;
  fwd_kernels_.clear();
  const std::size_t first = p_.ops.size();
  rmsnorm("norm", T, H_);
  mark_first_kernel(first, act_[static_cast<std::size_t>(L_)], Access::Read);
  gemm("lm_head", T, V_, H_);  // the embedding matrix itself when tied: its gradient adds into it
  ew("cross_entropy.log_softmax", T * V_);
  ew("cross_entropy.nll_loss", T, 8 + b_);
  recording_ = false;
  std::vector<FwdKernel> ks = fwd_kernels_;
  pop();  // forward
  forward_open_ = false;
  push("backward");
  backward_of(ks);
}

void StepBuilder::embedding_backward() {
  if (adapters_) return;  // frozen embedding: autograd stops at the first layer's input
  const double T = T_;
  kernel("embedding_backward.zeros", 0, static_cast<double>(V_) * H_ * b_);
  kernel("embedding_backward.sort_indices", T, T * 32);
  kernel("embedding_backward", T * H_, 2.0 * T * H_ * b_);
}

void StepBuilder::optimizer() {
  push("optimizer");
  // What trains (network.hpp: everything in full fine-tuning, the adapters under lora/qlora;
  // a tied LM head is the embedding, updated once).
  std::vector<double> params;
  for (const auto& p : network_parameters(o_))
    if (p.trainable) params.push_back(static_cast<double>(p.numel));
  // LibTorch's AdamW (torch/csrc/api/src/optim/adamw.cpp), per parameter: exp_avg
  // mul_/add_, exp_avg_sq mul_/addcmul_, sqrt, div, add_ eps, addcdiv_ (+ mul_ decay).
  static constexpr const char* names[] = {"exp_avg.mul_", "exp_avg.add_", "exp_avg_sq.mul_", "exp_avg_sq.addcmul_",
                                          "denom.sqrt",   "denom.div",    "denom.add_",      "param.addcdiv_"};
  for (double n : params) {
    if (o_.weight_decay != 0) kernel("adamw.param.mul_", n, 2 * n * b_);
    for (const char* k : names) kernel(std::string("adamw.") + k, n, 3 * n * b_);
  }
  pop();
}

void StepBuilder::loss_item() { host_read("aten::item loss", b_); }

}  // namespace detail

program::Program build_step_program(const StepOptions& options) { return detail::StepBuilder(options).build(); }

}  // namespace syncscope::program
