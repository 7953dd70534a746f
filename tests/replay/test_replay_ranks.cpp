// Single-rank replay of what distributed training traces hold (issue 36), on hand-built traces
// whose replay is worked out by hand (times in us): a communication kernel anchored at its
// recorded end, a stream wait with no event record inferred from the timeline or, with no
// evidence, its work's delay kept, launch latency taken from work issued to an idle stream, and
// a launch call blocked on a full launch queue waiting for the GPU.
#include <gtest/gtest.h>

#include <string>

#include "syncscope/replay/replay.hpp"
#include "test_units.hpp"

namespace syncscope {
namespace {

using test::us;

void rank_call(Trace& t, const char* name, Ns a, Ns b, std::uint64_t corr) {
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

void rank_kernel(Trace& t, const char* name, std::int64_t stream, Ns a, Ns b, std::uint64_t corr) {
  Kernel k;
  k.name = t.intern(name);
  k.device = 0;
  k.stream = stream;
  k.start = a * us;
  k.end = b * us;
  k.correlation = corr;
  t.kernels.push_back(k);
}

void step(Trace& t, Ns a, Ns b) {
  Range r;
  r.kind = RangeKind::UserAnnotation;
  r.name = t.intern("ProfilerStep#0");
  r.pid = 1;
  r.tid = 1;
  r.start = a * us;
  r.end = b * us;
  t.ranges.push_back(r);
}

// Three launches to an idle stream 7, each starting 10 us after its call: the launch latency.
void idle_launches(Trace& t, std::uint64_t corr) {
  for (Ns at : {400, 500, 600}) {
    rank_call(t, "cudaLaunchKernel", at, at + 5, corr);
    rank_kernel(t, "k", 7, at + 10, at + 20, corr);
    ++corr;
  }
}

std::uint32_t node_named(const Trace& t, const replay::ReplayGraph& g, const char* name) {
  for (std::uint32_t i = 0; i < g.nodes.size(); ++i)
    if (g.nodes[i].kind == replay::ReplayNode::Kind::Kernel && t.str(t.kernels[g.nodes[i].record].name) == name)
      return i;
  return replay::kNoNode;
}

// kA on stream 7 (20-300); a cudaStreamWaitEvent (30) with no event record, as older Kineto
// writes it; kB launched on stream 9 at 40 but recorded at `kb_start`.
Trace wait_trace(Ns ka_end, Ns kb_start) {
  Trace t;
  step(t, 0, 700);
  rank_call(t, "cudaLaunchKernel", 10, 15, 1);
  rank_kernel(t, "kA", 7, 20, ka_end, 1);
  rank_call(t, "cudaStreamWaitEvent", 30, 32, 2);
  rank_call(t, "cudaLaunchKernel", 40, 45, 3);
  rank_kernel(t, "kB", 9, kb_start, kb_start + 18, 3);
  idle_launches(t, 10);
  t.finalize();
  return t;
}

TEST(ReplayRanks, LaunchLatencyComesFromWorkIssuedToAnIdleStream) {
  // kB's 262 us from launch to start is not launch latency (it waited for kA): the median of
  // the idle-stream samples is 10 us however many such waits there are.
  const Trace t = wait_trace(300, 302);
  const replay::ReplayGraph g = replay::build_replay_graph(t);
  EXPECT_EQ(g.launch_latency_ns[1], 10 * us);
}

// kB starts 2 us after kA ends, 252 us later than its launch allows: the wait was for kA.
TEST(ReplayRanks, AStreamWaitWithNoRecordIsInferredFromTheTimeline) {
  const Trace t = wait_trace(300, 302);
  replay::ReplayGraph g = replay::build_replay_graph(t);
  EXPECT_EQ(g.problems.inferred_waits, 1u);
  EXPECT_EQ(g.problems.waits_without_record, 0u);
  const std::uint32_t ka = node_named(t, g, "kA"), kb = node_named(t, g, "kB");
  ASSERT_NE(kb, replay::kNoNode);
  ASSERT_EQ(g.nodes[kb].waits.size(), 1u);
  EXPECT_EQ(g.nodes[kb].waits[0], ka);
  const replay::ReplayTimes base = replay::run_replay(g);
  EXPECT_EQ(base.start[kb], 300 * us);  // kA's end: the 2 us of resolution are not kept
  // What the edge carries: kA 100 us longer moves kB by as much.
  g.nodes[ka].own_ns += 100 * us;
  const replay::ReplayTimes longer = replay::run_replay(g);
  EXPECT_EQ(longer.start[kb], 400 * us);
  bool said = false;
  for (const auto& line : g.problems.describe(g.step_glob))
    said = said || line.find("1 stream wait(s) with no event record") != std::string::npos;
  EXPECT_TRUE(said);
}

// kB starts 102 us after kA ends: held by something the trace does not show. It keeps that
// delay (252 us past its launch and the launch latency) after whatever binds it; before it was
// modelled it replayed at its launch + 10 us, 252 us early.
TEST(ReplayRanks, WorkHeldByWhatTheTraceDoesNotShowKeepsItsDelay) {
  const Trace t = wait_trace(200, 302);
  replay::ReplayGraph g = replay::build_replay_graph(t);
  EXPECT_EQ(g.problems.inferred_waits, 0u);
  EXPECT_EQ(g.problems.held_anchored, 1u);
  const std::uint32_t ka = node_named(t, g, "kA"), kb = node_named(t, g, "kB");
  EXPECT_TRUE(g.nodes[kb].held);
  EXPECT_EQ(g.nodes[kb].gap_ns, 252 * us);
  EXPECT_EQ(replay::run_replay(g).start[kb], 302 * us);
  g.nodes[ka].own_ns = 0;  // nothing the graph holds moves it earlier
  EXPECT_EQ(replay::run_replay(g).start[kb], 302 * us);
  g.nodes[ka].own_ns = 1000 * us;  // kA is no edge of kB's: it does not move it later either
  EXPECT_EQ(replay::run_replay(g).start[kb], 302 * us);
}

// A queue of depth 1 on one stream: K1 20-220, K2 220-420, K3 420-620, K4 620-820, launched at
// 0, 5, 10 and 22: the third call returns when K1 starts (21), the fourth when K2 does (221: 199 us).
// The depth is fitted (1: the most left pending at a return), the blocked call costs a launch's
// median (2 us) plus its wait for K2's start, so a shorter K1 frees the host sooner.
TEST(ReplayRanks, ALaunchBlockedOnAFullQueueWaitsForTheGpu) {
  Trace t;
  step(t, 0, 900);
  const Ns at[4] = {0, 5, 10, 22}, ret[4] = {2, 7, 21, 221};
  for (int k = 0; k < 4; ++k) {
    rank_call(t, "cudaLaunchKernel", at[k], ret[k], static_cast<std::uint64_t>(k + 1));
    const std::string name = "K" + std::to_string(k + 1);
    rank_kernel(t, name.c_str(), 7, 20 + 200 * k, 220 + 200 * k, static_cast<std::uint64_t>(k + 1));
  }
  rank_call(t, "cudaStreamSynchronize", 230, 821, 9);
  t.finalize();
  replay::ReplayGraph g = replay::build_replay_graph(t);
  EXPECT_EQ(g.launch_queue_depth, 1u);
  EXPECT_EQ(g.blocked_launches, 1u);
  std::uint32_t blocked = replay::kNoNode;
  for (std::uint32_t i = 0; i < g.nodes.size(); ++i)
    if (g.nodes[i].kind == replay::ReplayNode::Kind::Call && g.nodes[i].rec_start == 22 * us) blocked = i;
  ASSERT_NE(blocked, replay::kNoNode);
  EXPECT_EQ(g.nodes[blocked].own_ns, 2 * us);
  const std::uint32_t k1 = node_named(t, g, "K1"), k2 = node_named(t, g, "K2");
  EXPECT_EQ(g.nodes[blocked].engine_prev, k2);
  EXPECT_EQ(replay::run_replay(g).end[blocked], 220 * us);  // K2's start (recorded: 221)
  g.nodes[k1].own_ns -= 100 * us;
  EXPECT_EQ(replay::run_replay(g).end[blocked], 120 * us);
}

// An NCCL kernel that waited for its peers (20-300) and a later run of it that did not (50 us):
// the first cannot end before 300 whatever the rank does; made to start later, it lasts at
// least the shortest run (its transfer), not its recorded 280 us.
TEST(ReplayRanks, ACollectiveEndsNoEarlierThanItsPeersAllowed) {
  Trace t;
  step(t, 0, 700);
  rank_call(t, "cudaLaunchKernel", 5, 8, 3);
  rank_kernel(t, "k0", 9, 12, 18, 3);
  rank_call(t, "cudaLaunchKernel", 10, 15, 1);
  rank_kernel(t, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 9, 20, 300, 1);
  rank_call(t, "cudaLaunchKernel", 400, 405, 2);
  rank_kernel(t, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 9, 410, 460, 2);
  t.finalize();
  replay::ReplayGraph g = replay::build_replay_graph(t);
  EXPECT_EQ(g.problems.comm_kernels, 2u);
  std::uint32_t first = replay::kNoNode;
  const std::uint32_t k0 = node_named(t, g, "k0");
  for (std::uint32_t i = 0; i < g.nodes.size(); ++i)
    if (g.nodes[i].comm) {
      EXPECT_EQ(g.nodes[i].own_ns, 50 * us);
      if (first == replay::kNoNode) first = i;
    }
  ASSERT_NE(first, replay::kNoNode);
  EXPECT_EQ(replay::run_replay(g).end[first], 300 * us);
  g.nodes[k0].own_ns = 0;  // the rank is ready sooner: its peers are not
  EXPECT_EQ(replay::run_replay(g).end[first], 300 * us);
  g.nodes[k0].own_ns = 1000 * us;  // the rank comes late: the transfer follows it
  const replay::ReplayTimes late = replay::run_replay(g);
  EXPECT_EQ(late.start[first], late.end[k0]);
  EXPECT_EQ(late.end[first], late.start[first] + 50 * us);
}

}  // namespace
}  // namespace syncscope
