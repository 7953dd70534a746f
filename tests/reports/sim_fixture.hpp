// Simulated traces for the timeline, step-breakdown and run-directory tests, with a GPU
// profile whose round numbers make their timelines easy to work out by hand: a launch
// takes 5 us on the host and its kernel starts 10 us after the launch begins, a sync
// returns 20 us after the GPU finishes, a kernel of `us` microseconds runs that long.
#pragma once

#include <string>

#include "syncscope/sim/simulator.hpp"

namespace syncscope::simtest {

inline model::GpuProfile profile() {
  model::GpuProfile p;
  p.name = "test";
  p.launch_overhead_ns = 5'000;
  p.launch_latency_ns = 10'000;
  p.sync_round_trip_ns = 20'000;
  p.bf16_flops_per_s = 1e12;
  p.fp32_flops_per_s = 1e12;
  p.dram_bytes_per_s = 1e12;
  p.h2d_pinned_bytes_per_s = p.d2h_pinned_bytes_per_s = 1e9;
  p.h2d_pageable_bytes_per_s = p.d2h_pageable_bytes_per_s = 1e9;
  return p;
}

inline program::Op op(program::OpKind k, const std::string& name = "", double us = 0, int stream = 0) {
  program::Op o;
  o.kind = k;
  o.name = name;
  o.stream = stream;
  o.flops = us * 1e6;
  return o;
}

// `layers` layers (layer_00, layer_01, ...) per step, each a 100 us kernel and a stream
// sync: inside the layer's range, or right after it when !sync_inside.
inline Trace synced_layers(int layers, bool sync_inside, int steps = 3) {
  using program::OpKind;
  program::Program p;
  p.name = "t";
  for (int l = 0; l < layers; ++l) {
    p.ops.push_back(op(OpKind::RangePush, "layer_0" + std::to_string(l)));
    p.ops.push_back(op(OpKind::Kernel, "gemm", 100));
    if (sync_inside) p.ops.push_back(op(OpKind::StreamSync));
    p.ops.push_back(op(OpKind::RangePop));
    if (!sync_inside) p.ops.push_back(op(OpKind::StreamSync));
  }
  sim::SimOptions so;
  so.steps = steps;
  return sim::simulate(p, profile(), so);
}

}  // namespace syncscope::simtest
