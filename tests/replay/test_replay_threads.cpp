// Hand-offs between host threads (model/replay/src/graph_threads.cpp) on hand-built traces whose
// replay is worked out by hand (times in us): the main thread syncs, then calls backward, which
// PyTorch's autograd thread runs (its launches), then syncs on the device; removing the first
// sync moves the autograd thread's launches with it. A thread whose calls come at its own times
// (a DataLoader's) is not linked.
#include <gtest/gtest.h>

#include "syncscope/replay/replay.hpp"
#include "test_units.hpp"

namespace syncscope {
namespace {

using test::us;
constexpr std::int64_t kMain = 1, kAutograd = 2, kLoader = 3;

void call(Trace& t, std::int64_t tid, const char* name, Ns a, Ns b, std::uint64_t corr) {
  ApiCall c;
  c.name = t.intern(name);
  c.pid = 1;
  c.tid = tid;
  c.start = a * us;
  c.end = b * us;
  c.correlation = corr;
  c.device = 0;
  t.api_calls.push_back(c);
}

void launch(Trace& t, std::int64_t tid, Ns a, Ns k0, Ns k1, std::uint64_t corr) {
  call(t, tid, "cudaLaunchKernel", a, a + 5, corr);
  Kernel k;
  k.name = t.intern("k" + std::to_string(corr));
  k.device = 0;
  k.stream = 7;
  k.start = k0 * us;
  k.end = k1 * us;
  k.correlation = corr;
  t.kernels.push_back(k);
}

void sync(Trace& t, SyncType type, const char* name, Ns a, Ns b, std::uint64_t corr) {
  call(t, kMain, name, a, b, corr);
  SyncRecord s;
  s.type = type;
  s.device = 0;
  s.stream = type == SyncType::StreamSync ? 7 : -1;
  s.start = a * us;
  s.end = b * us;
  s.correlation = corr;
  t.syncs.push_back(s);
}

// Step 0..200. Main: launch k1 (20-120), cudaStreamSynchronize 20-125 (waits k1, 5 us round
// trip), then backward: the autograd thread launches k2, k3, k5, k6 at 135, 145, 155, 165 (each
// 10 us after its launch, back to back on stream 7, k6 ending 180) while main waits; main returns
// and cudaDeviceSynchronize 180-185 waits for k6. `loader`: a third thread's calls, at its own
// times, if given.
Trace backward_trace(const std::vector<std::pair<Ns, Ns>>& loader = {}) {
  Trace t;
  Range r;
  r.kind = RangeKind::UserAnnotation;
  r.name = t.intern("ProfilerStep#0");
  r.pid = 1;
  r.tid = kMain;
  r.start = 0;
  r.end = 200 * us;
  t.ranges.push_back(r);
  launch(t, kMain, 10, 20, 120, 1);
  sync(t, SyncType::StreamSync, "cudaStreamSynchronize", 20, 125, 10);
  launch(t, kAutograd, 135, 145, 155, 2);
  launch(t, kAutograd, 145, 155, 165, 3);
  launch(t, kAutograd, 155, 165, 175, 5);
  launch(t, kAutograd, 165, 175, 180, 6);
  sync(t, SyncType::ContextSync, "cudaDeviceSynchronize", 180, 185, 11);
  std::uint64_t corr = 100;
  for (auto [a, b] : loader) call(t, kLoader, "cudaHostAlloc", a, b, ++corr);
  t.finalize();
  return t;
}

std::uint32_t first_call_of(const replay::ReplayGraph& g, std::int64_t tid) {
  for (std::size_t k = 0; k < g.threads.size(); ++k)
    if (g.threads[k].second == tid) return g.thread_calls[k].front();
  return replay::kNoNode;
}

TEST(ReplayThreads, BackwardOnAnotherThreadMovesWithTheCaller) {
  const Trace t = backward_trace();
  replay::ReplayGraph g = replay::build_replay_graph(t);
  // Main -> autograd at the sync's end (+10 us), autograd -> main at k6's launch call's end (+10).
  EXPECT_EQ(g.problems.linked_thread_pairs, 1u);
  EXPECT_EQ(g.problems.thread_handoffs, 2u);
  ASSERT_EQ(g.handoffs.size(), 2u);
  const std::uint32_t autograd = first_call_of(g, kAutograd);
  ASSERT_NE(autograd, replay::kNoNode);
  EXPECT_TRUE(g.nodes[autograd].handoff);
  {  // Identity replay: exact.
    const replay::ReplayTimes id = replay::run_replay(g);
    EXPECT_EQ(id.start[autograd], 135 * us);
    EXPECT_EQ(replay::replay_steps(g, id)[0].replayed_ns, 200 * us);
  }
  const replay::EditResult r =
      replay::apply_what_if(t, g, replay::parse_what_if("remove-syncs:api=cudaStreamSynchronize"), {});
  ASSERT_EQ(r.selected, 1u);
  const replay::ReplayTimes times = replay::run_replay(g);
  // The sync ends at 20 (its start): the autograd thread's first launch moves from 135 to 30, its
  // kernels run right behind k1 (120-155), main returns at 75 and its device sync waits for k6:
  // 155 + 5. Step: 160 + the 15 us after it = 175 (without the hand-off: 200, k6 still at 175-180).
  EXPECT_EQ(times.start[autograd], 30 * us);
  const auto steps = replay::replay_steps(g, times);
  EXPECT_EQ(steps[0].replayed_ns, 175 * us);
  // The critical path follows the hand-off and sums to no more than the step.
  Ns sum = 0;
  for (const auto& c : replay::critical_path(t, g, times, 0)) sum += c.duration_ns;
  EXPECT_GT(sum, 0);
  EXPECT_LE(sum, steps[0].replayed_ns);
}

// A loader thread whose call overlaps the main thread's sync, and one whose calls are short
// against the main thread's gaps around them: neither takes turns with main (nor with the
// autograd thread), so none is linked and the edit leaves its calls where they were.
TEST(ReplayThreads, IndependentThreadIsNotLinked) {
  for (const auto& loader :
       {std::vector<std::pair<Ns, Ns>>{{50, 60}, {300, 302}}, std::vector<std::pair<Ns, Ns>>{{128, 130}, {300, 302}}}) {
    const Trace t = backward_trace(loader);
    replay::ReplayGraph g = replay::build_replay_graph(t);
    EXPECT_EQ(g.problems.linked_thread_pairs, 1u);  // main and autograd only
    EXPECT_EQ(g.problems.thread_handoffs, 2u);
    const std::uint32_t l = first_call_of(g, kLoader);
    ASSERT_NE(l, replay::kNoNode);
    EXPECT_FALSE(g.nodes[l].handoff);
    (void)replay::apply_what_if(t, g, replay::parse_what_if("remove-syncs:api=cudaStreamSynchronize"), {});
    const replay::ReplayTimes times = replay::run_replay(g);
    EXPECT_EQ(times.start[l], loader[0].first * us);
    EXPECT_EQ(times.start[first_call_of(g, kAutograd)], 30 * us);
  }
}

// Two threads alone, one call each at its own time: no run between the other's calls, nothing
// to take turns with.
TEST(ReplayThreads, NoInteriorRunNoLink) {
  Trace t;
  launch(t, kMain, 10, 20, 30, 1);
  launch(t, kAutograd, 40, 50, 60, 2);
  t.finalize();
  const replay::ReplayGraph g = replay::build_replay_graph(t);
  EXPECT_EQ(g.problems.linked_thread_pairs, 0u);
  EXPECT_TRUE(g.handoffs.empty());
}

}  // namespace
}  // namespace syncscope
