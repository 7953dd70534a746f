// A small RunResults for report tests. Its numbers are SYNTHETIC, made up for rendering
// tests only; the mode says "simulated" and the notes say "synthetic" so nobody mistakes
// a rendered test report for a result.
#pragma once

#include "syncscope/reports/html_report.hpp"

namespace syncscope::reporttest {

inline model::VariantResult row(const std::string& fix, const std::string& variant, bool baseline, double step_ms,
                                double syncs, double pred, double meas) {
  model::VariantResult v;
  v.scenario = "tiny<&>";
  v.fix = fix;
  v.variant = variant;
  v.baseline = baseline;
  v.layers = 4;
  v.step_time_ns = {step_ms * 1e6, step_ms * 0.98e6, step_ms * 1.03e6, 3};
  v.syncs_per_step = syncs;
  v.sync_bubble_ns_per_step = syncs * 20e3;
  v.sync_blocked_ns_per_step = syncs * 30e3;
  v.measured_speedup = {meas, meas * 0.98, meas * 1.02, 3};
  v.predicted_speedup = {pred, pred * 0.95, pred * 1.05, 3};
  v.tolerance = 0.1;
  v.trace_file = "traces/tiny__" + fix + "-" + variant + ".json.gz";
  if (!baseline) v.model_parameters["s_ns"] = 1.5e6;
  return v;
}

inline model::RunResults synthetic_results(const std::string& gpu = "TEST-GPU") {
  model::RunResults r;
  r.mode = "simulated";
  r.env.gpu = gpu;
  r.env.gpu_profile = gpu;
  r.env.commit = "abc123";
  r.env.date_utc = "2026-11-30T00:00:00Z";
  r.env.host = "<script>alert(1)</script>";
  r.notes = {"synthetic numbers for a rendering test"};
  r.variants = {row("packing", "rebuild", true, 100, 57, 1, 1), row("packing", "cached", false, 88, 3, 1.12, 1.136),
                row("packing", "device", false, 86, 1, 1.5, 1.16)};  // device: outside tolerance
  return r;
}

inline TimelineStrip synthetic_strip(const std::string& variant, bool with_syncs) {
  TimelineStrip t;
  t.scenario = "tiny<&>";
  t.fix = "packing";
  t.variant = variant;
  t.window = "layer_02 in ProfilerStep#1";
  t.duration_ns = 1'000'000;
  t.lanes = {"host", "stream 7 (main)"};
  t.segments.push_back({"host", "api", 0, 5'000, "cudaLaunchKernel"});
  t.segments.push_back({"stream 7 (main)", "kernel", 10'000, 400'000, "gemm"});
  if (with_syncs) {
    t.segments.push_back({"host", "sync", 5'000, 420'000, "aten::item"});
    t.segments.push_back({"gpu", "bubble", 400'000, 450'000, "GPU idle"});
    t.syncs = 1;
    t.bubble_ns = 50'000;
  }
  t.segments.push_back({"stream 7 (main)", "kernel", 450'000, 1'000'000, "attention"});
  // The step: 100 ms with syncs (57 of them), 88 ms without; parts add up.
  t.step =
      with_syncs
          ? StepBreakdown{"ProfilerStep#1", 3,          0,          100'000'000, 60'000'000, 5'000'000,
                          25'000'000,       10'000'000, 30'000'000, 57,          {},         IdleVerdict::NoGpuActivity}
          : StepBreakdown{"ProfilerStep#1", 3,          0,         88'000'000, 60'000'000, 5'000'000,
                          3'000'000,        20'000'000, 2'000'000, 3,          {},         IdleVerdict::NoGpuActivity};
  return t;
}

}  // namespace syncscope::reporttest
