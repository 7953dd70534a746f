// The host side of a simulated trace as torch.profiler writes it: every launch the program
// gave no framework op sits in the aten:: op that dispatches it, inside the op named like its
// kernel, and its runtime call and GPU record carry that aten:: op's External id (what HTA's
// get_aten_op_kernels_and_delay joins on: the deepest aten:: op enclosing the runtime call).
#include <gtest/gtest.h>

#include "sim_test_util.hpp"
#include "syncscope/analysis/analysis.hpp"

namespace syncscope {
namespace {

using namespace simtest;

// The deepest CPU op enclosing [start, end] on the host thread (null: none).
const Range* deepest_op(const Trace& t, Ns start, Ns end, bool aten_only) {
  const Range* best = nullptr;
  for (const auto& r : t.ranges) {
    if (r.kind != RangeKind::CpuOp || r.start > start || r.end < end) continue;
    if (aten_only && t.str(r.name).rfind("aten::", 0) != 0) continue;
    if (!best || r.start >= best->start) best = &r;  // HTA's rule: the latest start encloses
  }
  return best;
}

Program launches_program() {
  Program prog;
  prog.name = "aten";
  prog.streams = {{"main", true}};
  Op proj = kernel("q_proj.lora_A", 0, 20);
  proj.bytes = 1000;  // 20e6 flops over 1000 bytes: a matmul
  Op reduce = kernel("q_proj.lora_A.splitk_reduce", 0, 2);
  reduce.continues_op = true;  // the same aten::mm launches it
  Op mul = kernel("adamw.exp_avg.mul_", 0, 3);
  Op back = kernel("input_layernorm.pow.backward", 0, 3);
  Op custom = kernel("syncscope::nf4_dequantize q_proj", 0, 5);
  prog.ops = {copy(CopyKind::HtoD, 0, 10), proj, reduce, mul, back, custom, simple(OpKind::StreamSync, 0)};
  return prog;
}

TEST(SimAtenOps, EveryLaunchSitsInTheAtenOpThatDispatchesIt) {
  const Trace t = sim::simulate(launches_program(), test_profile());
  std::vector<std::string> aten;  // per launch call, in issue order
  for (const auto& c : t.api_calls) {
    const std::string name(t.str(c.name));
    if (name != "cudaLaunchKernel" && name != "cudaMemcpyAsync") continue;
    const Range* op = deepest_op(t, c.start, c.end, true);
    const Range* any = deepest_op(t, c.start, c.end, false);
    ASSERT_NE(any, nullptr) << name << " outside every CPU op";
    aten.push_back(op ? std::string(t.str(op->name)) : "-");
    // Kineto's link: the runtime call and its GPU record carry the innermost op's id.
    EXPECT_EQ(c.external_id, any->external_id) << name;
    for (const auto& k : t.kernels)
      if (k.correlation == c.correlation) {
        EXPECT_EQ(k.external_id, any->external_id) << t.str(k.name);
      }
  }
  // The copy in aten::copy_, the projection and its split-K reduce in one aten::mm, the
  // optimizer's mul_ and a backward pow by their ATen names; a custom op has none inside.
  EXPECT_EQ(aten, (std::vector<std::string>{"aten::copy_", "aten::mm", "aten::mm", "aten::mul_", "aten::pow", "-"}));
  int mm = 0;
  for (const auto& r : t.ranges) mm += r.kind == RangeKind::CpuOp && t.str(r.name) == "aten::mm";
  EXPECT_EQ(mm, 1);
}

TEST(SimAtenOps, TheOpNamedLikeTheKernelStillEnclosesIt) {
  const Trace t = sim::simulate(launches_program(), test_profile());
  // Each aten:: op but the unnamed copy's own is one level inside an op named like its kernel.
  std::vector<std::string> parents;
  for (const auto& r : t.ranges) {
    if (r.kind != RangeKind::CpuOp || t.str(r.name).rfind("aten::", 0) != 0) continue;
    std::string parent = "-";
    for (const auto& p : t.ranges)
      if (p.kind == RangeKind::CpuOp && p.depth == r.depth - 1 && p.start <= r.start && r.end <= p.end)
        parent = std::string(t.str(p.name));
    parents.push_back(std::string(t.str(r.name)) + " in " + parent);
  }
  EXPECT_EQ(parents, (std::vector<std::string>{"aten::copy_ in -", "aten::mm in q_proj.lora_A",
                                               "aten::mul_ in adamw.exp_avg.mul_",
                                               "aten::pow in input_layernorm.pow.backward"}));
}

TEST(SimAtenOps, SyncAnalysisUnchangedByTheNesting) {
  // The sync after the launches is outside every aten:: op: its cause is the host sync call.
  const Trace t = sim::simulate(launches_program(), test_profile());
  const AnalysisResult a = analyze(t);
  ASSERT_EQ(a.sync_points.size(), 1u);
  EXPECT_EQ(a.sync_points[0].cause.rfind("aten::", 0), std::string::npos) << a.sync_points[0].cause;
}

}  // namespace
}  // namespace syncscope
