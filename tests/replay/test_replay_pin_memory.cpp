// pin-memory[:h2d|:d2h] (model/replay/src/edit_copies.cpp) on small hand-built traces whose
// edited replay is worked out by hand (times in us). As in test_replay_edits.cpp, every trace
// is consistent with one launch latency (10 us) and one sync round trip (8 us), so its identity
// replay is exact and the edited step follows from the graph's rules and the edit's alone.
#include <gtest/gtest.h>

#include <string>

#include "syncscope/core/error.hpp"
#include "syncscope/replay/replay.hpp"
#include "test_units.hpp"

namespace syncscope {
namespace {

namespace m = model;
using test::us;

struct PinBuilder {
  Trace t;
  std::uint64_t corr = 0;

  std::uint64_t call(const char* name, Ns a, Ns b) {
    ApiCall c;
    c.name = t.intern(name);
    c.pid = 1;
    c.tid = 1;
    c.start = a * us;
    c.end = b * us;
    c.correlation = ++corr;
    c.device = 0;
    t.api_calls.push_back(c);
    return c.correlation;
  }
  void launch(Ns a, Ns b, Ns k0, Ns k1) {
    Kernel k;
    k.name = t.intern("k");
    k.device = 0;
    k.stream = 7;
    k.start = k0 * us;
    k.end = k1 * us;
    k.correlation = call("cudaLaunchKernel", a, b);
    t.kernels.push_back(k);
  }
  // A copy call [a, b) (cudaMemcpyAsync or cudaMemcpy) and its copy [c0, c1) on stream 7.
  void copy(const char* api, CopyKind kind, MemoryKind host, std::uint64_t bytes, Ns a, Ns b, Ns c0, Ns c1) {
    Memcpy m;
    m.device = 0;
    m.stream = 7;
    m.start = c0 * us;
    m.end = c1 * us;
    m.kind = kind;
    m.src_kind = kind == CopyKind::HtoD ? host : MemoryKind::Device;
    m.dst_kind = kind == CopyKind::DtoH ? host : MemoryKind::Device;
    m.async = std::string(api).ends_with("Async");
    m.bytes = bytes;
    m.correlation = call(api, a, b);
    t.memcpys.push_back(m);
  }
  void sync(const char* api, SyncType type, Ns a, Ns b) {
    SyncRecord s;
    s.type = type;
    s.device = 0;
    s.stream = type == SyncType::StreamSync ? 7 : -1;
    s.start = a * us;
    s.end = b * us;
    s.correlation = call(api, a, b);
    t.syncs.push_back(s);
  }
  void step(Ns a, Ns b) {
    Range r;
    r.kind = RangeKind::UserAnnotation;
    r.name = t.intern("ProfilerStep#0");
    r.pid = 1;
    r.tid = 1;
    r.start = a * us;
    r.end = b * us;
    t.ranges.push_back(r);
  }
  Trace done() {
    t.finalize();
    return std::move(t);
  }
};

// `data.to(device)` from pageable memory, then two kernels and a device sync (step T..T+340):
//   C cudaMemcpyAsync [T, T+200] (it stages the 4 MB: the call lasts as long as the copy) ->
//   copy HtoD pageable [T+10, T+205]; S cudaStreamSynchronize [T+201, T+213] (205 + r);
//   L1 [T+214, T+219] -> K1 [T+224, T+274]; L2 [T+220, T+225] -> K2 [T+274, T+324];
//   D cudaDeviceSynchronize [T+226, T+332] (324 + r).
// With `pinned_first`, four pinned 2 MB copies (50 us each: 40 GB/s) from 4 us async calls come
// first, and the step starts at T = 1000.
Trace pageable_batch(bool pinned_first = false, const char* api = "cudaMemcpyAsync") {
  PinBuilder b;
  Ns t0 = 0;
  if (pinned_first) {
    for (Ns a : {0, 100, 200, 300})
      b.copy("cudaMemcpyAsync", CopyKind::HtoD, MemoryKind::Pinned, 2'000'000, a, a + 4, a + 10, a + 60);
    t0 = 1000;
  }
  b.step(t0, t0 + 340);
  b.copy(api, CopyKind::HtoD, MemoryKind::Pageable, 4'000'000, t0, t0 + 200, t0 + 10, t0 + 205);
  b.sync("cudaStreamSynchronize", SyncType::StreamSync, t0 + 201, t0 + 213);
  b.launch(t0 + 214, t0 + 219, t0 + 224, t0 + 274);
  b.launch(t0 + 220, t0 + 225, t0 + 274, t0 + 324);
  b.sync("cudaDeviceSynchronize", SyncType::ContextSync, t0 + 226, t0 + 332);
  return b.done();
}

m::TracePredictOptions with_profile(double h2d, double d2h) {
  m::TracePredictOptions o;
  m::GpuProfile p;
  p.name = "TEST";
  p.h2d_pinned_bytes_per_s = h2d;
  p.d2h_pinned_bytes_per_s = d2h;
  p.launch_overhead_ns = 5000;
  o.profile = p;
  return o;
}

double step_us(const replay::ReplayGraph& g) {
  return static_cast<double>(replay::replay_steps(g, replay::run_replay(g)).at(0).replayed_ns) / us;
}

std::uint32_t node_of(const replay::ReplayGraph& g, replay::ReplayNode::Kind kind, std::uint32_t record) {
  for (std::uint32_t i = 0; i < g.nodes.size(); ++i)
    if (g.nodes[i].kind == kind && g.nodes[i].record == record) return i;
  return replay::kNoNode;
}

// The pageable copy's 4 MB at the profile's 40 GB/s: 100 us; its call takes a launch call's
// cost, the median of the trace's two kernel launch calls (5 us). Edited: C [0,5] -> copy
// [10,110]; S [6,118]; L1 [119,124] -> K1 [129,179]; L2 [125,130] -> K2 [179,229]; D [131,237];
// the step ends 8 us after D: 245 (identity 340).
TEST(ReplayPinMemory, APageableCopyBecomesPinnedAtTheProfilesRate) {
  const Trace t = pageable_batch();
  replay::ReplayGraph g = replay::build_replay_graph(t, {});
  EXPECT_DOUBLE_EQ(step_us(g), 340);
  const replay::EditResult r =
      replay::apply_what_if(t, g, replay::parse_what_if("pin-memory"), with_profile(40e9, 40e9));
  EXPECT_EQ(r.selected, 1u);
  const std::uint32_t copy = node_of(g, replay::ReplayNode::Kind::Copy, 0);
  ASSERT_NE(copy, replay::kNoNode);
  EXPECT_EQ(g.nodes[copy].own_ns, 100 * us);
  EXPECT_EQ(g.nodes[g.nodes[copy].launch].own_ns, 5 * us);
  EXPECT_DOUBLE_EQ(step_us(g), 245);
  ASSERT_FALSE(r.notes.empty());
  EXPECT_NE(r.notes[0].find("GPU profile TEST"), std::string::npos) << r.notes[0];
  EXPECT_NE(r.notes.back().find("kernel launch calls"), std::string::npos) << r.notes.back();
}

// A rate the profile gives slower than the trace's pageable copy leaves the copy as recorded
// (pinned is never slower): 4 MB at 10 GB/s would be 400 us, the copy took 195. Only the call
// gets shorter: C [0,5] -> copy [10,205]; S [6,213]; the rest as recorded from 214: 340 - 0.
TEST(ReplayPinMemory, APinnedCopyIsNeverSlowerThanItWasRecorded) {
  const Trace t = pageable_batch();
  replay::ReplayGraph g = replay::build_replay_graph(t, {});
  (void)replay::apply_what_if(t, g, replay::parse_what_if("pin-memory:h2d"), with_profile(10e9, 10e9));
  EXPECT_EQ(g.nodes[node_of(g, replay::ReplayNode::Kind::Copy, 0)].own_ns, 195 * us);
  EXPECT_DOUBLE_EQ(step_us(g), 340);
}

// The trace's own pinned copies come first: four 2 MB copies at 40 GB/s (the profile's 10 GB/s
// is not used), their 4 us calls the launch cost. Edited step as above but C lasts 4 us: S still
// ends at copy end + r = 1118, so the step is 245 again.
TEST(ReplayPinMemory, TheTracesOwnPinnedCopiesGiveTheRate) {
  const Trace t = pageable_batch(true);
  replay::ReplayGraph g = replay::build_replay_graph(t, {});
  EXPECT_DOUBLE_EQ(step_us(g), 340);
  const replay::EditResult r =
      replay::apply_what_if(t, g, replay::parse_what_if("pin-memory"), with_profile(10e9, 10e9));
  EXPECT_EQ(r.selected, 1u);  // the pinned copies are left alone
  const std::uint32_t copy = node_of(g, replay::ReplayNode::Kind::Copy, 4);
  ASSERT_NE(copy, replay::kNoNode);
  EXPECT_EQ(g.nodes[copy].own_ns, 100 * us);
  EXPECT_EQ(g.nodes[g.nodes[copy].launch].own_ns, 4 * us);
  EXPECT_DOUBLE_EQ(step_us(g), 245);
  EXPECT_NE(r.notes[0].find("the trace's 4 pinned host-to-device copies"), std::string::npos) << r.notes[0];
  EXPECT_NE(r.notes.back().find("4 pinned async copy calls"), std::string::npos) << r.notes.back();
}

// No pinned copy in the trace and no profile: the edit refuses, naming the option.
TEST(ReplayPinMemory, WithoutARateItRefusesNamingTheOption) {
  const Trace t = pageable_batch();
  replay::ReplayGraph g = replay::build_replay_graph(t, {});
  try {
    (void)replay::apply_what_if(t, g, replay::parse_what_if("pin-memory"), {});
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--gpu-profile"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("h2d_pinned_bytes_per_s"), std::string::npos) << e.what();
  }
  // Through the report an explicit edit throws the same; a direction with nothing to pin
  // selects nothing (and the report then says so).
  EXPECT_THROW((void)replay::replay_what_if(t, {"pin-memory"}, {}, {}), InputError);
  replay::ReplayGraph g2 = replay::build_replay_graph(t, {});
  const replay::EditResult none = replay::apply_what_if(t, g2, replay::parse_what_if("pin-memory:d2h"), {});
  EXPECT_EQ(none.selected, 0u);
  EXPECT_NE(none.nothing_selected.find("no device-to-host copy with a pageable host side"), std::string::npos)
      << none.nothing_selected;
}

// A synchronous cudaMemcpy from pinned memory still returns only when its copy is done (CUDA
// docs): C cudaMemcpy [0,213] (copy [10,205] + r); S [214,214] (nothing left to wait for);
// L1 [215,220] -> K1 [225,275]; L2 [221,226] -> K2 [275,325]; D [227,333]; step 0..340.
// Edited: copy [10,110], C waits for it: [0,118]; S [119,119]; L1 [120,125] -> K1 [130,180];
// L2 [126,131] -> K2 [180,230]; D [132,238]; the step ends 7 us after D: 245.
TEST(ReplayPinMemory, ASynchronousCopyStillWaitsForItsShorterCopy) {
  PinBuilder b;
  b.step(0, 340);
  b.copy("cudaMemcpy", CopyKind::HtoD, MemoryKind::Pageable, 4'000'000, 0, 213, 10, 205);
  b.sync("cudaStreamSynchronize", SyncType::StreamSync, 214, 214);
  b.launch(215, 220, 225, 275);
  b.launch(221, 226, 275, 325);
  b.sync("cudaDeviceSynchronize", SyncType::ContextSync, 227, 333);
  const Trace t = b.done();
  replay::ReplayGraph g = replay::build_replay_graph(t, {});
  EXPECT_DOUBLE_EQ(step_us(g), 340);
  (void)replay::apply_what_if(t, g, replay::parse_what_if("pin-memory"), with_profile(40e9, 40e9));
  const std::uint32_t copy = node_of(g, replay::ReplayNode::Kind::Copy, 0);
  EXPECT_TRUE(g.nodes[g.nodes[copy].launch].sync);
  const replay::ReplayTimes tm = replay::run_replay(g);
  EXPECT_EQ(tm.end[g.nodes[copy].launch], 118 * us);
  EXPECT_DOUBLE_EQ(step_us(g), 245);
}

// An async device-to-host copy into pageable memory blocks its call (graph_edges.cpp); pinned,
// it does not. L [0,5] -> K [10,110]; C cudaMemcpyAsync DtoH [6,128] (copy [110,120] + r);
// L2 [129,134] -> K2 [139,189]; D [135,197]; step 0..200. Edited (400 kB at 40 GB/s: 10 us,
// as recorded): C [6,11] (a launch call's 5 us) -> copy [110,120]; L2 [12,17] -> K2 [120,170];
// D [18,178]; step 181.
TEST(ReplayPinMemory, ADeviceToHostCopyNoLongerBlocksItsCall) {
  PinBuilder b;
  b.step(0, 200);
  b.launch(0, 5, 10, 110);
  b.copy("cudaMemcpyAsync", CopyKind::DtoH, MemoryKind::Pageable, 400'000, 6, 128, 110, 120);
  b.launch(129, 134, 139, 189);
  b.sync("cudaDeviceSynchronize", SyncType::ContextSync, 135, 197);
  const Trace t = b.done();
  replay::ReplayGraph g = replay::build_replay_graph(t, {});
  const std::uint32_t copy = node_of(g, replay::ReplayNode::Kind::Copy, 0);
  ASSERT_TRUE(g.nodes[g.nodes[copy].launch].sync);
  EXPECT_DOUBLE_EQ(step_us(g), 200);
  const replay::EditResult r =
      replay::apply_what_if(t, g, replay::parse_what_if("pin-memory:d2h"), with_profile(1e9, 40e9));
  EXPECT_EQ(r.selected, 1u);
  EXPECT_FALSE(g.nodes[g.nodes[copy].launch].sync);
  EXPECT_DOUBLE_EQ(step_us(g), 181);
  EXPECT_NE(r.notes.back().find("1 no longer wait"), std::string::npos) << r.notes.back();
  // pin-memory:h2d has nothing to pin here.
  replay::ReplayGraph g2 = replay::build_replay_graph(t, {});
  EXPECT_EQ(replay::apply_what_if(t, g2, replay::parse_what_if("pin-memory:h2d"), with_profile(40e9, 40e9)).selected,
            0u);
}

TEST(ReplayPinMemory, Spellings) {
  EXPECT_EQ(replay::parse_what_if("pin-memory").kind, replay::WhatIfEdit::Kind::PinMemory);
  EXPECT_EQ(replay::parse_what_if("pin-memory").selector, "");
  EXPECT_EQ(replay::parse_what_if("pin-memory:h2d").selector, "h2d");
  EXPECT_EQ(replay::parse_what_if("pin-memory:d2h").selector, "d2h");
  EXPECT_THROW((void)replay::parse_what_if("pin-memory:both"), InputError);
  EXPECT_THROW((void)replay::parse_what_if("pin-memory:"), InputError);
  EXPECT_NE(replay::what_if_forms().find("pin-memory[:h2d|:d2h]"), std::string::npos) << replay::what_if_forms();
}

}  // namespace
}  // namespace syncscope
