// Hand-written programs and profiles for the simulator tests.
#pragma once

#include <algorithm>
#include <string>

#include "syncscope/model/gpu_profile.hpp"
#include "syncscope/program/program.hpp"
#include "syncscope/sim/simulator.hpp"

namespace syncscope::simtest {

using program::Op;
using program::OpKind;
using program::Program;

// Round numbers so expected times can be worked out by hand: 1 TFLOP/s bf16 means 1e6
// flops take 1 us; 1 GB/s means 1000 bytes take 1 us.
inline model::GpuProfile test_profile() {
  model::GpuProfile p;
  p.name = "test";
  p.launch_overhead_ns = 5'000;   // host: 5 us per enqueue call
  p.launch_latency_ns = 10'000;   // call start -> earliest GPU start: 10 us
  p.sync_round_trip_ns = 20'000;  // 20 us
  p.bf16_flops_per_s = 1e12;
  p.fp32_flops_per_s = 0.5e12;
  p.dram_bytes_per_s = 1e12;
  p.h2d_pinned_bytes_per_s = 1e9;
  p.d2h_pinned_bytes_per_s = 1e9;
  p.h2d_pageable_bytes_per_s = 0.5e9;
  p.d2h_pageable_bytes_per_s = 0.5e9;
  p.sm_count = 100;
  p.memory_bytes = 80e9;
  return p;
}

inline Op kernel(const std::string& name, int stream, double us) {
  Op op;
  op.kind = OpKind::Kernel;
  op.name = name;
  op.stream = stream;
  op.flops = us * 1e6;  // at 1 TFLOP/s
  return op;
}

inline Op copy(CopyKind kind, int stream, double us, MemoryKind host = MemoryKind::Pinned, double rate = 1e9) {
  Op op;
  op.kind = OpKind::Copy;
  op.name = "";
  op.stream = stream;
  op.copy = kind;
  op.host_memory = host;
  op.bytes = us * rate / 1e6;
  return op;
}

inline Op simple(OpKind kind, int stream = 0, int event = -1, const std::string& name = "") {
  Op op;
  op.kind = kind;
  op.stream = stream;
  op.event = event;
  op.name = name;
  return op;
}

inline Program two_stream_program(bool non_blocking) {
  Program p;
  p.name = "test";
  p.streams = {{"main", non_blocking}, {"side", non_blocking}};
  return p;
}

// Records of the trace by name / kind.
inline const Kernel& kernel_named(const Trace& t, const std::string& name) {
  auto it = std::find_if(t.kernels.begin(), t.kernels.end(), [&](const Kernel& k) { return t.str(k.name) == name; });
  if (it == t.kernels.end()) throw std::runtime_error("no kernel " + name);
  return *it;
}

inline const ApiCall& api_named(const Trace& t, const std::string& name, int nth = 0) {
  for (const auto& c : t.api_calls)
    if (t.str(c.name) == name && nth-- == 0) return c;
  throw std::runtime_error("no API call " + name);
}

}  // namespace syncscope::simtest
