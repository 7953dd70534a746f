// The accuracy test of calibrating from a trace: a GPU profile fitted (calibrate --from-trace) from the first step
// of the committed H200 trace alone, and the same program simulated with it, against the
// trace's other steps. model/README.md's table is this test's printout.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>

#include "item_loop_program.hpp"
#include "syncscope/calibrate/trace_calibration.hpp"
#include "syncscope/io/trace_io.hpp"
#include "syncscope/model/gpu_profile.hpp"
#include "syncscope/reports/model_printers.hpp"
#include "syncscope/reports/replay_printers.hpp"
#include "syncscope/sim/compare.hpp"
#include "syncscope/sim/simulator.hpp"
#include "test_paths.hpp"

namespace syncscope {
namespace {

using namespace simtest;

const char* kTrace = "torch/item_loop_l8_h200.json.gz";

calibrate::TraceCalibration fit_first_step(const Trace& measured, double warmup_factor) {
  calibrate::TraceCalibrationOptions o;
  o.step_glob = "train_step#*";
  o.max_steps = 1;
  o.warmup_factor = warmup_factor;
  o.base = model::load_gpu_profile("H200");
  o.base_label = "H200";
  o.date_utc = "test";
  const std::string path = test::fixture(kTrace).string();
  return calibrate::calibrate_from_traces({{path, calibrate::sha256_file(path), &measured}}, o);
}

sim::TraceComparison simulate_against(const model::GpuProfile& profile, const Trace& measured, const char* steps) {
  sim::SimOptions so;
  so.steps = 3;
  so.step_range_prefix = "train_step#";
  const Trace simulated = sim::simulate(item_loop_program(), profile, so);
  AnalysisOptions ao;
  ao.step_glob = steps;
  ao.layer_glob = "layer_*";
  return sim::compare_traces(simulated, measured, ao);
}

bool mentions(const std::vector<std::string>& v, const std::string& what) {
  for (const auto& s : v)
    if (s.find(what) != std::string::npos) return true;
  return false;
}

// The trace's first step, train_step#0, is its warm-up: 5.79 ms against 1.75 and 1.67 ms,
// with the profiler's start-up inside it (an "Activity Buffer Request" overhead record of
// 2.9 ms, the first cuBLASLt call's 3.1 ms). calibrate skips a step longer than 1.5x the
// median step, so "its first step" is train_step#1; the step compared is the one left,
// train_step#2.
TEST(SimCalibrated, ItemLoopFittedFromItsFirstStepReproducesTheOthers) {
  const Trace measured = read_trace(test::fixture(kTrace));
  const calibrate::TraceCalibration cal = fit_first_step(measured, 1.5);
  std::printf("%s", calibration_to_text(cal).c_str());
  EXPECT_TRUE(mentions(cal.notes, "1 of 3 'train_step#*' step ranges (train_step#0 skipped")) << cal.notes[0];
  const model::GpuProfile& fitted = cal.profile;
  // Fitted from the trace, not taken from the base.
  for (const char* f :
       {"sync_round_trip_ns", "launch_overhead_ns", "launch_latency_ns", "copy_latency_ns", "host_launch_op_ns",
        "host_after_launch_ns", "host_range_ns", "kernel_floor_ns", "copy_floor_ns"})
    EXPECT_NE(cal.find(f), nullptr) << f;
  EXPECT_EQ(fitted.kernels.size(), 5u);  // sgemm, split-K reduce, two elementwise, the max reduction
  EXPECT_NE(fitted.provenance.at("host_costs").find("eager Python"), std::string::npos);

  const sim::TraceComparison c = simulate_against(fitted, measured, "train_step#2");
  std::printf("fitted from train_step#1, against train_step#2:\n%s", syncscope::comparison_to_text(c).c_str());
  ASSERT_EQ(c.measured_steps, 1u);
  EXPECT_EQ(c.find("syncs_per_step")->simulated, 8.0);
  EXPECT_LE(std::abs(c.find("step_time_ns")->relative), 0.10);
  EXPECT_LE(std::abs(c.find("sync_blocked_ns_per_step")->relative), 0.25);
  EXPECT_LE(std::abs(c.find("sync_bubble_ns_per_step")->relative), 0.25);
  EXPECT_LE(std::abs(c.find("gpu_busy_ns_per_step")->relative), 0.25);

  // The shipped profile's datasheet values with a C++ host (no per-op host cost: what the
  // shipped profile was before it took this trace's eager host costs), for the README's
  // before/after table: the simulated host runs far ahead of the eager loop.
  const sim::TraceComparison d =
      simulate_against(sim::with_cpp_host(model::load_gpu_profile("H200")), measured, "train_step#2");
  std::printf("shipped H200 profile with host: cpp, against train_step#2:\n%s",
              syncscope::comparison_to_text(d).c_str());
  EXPECT_GT(std::abs(d.find("step_time_ns")->relative), 0.5);
  // The shipped profile carries the host costs fitted from this very trace (all its steady
  // steps), so it reproduces the step time: consistency with its own source, not a check on
  // another trace. Its round trip and launch figures stay datasheet leads.
  const sim::TraceComparison e = simulate_against(model::load_gpu_profile("H200"), measured, "train_step#2");
  std::printf("shipped H200 profile (eager host costs), against train_step#2:\n%s",
              syncscope::comparison_to_text(e).c_str());
  EXPECT_LE(std::abs(e.find("step_time_ns")->relative), 0.10);
}

// Fitting from the warm-up step itself (no skipping): every host cost comes out inflated, so
// the simulated steady steps run long. This is why calibrate skips such steps by default.
TEST(SimCalibrated, FittingFromTheWarmUpStepOverestimatesTheHost) {
  const Trace measured = read_trace(test::fixture(kTrace));
  const calibrate::TraceCalibration cal = fit_first_step(measured, 0);
  EXPECT_TRUE(mentions(cal.notes, "1 of 3 'train_step#*' step ranges")) << cal.notes[0];
  const sim::TraceComparison c = simulate_against(cal.profile, measured, "train_step#[12]");
  std::printf("fitted from train_step#0 (warm-up kept), against train_step#1 and #2:\n%s",
              syncscope::comparison_to_text(c).c_str());
  EXPECT_GT(c.find("step_time_ns")->relative, 0.10);
  EXPECT_LE(std::abs(c.find("gpu_busy_ns_per_step")->relative), 0.25);  // kernels do not warm up
}

// A simulated trace fits back to the profile it was simulated with: every launch has a CPU op
// around it (as in a PyTorch trace), holding the profile's host time before and after its
// call, so calibrate --from-trace reads each figure where the simulator charged it. The
// program is the item loop with its copy and sync marked as aten::item (as torch.profiler
// records .item()), the profile H200's with round host costs and no per-kernel ones. Without
// the CPU ops every launch call counted as an op of its own and its host time after the call
// as the next one's time before (host_launch_op_ns 24 us, host_after_launch_ns 0 here).
// Consistency of the simulator's writer with our own calibrator, not accuracy.
TEST(SimCalibrated, ASimulatedTraceFitsBackToItsProfilesHostCosts) {
  Program prog = item_loop_program();
  for (auto& op : prog.ops) {
    if (op.kind == OpKind::Copy) {
      op.name = "aten::item";
      op.cpu_op = program::CpuOp::Opens;
    } else if (op.kind == OpKind::StreamSync) {
      op.cpu_op = program::CpuOp::Continues;
    }
  }
  model::GpuProfile p = model::load_gpu_profile("H200");
  for (auto& k : p.kernels) k.host_events = 0;  // one host cost for every launching op
  p.host_launch_op_ns = 20'000;
  p.host_after_launch_ns = 4'000;
  p.host_range_ns = 13'000;
  p.host_op_ns = 0;
  p.plain_ops_per_launch_op = 0;
  sim::SimOptions so;
  so.steps = 4;
  so.step_range_prefix = "train_step#";
  const Trace simulated = sim::simulate(prog, p, so);
  // Through the file format, as calibrate --from-trace reads it.
  const auto dir = std::filesystem::temp_directory_path() /
                   ("syncscope_sim_fit_" + std::to_string(static_cast<long long>(::getpid())));
  std::filesystem::create_directories(dir);
  const auto path = dir / "sim.json";
  write_trace(simulated, path);
  const Trace back = read_trace(path);
  calibrate::TraceCalibrationOptions o;
  o.step_glob = "train_step#*";
  o.base = p;
  o.base_label = "H200 (test host costs)";
  o.date_utc = "test";
  o.bootstrap = 50;
  const calibrate::TraceCalibration cal =
      calibrate::calibrate_from_traces({{path.string(), calibrate::sha256_file(path.string()), &back}}, o);
  std::filesystem::remove_all(dir);
  std::printf("%s", calibration_to_text(cal).c_str());
  // Host times are rounded to whole ns per record: 1% is far above that, far below the
  // 4 us that a misplaced host time after a call would move a figure by.
  for (const auto& [field, want] : std::initializer_list<std::pair<const char*, double>>{
           {"host_launch_op_ns", 20'000}, {"host_after_launch_ns", 4'000}, {"host_range_ns", 13'000}}) {
    const calibrate::FittedEstimate* e = cal.find(field);
    ASSERT_NE(e, nullptr) << field;
    EXPECT_NEAR(e->value.value, want, 0.01 * want) << field;
  }
  const calibrate::FittedEstimate* lo = cal.find("launch_overhead_ns");
  ASSERT_NE(lo, nullptr);
  EXPECT_NEAR(lo->value.value, p.launch_overhead_ns, 0.01 * p.launch_overhead_ns);
  EXPECT_EQ(cal.profile.plain_ops_per_launch_op, 0.0);
}

}  // namespace
}  // namespace syncscope
