// The simulator with a fitted profile's host costs (calibrate --from-trace): host time per
// framework op before and after its launch, per range boundary, copy latency, fitted kernel
// durations; and a datasheet profile (none of these) left as it was.
#include <gtest/gtest.h>

#include "item_loop_program.hpp"
#include "sim_test_util.hpp"
#include "test_units.hpp"

namespace syncscope {
namespace {

using namespace simtest;
using test::us;

// One layer: two kernels of one framework op (the second continues it), a D2H copy (1 us)
// and its sync.
Program layer_program() {
  Program p;
  p.name = "layer";
  p.ops = {simple(OpKind::RangePush, 0, -1, "layer_0"),
           kernel("A", 0, 1),
           kernel("B", 0, 1),
           copy(CopyKind::DtoH, 0, 1),
           simple(OpKind::StreamSync, 0),
           simple(OpKind::RangePop)};
  p.ops[2].continues_op = true;
  return p;
}

model::GpuProfile fitted_profile() {
  model::GpuProfile p = test_profile();  // launch call 5 us, latency 10 us, round trip 20 us
  p.host_launch_op_ns = 20 * us;
  p.host_after_launch_ns = 4 * us;
  p.host_range_ns = 10 * us;
  p.host_op_ns = 6 * us;
  p.plain_ops_per_launch_op = 0.5;
  p.copy_latency_ns = 7 * us;
  return p;
}

TEST(SimHostCosts, FittedHostTimePerOpAndRange) {
  const Trace t = sim::simulate(layer_program(), fitted_profile());
  // push at 10 (range cost); A: 20 + 0.5 * 6 before its call -> [33, 38]; B continues A:
  // [38, 43]; the copy starts a new op: A's 4 after, then 23 -> [70, 75]; the sync waits for
  // the copy (ready 70 + 7, 1 us) and the round trip: [75, 98]; the pop: the copy op's 4
  // after, then 10 -> 112; the step's end: 10 more -> 122.
  EXPECT_EQ(api_named(t, "cudaLaunchKernel", 0).start, 33 * us);
  EXPECT_EQ(api_named(t, "cudaLaunchKernel", 1).start, 38 * us);
  EXPECT_EQ(api_named(t, "cudaMemcpyAsync").start, 70 * us);
  EXPECT_EQ(t.memcpys.at(0).start, 77 * us);
  EXPECT_EQ(api_named(t, "cudaStreamSynchronize").end, 98 * us);
  Ns layer_end = 0, step_end = 0;
  for (const auto& r : t.ranges) {
    if (t.str(r.name) == "layer_0") {
      EXPECT_EQ(r.start, 10 * us);
      layer_end = r.end;
    }
    if (t.str(r.name) == "ProfilerStep#0") step_end = r.end;
  }
  EXPECT_EQ(layer_end, 112 * us);
  EXPECT_EQ(step_end, 122 * us);
}

TEST(SimHostCosts, DatasheetProfileUnchanged) {
  const Trace t = sim::simulate(layer_program(), test_profile());
  // No fitted costs: calls back to back from 0, copy 10 us after its call.
  EXPECT_EQ(api_named(t, "cudaLaunchKernel", 0).start, 0);
  EXPECT_EQ(api_named(t, "cudaLaunchKernel", 1).start, 5 * us);
  EXPECT_EQ(api_named(t, "cudaMemcpyAsync").start, 10 * us);
  EXPECT_EQ(t.memcpys.at(0).start, 20 * us);
}

TEST(SimHostCosts, FittedKernelsMatchWholeIdentifiers) {
  model::GpuProfile p = fitted_profile();
  model::FittedKernel abs;
  abs.name = "at::native::vectorized_elementwise_kernel<4, at::native::AbsFunctor<float> >";
  abs.kernel_class = "elementwise";
  abs.median_ns = 7 * us;
  abs.events = 10;
  abs.host_before_ns = 30 * us;
  abs.host_after_ns = 2 * us;
  abs.host_events = 10;
  p.kernels = {abs};
  p.kernel_floor_ns = 0.5 * us;
  Op named = kernel("AbsFunctor", 0, 0);
  named.bytes = 8;
  Op partial = kernel("Abs", 0, 0);  // "Abs" runs into "Functor": not the same identifier
  partial.bytes = 8;
  EXPECT_EQ(sim::op_duration_ns(named, p), 7 * us);
  EXPECT_EQ(sim::op_duration_ns(partial, p), 500);  // the fitted floor, not 2 us
  Program prog;
  prog.ops = {named, partial};
  const Trace t = sim::simulate(prog, p);
  // AbsFunctor's own host time (30 us, plus 0.5 x 6 for the ops that launch nothing) before
  // its call; then its 2 us after, and the class figure (20 + 3) before "Abs".
  EXPECT_EQ(api_named(t, "cudaLaunchKernel", 0).start, 33 * us);
  EXPECT_EQ(api_named(t, "cudaLaunchKernel", 1).start, (33 + 5 + 2 + 23) * us);
}

// The same step with an eager-Python profile and a C++ one: the host costs the trace showed
// make the difference, as between the two kinds of run.
TEST(SimHostCosts, EagerPythonAndCppProfilesDiffer) {
  model::GpuProfile eager = test_profile();
  eager.fp32_flops_per_s = eager.bf16_flops_per_s = eager.dram_bytes_per_s = 1e15;  // kernels at the 2 us floor
  model::GpuProfile cpp = eager;
  eager.host_launch_op_ns = 25 * us;
  eager.host_range_ns = 12 * us;
  cpp.host_launch_op_ns = 3 * us;
  cpp.host_range_ns = 1 * us;
  sim::SimOptions so;
  so.steps = 2;
  const Program prog = item_loop_program();
  const Trace a = sim::simulate(prog, eager, so), b = sim::simulate(prog, cpp, so);
  auto step = [](const Trace& t) {
    for (const auto& r : t.ranges)
      if (t.str(r.name) == "ProfilerStep#1") return static_cast<double>(r.end - r.start);
    return 0.0;
  };
  // Per step: 8 layers x 5 ops (the split-K reduce continues its GEMM's op) and 17 range
  // boundaries (8 pushes, 8 pops, the step's end).
  const double host_difference = 40 * 22 * us + 17 * 11 * us;
  EXPECT_GT(step(a) - step(b), 0.8 * host_difference);
  EXPECT_LE(step(a) - step(b), host_difference + 1);
}

}  // namespace
}  // namespace syncscope
