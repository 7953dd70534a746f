// extract_timeline on simulated traces whose timelines are worked out by hand.
#include <gtest/gtest.h>

#include "syncscope/reports/html_report.hpp"
#include "syncscope/sim/simulator.hpp"

namespace syncscope {
namespace {

using program::Op;
using program::OpKind;

GpuProfile profile() {
  GpuProfile p;
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

Op op(OpKind k, const std::string& name = "", double us = 0, int stream = 0) {
  Op o;
  o.kind = k;
  o.name = name;
  o.stream = stream;
  o.flops = us * 1e6;
  return o;
}

TEST(Timeline, LayerWithSyncShowsBubbleAndBlockedHost) {
  program::Program p;
  p.name = "t";
  for (int l = 0; l < 3; ++l) {
    p.ops.push_back(op(OpKind::RangePush, "layer_0" + std::to_string(l)));
    p.ops.push_back(op(OpKind::Kernel, "gemm", 100));
    p.ops.push_back(op(OpKind::StreamSync));
    p.ops.push_back(op(OpKind::RangePop));
  }
  sim::SimOptions so;
  so.steps = 3;
  Trace t = sim::simulate(p, profile(), so);
  AnalysisOptions ao;
  ao.layer_glob = "layer_*";
  TimelineStrip s = extract_timeline(t, analyze(t, ao));
  // Middle step, middle layer with a sync: layer_01. Host window: launch [0,5], sync
  // [5,130] relative to the layer start; the kernel runs [10,110]. GPU idle [0,10] and
  // [110,130] inside the window.
  EXPECT_EQ(s.window, "layer_01 in ProfilerStep#1");
  EXPECT_EQ(s.duration_ns, 130'000);
  EXPECT_EQ(s.syncs, 1u);
  EXPECT_EQ(s.bubble_ns, 30'000);
  ASSERT_EQ(s.lanes.size(), 2u);
  EXPECT_EQ(s.lanes[0], "host");
  int kernels = 0, syncs = 0;
  for (const auto& g : s.segments) {
    kernels += g.kind == "kernel";
    syncs += g.kind == "sync";
    EXPECT_GE(g.start, 0);
    EXPECT_LE(g.end, s.duration_ns);
  }
  EXPECT_EQ(kernels, 1);
  EXPECT_EQ(syncs, 1);
}

TEST(Timeline, PrefersLayerWithCopiesForOffloadAndExtendsToLaunchedWork) {
  program::Program p;
  p.name = "t";
  p.streams = {{"main", false}, {"copy", true}};
  p.ops.push_back(op(OpKind::RangePush, "layer_00"));
  p.ops.push_back(op(OpKind::Kernel, "fwd", 50));
  p.ops.push_back(op(OpKind::RangePop));
  p.ops.push_back(op(OpKind::RangePush, "layer_00"));
  Op c = op(OpKind::Copy, "", 0, 1);
  c.copy = CopyKind::HtoD;
  c.host_memory = MemoryKind::Pinned;
  c.bytes = 200e3;  // 200 us at 1 GB/s
  p.ops.push_back(c);
  p.ops.push_back(op(OpKind::Kernel, "bwd", 100));
  p.ops.push_back(op(OpKind::RangePop));
  p.ops.push_back(op(OpKind::DeviceSync));
  Trace t = sim::simulate(p, profile());
  AnalysisOptions ao;
  ao.layer_glob = "layer_*";
  TimelineOptions to;
  to.prefer_copies = true;
  TimelineStrip s = extract_timeline(t, analyze(t, ao), to);
  // The second layer_00 range (host [5,15]) launched a copy running [15,215] and a kernel
  // queued behind fwd on main: fwd [10,60], bwd [60,160]. Window [5,215].
  EXPECT_EQ(s.duration_ns, 210'000);
  bool h2d = false;
  int own = 0, other = 0, ranges = 0;
  for (const auto& g : s.segments) {
    h2d |= g.kind == "h2d";
    if (g.kind == "kernel") {
      ++own;
      EXPECT_EQ(g.label, "bwd");
    }
    if (g.kind == "other") {  // fwd was launched from the first layer_00, not this one
      ++other;
      EXPECT_EQ(g.label, "fwd");
    }
    if (g.kind == "range") {  // the host range itself: [5,15] from the window start at 5
      ++ranges;
      EXPECT_EQ(g.lane, "host");
      EXPECT_EQ(g.start, 0);
      EXPECT_EQ(g.end, 10'000);
    }
  }
  EXPECT_TRUE(h2d);
  EXPECT_EQ(own, 1);
  EXPECT_EQ(other, 1);
  EXPECT_EQ(ranges, 1);
  EXPECT_EQ(s.lanes.size(), 3u);
}

}  // namespace
}  // namespace syncscope
