// What-if replay against simulated runs: the simulator runs a baseline and its
// fixed variant; the replay of the baseline's trace with the edit predicts the fixed one.
// This is a consistency check of the replay against our own simulator, not accuracy on a
// GPU: both share the same notion of host calls, streams and syncs.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "../sim/item_loop_program.hpp"
#include "syncscope/model/gpu_profile.hpp"
#include "syncscope/replay/replay.hpp"
#include "syncscope/replay/replay_diff.hpp"
#include "syncscope/sim/simulator.hpp"

namespace syncscope {
namespace {

namespace m = model;
using simtest::Program;

// tests/device/item_loop.py's loop (8 layers, .item() each) ending in a device sync, as the
// measured trace's steps do; `with_sync` false is the loop whose .item() no longer waits:
// the copy is still issued (its host call stays), the stream sync is gone. That is what
// remove-syncs models: the wait goes, the host's own op time stays.
Program loop(bool with_sync) {
  Program p = simtest::item_loop_program(8);
  if (!with_sync) {
    std::vector<program::Op> ops;
    for (const auto& op : p.ops)
      if (op.kind != program::OpKind::StreamSync) ops.push_back(op);
    p.ops = ops;
  }
  p.ops.push_back(simtest::simple(program::OpKind::DeviceSync));
  return p;
}

Trace run(const Program& p) {
  sim::SimOptions o;
  o.steps = 4;
  return sim::simulate(p, model::load_gpu_profile("H200"), o);
}

TEST(ReplaySim, IdentityOnSimulatedTraces) {
  for (bool sync : {true, false}) {
    const Trace t = run(loop(sync));
    const replay::ReplayGraph g = replay::build_replay_graph(t, {});
    ASSERT_EQ(g.steps.size(), 4u);
    for (const auto& s : replay::replay_steps(g, replay::run_replay(g)))
      EXPECT_LE(std::fabs(s.error()), 0.01) << s.name;
  }
}

// diff --what-if: the replayed AFTER from BEFORE agrees with the simulated AFTER within 3%.
TEST(ReplaySim, DiffWhatIfAgreesWithTheSimulatedFix) {
  const Trace before = run(loop(true)), after = run(loop(false));
  m::TracePredictOptions o;
  const replay::DiffReport d =
      replay::diff_traces(before, after, {"remove-syncs:api=cudaStreamSynchronize"}, o, "before", "after");
  ASSERT_TRUE(d.what_if_error.has_value());
  std::printf("before %.1f us, after %.1f us, replayed after %.1f us, error %+.2f%%\n", d.before.step_ns / 1e3,
              d.after.step_ns / 1e3, *d.predicted_after_step_ns / 1e3, *d.what_if_error * 100);
  EXPECT_LT(d.after.step_ns, d.before.step_ns);  // the fix saves something to predict
  EXPECT_LE(std::fabs(*d.what_if_error), 0.03);
  EXPECT_NEAR(d.before.syncs, 9, 1e-9);  // 8 .item() + the device sync
  EXPECT_NEAR(d.after.syncs, 1, 1e-9);
  EXPECT_NE(replay::diff_to_json(d).find("\"predicted_after_step_ns\""), std::string::npos);
}

}  // namespace
}  // namespace syncscope
