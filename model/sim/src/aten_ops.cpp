// The ATen op behind a simulated launch. A PyTorch trace shows every kernel launch inside the
// ATen op that dispatched it (torch.profiler's cpu_op "aten::mm" around cudaLaunchKernel), and
// tools join launches to ops by that nesting (HTA's get_aten_op_kernels_and_delay takes the
// deepest aten:: op enclosing the runtime call). The program names its ops like its kernels
// ("q_proj.lora_A", "adamw.exp_avg.mul_"); the ATen op is read from that name: its last
// component when that is an ATen function (native_functions.yaml spelling), else by the kind
// of work the name says (a projection is a matmul), else by the op's arithmetic intensity.
#include "aten_ops.hpp"

#include <array>
#include <string_view>

namespace syncscope::sim::detail {
namespace {

using program::OpKind;

// ATen functions that program ops end in (PyTorch aten/src/ATen/native/native_functions.yaml).
constexpr std::array<std::string_view, 32> kAtenFunctions = {
    "mul_",         "add_",     "addcmul_", "addcdiv_",
    "sqrt",         "div",      "pow",      "mean",
    "rsqrt",        "neg",      "cat",      "clone",
    "masked_fill_", "ones",     "triu",     "zeros",
    "cumsum",       "full",     "silu",     "embedding",
    "sum",          "max",      "mul",      "add",
    "log_softmax",  "nll_loss", "arange",   "reciprocal",
    "cos",          "sin",      "outer",    "scaled_dot_product_attention"};

bool contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

}  // namespace

std::string launch_op_name(const program::Op& op) {
  if (!op.name.empty()) return op.name;
  switch (op.kind) {
    case OpKind::Copy: return "aten::copy_";
    case OpKind::Memset: return "memset";
    default: return "kernel";
  }
}

std::string aten_op_for_launch(const program::Op& op) {
  const std::string_view name = op.name;
  if (contains(name, "::")) return {};
  if (op.kind == OpKind::Copy) return "aten::copy_";  // .to() / .copy_() call cudaMemcpyAsync in it
  if (op.kind == OpKind::Memset) return "aten::zero_";
  // The forward op's component: "x.mul.backward" is autograd's backward of aten::mul; a
  // weight or input gradient of a projection ("backward_dgrad", "backward_wgrad") is a matmul.
  std::string_view last = name;
  std::string_view rest = name;
  for (;;) {
    const auto dot = rest.rfind('.');
    last = dot == std::string_view::npos ? rest : rest.substr(dot + 1);
    if (last.rfind("backward", 0) != 0 || dot == std::string_view::npos) break;
    if (last != "backward") return "aten::mm";
    rest = rest.substr(0, dot);
  }
  for (std::string_view f : kAtenFunctions)
    if (last == f) return "aten::" + std::string(f);
  if (contains(last, "_proj") || contains(last, "lora_A") || contains(last, "lora_B") || contains(last, "lm_head"))
    return "aten::mm";
  if (contains(last, "scale") || last.rfind("mul", 0) == 0) return "aten::mul";
  if (contains(last, "add")) return "aten::add";
  // A GEMM does many flops per byte it moves; an elementwise kernel about one or fewer:
  // what is left is a conversion or copy (".to_fp32", ".contiguous", "expand_gqa").
  return op.flops > op.bytes && op.bytes > 0 ? "aten::mm" : "aten::copy_";
}

}  // namespace syncscope::sim::detail
