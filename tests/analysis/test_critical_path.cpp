// The critical path per step (profiler/analysis/include/syncscope/analysis/critical_path.hpp) on
// hand-built traces whose replay is worked out by hand (times in us in the comments), its
// kinds summing exactly to its length, the sync and stream-wait edges it follows, and its
// JSON and CSV fields; then on the real torch.profiler fixture.
#include <gtest/gtest.h>

#include <sstream>

#include <nlohmann/json.hpp>

#include "syncscope/analysis/analysis.hpp"
#include "syncscope/io/trace_io.hpp"
#include "syncscope/replay/critical_path.hpp"
#include "syncscope/reports/analysis_printers.hpp"
#include "test_paths.hpp"
#include "test_units.hpp"

namespace syncscope {
namespace {

using test::us;

void call(Trace& t, const char* name, Ns a, Ns b, std::uint64_t corr) {
  ApiCall c;
  c.name = t.intern(name);
  c.pid = 1;
  c.tid = 1;
  c.start = a * us;
  c.end = b * us;
  c.correlation = corr;
  c.device = 0;
  t.api_calls.push_back(c);
}

void kernel(Trace& t, const char* name, std::int64_t stream, Ns a, Ns b, std::uint64_t corr) {
  Kernel k;
  k.name = t.intern(name);
  k.device = 0;
  k.stream = stream;
  k.start = a * us;
  k.end = b * us;
  k.correlation = corr;
  t.kernels.push_back(k);
}

void range(Trace& t, RangeKind kind, const char* name, Ns a, Ns b) {
  Range r;
  r.kind = kind;
  r.name = t.intern(name);
  r.pid = 1;
  r.tid = 1;
  r.start = a * us;
  r.end = b * us;
  t.ranges.push_back(r);
}

void stream_sync(Trace& t, SyncType type, std::int64_t stream, Ns a, Ns b, std::uint64_t corr) {
  SyncRecord s;
  s.type = type;
  s.device = 0;
  s.stream = stream;
  s.start = a * us;
  s.end = b * us;
  s.correlation = corr;
  t.syncs.push_back(s);
}

// One step 0..160 us: launch k1 at 10 (k1 runs 20..120), .item() = a pinned D2H copy
// (copy 120..122) and a stream sync 21..130 that waits for it (8 us round trip), then launch
// k2 at 135..140 (k2 145..150).
Trace item_trace() {
  Trace t;
  range(t, RangeKind::UserAnnotation, "ProfilerStep#0", 0, 160);
  range(t, RangeKind::CpuOp, "aten::item", 16, 131);
  call(t, "cudaLaunchKernel", 10, 15, 1);
  kernel(t, "k1", 7, 20, 120, 1);
  call(t, "cudaMemcpyAsync", 16, 20, 2);
  Memcpy c;
  c.device = 0;
  c.stream = 7;
  c.start = 120 * us;
  c.end = 122 * us;
  c.correlation = 2;
  c.kind = CopyKind::DtoH;
  c.dst_kind = MemoryKind::Pinned;
  c.bytes = 4;
  t.memcpys.push_back(c);
  call(t, "cudaStreamSynchronize", 21, 130, 3);
  stream_sync(t, SyncType::StreamSync, 7, 21, 130, 3);
  call(t, "cudaLaunchKernel", 135, 140, 4);
  kernel(t, "k2", 7, 145, 150, 4);
  t.finalize();
  return t;
}

Ns parts(const CriticalPath& c) { return c.host_ns + c.gpu_ns + c.launch_ns + c.sync_wait_ns + c.other_ns; }

// By hand: the path ends with the last call (k2's launch, ends 140). Back from there: host
// 135..140 and the framework gap 130..135; the sync's end was set by the copy (sync edge
// 122..130); the copy 120..122 and k1 20..120 on stream 7; k1's launch edge 10..20 (launch
// call start to kernel start); the step's host time before its thread's first call: host
// 0..10.
TEST(CriticalPath, ItemStepByHand) {
  const Trace t = item_trace();
  AnalysisResult r = analyze(t);
  ASSERT_EQ(r.steps.size(), 1u);
  replay::add_critical_paths(t, r);
  ASSERT_TRUE(r.steps[0].critical_path);
  const CriticalPath& c = *r.steps[0].critical_path;
  EXPECT_EQ(c.length_ns, 140 * us);
  EXPECT_EQ(c.host_ns, 20 * us);
  EXPECT_EQ(c.sync_wait_ns, 8 * us);
  EXPECT_EQ(c.gpu_ns, 102 * us);
  EXPECT_EQ(c.launch_ns, 10 * us);
  EXPECT_EQ(c.other_ns, 0);
  EXPECT_EQ(parts(c), c.length_ns);
  EXPECT_EQ(c.sync_edges, 1u);
  ASSERT_EQ(c.top.size(), 5u);
  EXPECT_EQ(c.top[0].kind, CriticalKind::Gpu);
  EXPECT_EQ(c.top[0].where, "GPU 0 stream 7");
  EXPECT_EQ(c.top[0].what, "k1 .. Memcpy DtoH");
  EXPECT_EQ(c.top[0].start_ns, 20 * us);
  EXPECT_EQ(c.top[0].duration_ns, 102 * us);
  EXPECT_EQ(c.top[4].kind, CriticalKind::SyncWait);
  EXPECT_EQ(c.top[4].where, "sync aten::item (cudaStreamSynchronize)");
  EXPECT_EQ(c.top[4].duration_ns, 8 * us);
  // One step: the totals are that step.
  ASSERT_TRUE(r.totals.critical_path);
  EXPECT_EQ(r.totals.critical_path->length_ns, c.length_ns);
  EXPECT_EQ(r.totals.critical_path->steps, 1u);
  EXPECT_EQ(r.totals.critical_path->sync_wait_ns, 8 * us);
}

// A longer k1 moves the path's GPU share by exactly that much: the sync's end is computed
// from the GPU work, not copied from the trace.
TEST(CriticalPath, FollowsTheGpuWorkTheSyncWaitsFor) {
  Trace t = item_trace();
  for (auto& k : t.kernels)
    if (t.str(k.name) == "k1") k.end += 1000 * us;
  // The recorded sync and what follows move with it, as on a real run.
  for (auto& c : t.api_calls)
    if (c.start >= 21 * us) {
      if (c.start > 21 * us) c.start += 1000 * us;
      c.end += 1000 * us;
    }
  for (auto& m : t.memcpys) m.start += 1000 * us, m.end += 1000 * us;
  for (auto& s : t.syncs) s.end += 1000 * us;
  for (auto& k : t.kernels)
    if (t.str(k.name) == "k2") k.start += 1000 * us, k.end += 1000 * us;
  for (auto& r : t.ranges) r.end += 1000 * us;
  t.finalize();
  AnalysisResult r = analyze(t);
  replay::add_critical_paths(t, r);
  ASSERT_TRUE(r.steps[0].critical_path);
  const CriticalPath& c = *r.steps[0].critical_path;
  EXPECT_EQ(c.gpu_ns, 1102 * us);
  EXPECT_EQ(c.length_ns, 1140 * us);
  EXPECT_EQ(parts(c), c.length_ns);
}

// Two streams: k2 on stream 13 waits (cudaStreamWaitEvent) for k1 on stream 7, and a device
// sync at the end waits for k2. Step 0..130. Path back from the sync's end (122): sync edge
// 110+r..122 with r the round trip (12 here: the only waiting sync), k2 100..110 on stream
// 13, its start set by the event wait on k1 (stream-wait edge, 0 long), k1 10..100 on stream
// 7, its launch edge 0..10 (the first call starts at 0: no "other").
TEST(CriticalPath, FollowsAStreamWaitAcrossStreams) {
  Trace t;
  range(t, RangeKind::UserAnnotation, "ProfilerStep#0", 0, 130);
  call(t, "cudaLaunchKernel", 0, 5, 1);
  kernel(t, "k1", 7, 10, 100, 1);
  call(t, "cudaEventRecord", 6, 8, 2);
  CudaEventRecord e;
  e.device = 0;
  e.stream = 7;
  e.event_id = 5;
  e.correlation = 2;
  t.cuda_events.push_back(e);
  call(t, "cudaStreamWaitEvent", 9, 11, 3);
  SyncRecord w;
  w.type = SyncType::StreamWaitEvent;
  w.device = 0;
  w.stream = 13;
  w.event_id = 5;
  w.correlation = 3;
  t.syncs.push_back(w);
  call(t, "cudaLaunchKernel", 12, 15, 4);
  kernel(t, "k2", 13, 100, 110, 4);
  call(t, "cudaDeviceSynchronize", 16, 122, 5);
  t.finalize();
  AnalysisResult r = analyze(t);
  replay::add_critical_paths(t, r);
  ASSERT_TRUE(r.steps[0].critical_path);
  const CriticalPath& c = *r.steps[0].critical_path;
  EXPECT_EQ(c.length_ns, 122 * us);
  EXPECT_EQ(c.sync_edges, 1u);
  EXPECT_EQ(c.sync_wait_ns, 12 * us);
  EXPECT_EQ(c.gpu_ns, 100 * us);
  EXPECT_EQ(c.launch_ns, 10 * us);
  EXPECT_EQ(c.host_ns, 0);
  EXPECT_EQ(c.other_ns, 0);
  bool saw7 = false, saw13 = false;
  for (const auto& run : c.top) {
    saw7 = saw7 || run.where == "GPU 0 stream 7";
    saw13 = saw13 || run.where == "GPU 0 stream 13";
  }
  EXPECT_TRUE(saw7 && saw13);
}

TEST(CriticalPath, InJsonAndCsv) {
  const Trace t = item_trace();
  AnalysisResult r = analyze(t);
  replay::add_critical_paths(t, r);
  const auto j = nlohmann::json::parse(analysis_to_json(r));
  const auto& s = j.at("steps").at(0).at("critical_path");
  EXPECT_EQ(s.at("length_ns").get<Ns>(), 140 * us);
  EXPECT_EQ(s.at("sync_wait_ns").get<Ns>(), 8 * us);
  EXPECT_EQ(s.at("top").at(0).at("kind"), "gpu");
  EXPECT_NEAR(s.at("fractions").at("gpu").get<double>(), 102.0 / 140.0, 1e-12);
  EXPECT_TRUE(j.at("totals").contains("critical_path"));
  const std::string csv = analysis_to_csv(r);
  EXPECT_NE(csv.find("step,ProfilerStep#0,0,critical_path.length_ns,140000,"), std::string::npos) << csv;
  EXPECT_NE(csv.find("critical_path.top.1.where,GPU 0 stream 7,"), std::string::npos);
  std::ostringstream table;
  print_analysis_table(r, table);
  EXPECT_NE(table.str().find("critical path (replayed, 1 step(s))"), std::string::npos) << table.str();
}

// The real torch.profiler fixture: every step's path sums exactly, it ends no later than the
// replayed step, and the .item() syncs put sync edges on it.
TEST(CriticalPath, ItemLoopFixtureStepsSumExactly) {
  const Trace t = read_trace(test::fixture("torch/item_loop_l8_h200.json.gz"));
  AnalysisOptions o;
  o.step_glob = "train_step#*";
  AnalysisResult r = analyze(t, o);
  replay::add_critical_paths(t, r);
  ASSERT_EQ(r.steps.size(), 3u);
  for (const auto& s : r.steps) {
    ASSERT_TRUE(s.critical_path) << s.name;
    const CriticalPath& c = *s.critical_path;
    EXPECT_GT(c.length_ns, 0) << s.name;
    EXPECT_EQ(parts(c), c.length_ns) << s.name;
    EXPECT_GE(c.sync_edges, 1u) << s.name;
    EXPECT_LE(c.top.size(), kCriticalTopRuns);
  }
  ASSERT_TRUE(r.totals.critical_path);
  EXPECT_EQ(r.totals.critical_path->steps, 3u);
  EXPECT_EQ(parts(*r.totals.critical_path), r.totals.critical_path->length_ns);
}

}  // namespace
}  // namespace syncscope
