// Whole-job replay (replay_job.hpp) on hand-built rank traces whose replay is worked out by hand
// (times in us): a collective ends when its last participant has started it plus that rank's
// transfer, so removing the straggler's sync moves every rank's step; clocks offset by seconds;
// ranks that disagree (another collective, one missing, another job's size, an order that would
// deadlock) named, never hanging, exit 2 only when nothing matches.
//
// These traces are built by the rule the replay assumes: they test the mechanism (consistency),
// not its accuracy on real jobs (docs/replay.md says what it rests on).
#include <gtest/gtest.h>

#include <string>

#include "syncscope/core/error.hpp"
#include "syncscope/replay/replay_job.hpp"
#include "test_units.hpp"

namespace syncscope {
namespace {

using test::us;

struct RankBuilder {
  Trace t;
  Ns shift = 0;  // added to every time: another clock
  std::uint64_t corr = 1;

  void call(const char* name, Ns a, Ns b, std::uint64_t c = 0) {
    ApiCall x;
    x.name = t.intern(name);
    x.pid = 1;
    x.tid = 1;
    x.start = a * us + shift;
    x.end = b * us + shift;
    x.correlation = c;
    x.device = 0;
    t.api_calls.push_back(x);
  }
  void launch(const char* kname, std::int64_t stream, Ns a, Ns ks, Ns ke) {
    call("cudaLaunchKernel", a, a + 5, corr);
    Kernel k;
    k.name = t.intern(kname);
    k.device = 0;
    k.stream = stream;
    k.start = ks * us + shift;
    k.end = ke * us + shift;
    k.correlation = corr++;
    t.kernels.push_back(k);
  }
  void stream_sync(std::int64_t stream, Ns a, Ns b) {
    call("cudaStreamSynchronize", a, b, corr);
    SyncRecord s;
    s.type = SyncType::StreamSync;
    s.device = 0;
    s.stream = stream;
    s.start = a * us + shift;
    s.end = b * us + shift;
    s.correlation = corr++;
    t.syncs.push_back(s);
  }
  void range(RangeKind kind, const char* name, Ns a, Ns b) {
    Range r;
    r.kind = kind;
    r.name = t.intern(name);
    r.pid = 1;
    r.tid = 1;
    r.start = a * us + shift;
    r.end = b * us + shift;
    t.ranges.push_back(r);
  }
  Trace done(std::int64_t rank, std::int64_t world = 2) {
    t.meta.rank = rank;
    t.meta.extra["distributedInfo"] = fmt_world(rank, world);
    t.finalize();
    return std::move(t);
  }
  static std::string fmt_world(std::int64_t rank, std::int64_t world) {
    return "{\"backend\": \"nccl\", \"rank\": " + std::to_string(rank) + ", \"world_size\": " + std::to_string(world) +
           "}";
  }
};

constexpr const char* kAllReduce = "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)";

// Rank 0 reaches the all-reduce at 120 and waits in it until 495; rank 1 first waits in an
// .item() for a 380 us kernel (20-410), reaches the all-reduce at 425 and its 70 us transfer ends
// it at 495 on both. Each then syncs on the all-reduce (10 us round trip) and launches one more
// kernel; both steps are 0-545.
Trace rank0(Ns shift = 0, const char* collective = kAllReduce, std::int64_t world = 2) {
  RankBuilder b;
  b.shift = shift;
  b.range(RangeKind::UserAnnotation, "ProfilerStep#0", 0, 545);
  b.launch("kA", 7, 10, 20, 100);
  b.launch(collective, 9, 110, 120, 495);
  b.stream_sync(9, 118, 505);
  b.launch("k2", 7, 510, 520, 530);
  return b.done(0, world);
}

Trace rank1(Ns shift = 0, std::int64_t rank = 1, std::int64_t world = 2) {
  RankBuilder b;
  b.shift = shift;
  b.range(RangeKind::UserAnnotation, "ProfilerStep#0", 0, 545);
  b.launch("kLog", 7, 10, 20, 400);
  b.range(RangeKind::CpuOp, "aten::item", 19, 411);
  b.stream_sync(7, 20, 410);
  b.launch(kAllReduce, 9, 415, 425, 495);
  b.stream_sync(9, 425, 505);
  b.launch("k2", 7, 510, 520, 530);
  return b.done(rank, world);
}

replay::JobRankInput input(std::string name, std::function<Trace()> load) {
  replay::JobRankInput in;
  in.source = std::move(name);
  in.load = std::move(load);
  return in;
}

std::vector<replay::JobRankInput> two_ranks(Ns shift1 = 0) {
  return {input("rank0.json", [] { return rank0(); }), input("rank1.json", [shift1] { return rank1(shift1); })};
}

TEST(ReplayJob, CollectiveNamesComeFromTheKernelName) {
  EXPECT_EQ(replay::collective_of_kernel("ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)"), "AllReduce");
  EXPECT_EQ(replay::collective_of_kernel("ncclDevKernel_AllGather_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"),
            "AllGather");
  EXPECT_EQ(replay::collective_of_kernel("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclWorkElem)"), "SendRecv");
  EXPECT_EQ(replay::collective_of_kernel("my_comm_kernel(int)"), "my_comm_kernel");
}

// Where the trace names a kernel's process group (PyTorch >= 2.2), that is the group, whatever
// stream it ran on; else the stream, numbered by first use.
TEST(ReplayJob, GroupsComeFromTheProcessGroupNameWhereTheTraceHasIt) {
  RankBuilder b;
  b.launch(kAllReduce, 9, 10, 20, 30);
  b.launch(kAllReduce, 11, 40, 50, 60);
  b.launch(kAllReduce, 13, 70, 80, 90);
  Trace t = b.done(0);
  t.kernels[0].process_group = t.kernels[1].process_group = t.intern("0");
  const replay::ReplayGraph g = replay::build_replay_graph(t);
  const auto comms = replay::job_comms(t, g);
  ASSERT_EQ(comms.size(), 3u);
  EXPECT_EQ(comms[0].group, "pg 0");
  EXPECT_EQ(comms[1].group, "pg 0");
  EXPECT_EQ(comms[2].group, "stream#0");  // the first stream without a named group
  EXPECT_EQ(comms[2].collective, "AllReduce");
}

TEST(ReplayJob, IdentityReplayOfTheJobIsExactByHand) {
  const replay::JobReplayReport rep = replay::replay_job(two_ranks(), {}, "job");
  ASSERT_EQ(rep.ranks.size(), 2u);
  EXPECT_EQ(rep.collectives, 1u);
  EXPECT_TRUE(rep.mismatches.empty());
  EXPECT_EQ(rep.straggler, 1);  // rank 1 started the all-reduce last
  EXPECT_EQ(rep.ranks[1].last_arrivals, 1u);
  for (const auto& r : rep.ranks) {
    ASSERT_EQ(r.steps.size(), 1u);
    EXPECT_EQ(r.steps[0].measured_ns, 545 * us);
    EXPECT_EQ(r.steps[0].replayed_ns, 545 * us) << "rank " << r.rank;
    EXPECT_EQ(r.clock_offset_ns, 0);
  }
  EXPECT_TRUE(rep.within_goal());
  EXPECT_EQ(rep.error_steps, 2u);
}

// Without its .item(), rank 1 launches the all-reduce at 25 and starts it at 35; rank 0 is there
// at 120, so it ends at 120 + 70 = 190 instead of 495: both ranks' steps are 305 us shorter. On
// its own (peers anchored at their recorded ends) rank 1 could not have claimed that.
TEST(ReplayJob, RemovingTheStragglersSyncMovesEveryRank) {
  replay::JobReplayOptions o;
  o.what_if = {"remove-syncs:cause=aten::item"};
  const replay::JobReplayReport rep = replay::replay_job(two_ranks(), o, "job");
  ASSERT_EQ(rep.what_if.size(), 1u);
  const replay::JobWhatIf& w = rep.what_if[0];
  EXPECT_EQ(w.rank, 1);  // the straggler, by default
  ASSERT_EQ(w.saving_ns.size(), 2u);
  ASSERT_TRUE(w.saving_ns[0] && w.saving_ns[1]);
  EXPECT_EQ(*w.saving_ns[0], 305 * us);
  EXPECT_EQ(*w.saving_ns[1], 305 * us);
  EXPECT_EQ(w.replayed_step_ns[0], 240 * us);
  // The same edit on the rank alone: its all-reduce still ends at its recorded 495.
  const Trace t1 = rank1();
  replay::ReplayGraph g = replay::build_replay_graph(t1);
  const auto before = replay::replay_steps(g, replay::run_replay(g));
  (void)replay::apply_what_if(t1, g, replay::parse_what_if("remove-syncs:cause=aten::item"), {});
  const auto after = replay::replay_steps(g, replay::run_replay(g));
  EXPECT_EQ(before[0].replayed_ns - after[0].replayed_ns, 0);
  // An edit on rank 0, which waited anyway, moves nothing.
  o.what_if = {"remove-syncs:all"};
  o.what_if_rank = 0;
  const replay::JobReplayReport r0 = replay::replay_job(two_ranks(), o, "job");
  ASSERT_TRUE(r0.what_if[0].saving_ns[1]);
  EXPECT_EQ(*r0.what_if[0].saving_ns[1], 0);
}

TEST(ReplayJob, ClocksOffsetBySecondsAreAligned) {
  replay::JobReplayOptions o;
  o.what_if = {"remove-syncs:cause=aten::item"};
  const replay::JobReplayReport rep = replay::replay_job(two_ranks(7'000'000'000), o, "job");
  EXPECT_EQ(rep.ranks[1].clock_offset_ns, 7'000'000'000);
  for (const auto& r : rep.ranks) EXPECT_EQ(r.steps[0].replayed_ns, 545 * us);
  EXPECT_EQ(*rep.what_if[0].saving_ns[0], 305 * us);
}

// Two ranks of a job of three: the third's arrival is not known, so each collective ends no
// earlier than recorded, and removing rank 1's .item() saves nothing on rank 0.
TEST(ReplayJob, RanksNotGivenAreAnchoredPeers) {
  replay::JobReplayOptions o;
  o.what_if = {"remove-syncs:cause=aten::item"};
  const replay::JobReplayReport rep = replay::replay_job({input("rank0.json", [] { return rank0(0, kAllReduce, 3); }),
                                                          input("rank1.json", [] { return rank1(0, 1, 3); })},
                                                         o, "job");
  EXPECT_TRUE(rep.peers_anchored);
  ASSERT_TRUE(rep.world_size);
  EXPECT_EQ(*rep.world_size, 3);
  for (const auto& r : rep.ranks) EXPECT_EQ(r.steps[0].replayed_ns, 545 * us);
  EXPECT_EQ(*rep.what_if[0].saving_ns[0], 0);
  bool said = false;
  for (const auto& w : rep.warnings) said = said || w.find("2 of the job's 3 ranks given") != std::string::npos;
  EXPECT_TRUE(said);
}

TEST(ReplayJob, OneRankHasItsPeersAnchoredAndSaysSo) {
  const replay::JobReplayReport rep = replay::replay_job({input("rank1.json", [] { return rank1(); })}, {}, "one");
  EXPECT_EQ(rep.collectives, 0u);
  EXPECT_EQ(rep.ranks[0].unmatched, 1u);
  bool said = false;
  for (const auto& w : rep.warnings) said = said || w.find("peers are anchored") != std::string::npos;
  EXPECT_TRUE(said);
  EXPECT_EQ(rep.ranks[0].steps[0].replayed_ns, 545 * us);
}

std::string error_of(std::vector<replay::JobRankInput> in, const replay::JobReplayOptions& o = {}) {
  try {
    (void)replay::replay_job(std::move(in), o, "job");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(ReplayJob, RanksThatDisagreeAreNamed) {
  // Another collective at the same place on one of two ranks: nothing matches, exit 2 naming it.
  const std::string two = error_of({input("rank0.json", [] { return rank0(0, "ncclKernel_SendRecv_RING_SIMPLE(x)"); }),
                                    input("rank1.json", [] { return rank1(); })});
  EXPECT_NE(two.find("no collective matched"), std::string::npos) << two;
  EXPECT_NE(two.find("group stream#0, collective 0"), std::string::npos) << two;
  // Of three, the two that agree are matched and the third is named.
  const replay::JobReplayReport rep =
      replay::replay_job({input("rank0.json", [] { return rank0(0, "ncclKernel_SendRecv_RING_SIMPLE(x)", 3); }),
                          input("rank1.json", [] { return rank1(0, 1, 3); }),
                          input("rank2.json", [] { return rank1(0, 2, 3); })},
                         {}, "job");
  EXPECT_EQ(rep.collectives, 1u);
  ASSERT_EQ(rep.mismatches.size(), 1u);
  EXPECT_NE(rep.mismatches[0].find("rank 0, group stream#0, collective 0: SendRecv here, AllReduce"), std::string::npos)
      << rep.mismatches[0];
  EXPECT_EQ(rep.ranks[0].unmatched, 1u);
}

TEST(ReplayJob, ACollectiveMissingOnOneRankIsNamed) {
  auto longer = [] {
    RankBuilder b;
    b.range(RangeKind::UserAnnotation, "ProfilerStep#0", 0, 545);
    b.launch("kA", 7, 10, 20, 100);
    b.launch(kAllReduce, 9, 110, 120, 495);
    b.stream_sync(9, 118, 505);
    b.launch(kAllReduce, 9, 510, 520, 540);  // a second all-reduce rank 1 does not have
    return b.done(0);
  };
  const replay::JobReplayReport rep =
      replay::replay_job({input("rank0.json", longer), input("rank1.json", [] { return rank1(); })}, {}, "job");
  EXPECT_EQ(rep.collectives, 1u);
  ASSERT_EQ(rep.mismatches.size(), 1u);
  EXPECT_NE(rep.mismatches[0].find("rank 1, group stream#0: 1 collective(s)"), std::string::npos) << rep.mismatches[0];
  EXPECT_EQ(rep.ranks[0].unmatched, 1u);
}

TEST(ReplayJob, BadSetsAreRefusedNamingTheFiles) {
  const std::string dup = error_of({input("a.json", [] { return rank1(); }), input("b.json", [] { return rank1(); })});
  EXPECT_NE(dup.find("a.json and b.json are both rank 1"), std::string::npos) << dup;
  // Another job's size: named, not merged; with two ranks nothing is left to match.
  const std::string jobs =
      error_of({input("rank0.json", [] { return rank0(); }), input("rank1.json", [] { return rank1(0, 1, 8); })});
  EXPECT_NE(jobs.find("jobs of different sizes"), std::string::npos) << jobs;
  replay::JobReplayOptions o;
  o.what_if = {"remove-syncs:all"};
  o.what_if_rank = 5;
  const std::string rank = error_of(two_ranks(), o);
  EXPECT_NE(rank.find("--what-if-rank 5: no trace of that rank"), std::string::npos) << rank;
  std::vector<replay::JobRankInput> many(replay::kMaxJobReplayRanks + 1, input("r.json", [] { return rank1(); }));
  EXPECT_NE(error_of(std::move(many)).find("more than the"), std::string::npos);
}

// Collectives joined in an order no run could have had (each rank waits at a collective its
// peer reaches only after the other one): timed out of order and counted, never a hang.
TEST(ReplayJob, AnOrderThatWouldDeadlockIsTimedAndCounted) {
  auto build = [](bool swap) {
    RankBuilder b;
    b.range(RangeKind::UserAnnotation, "ProfilerStep#0", 0, 700);
    b.launch(swap ? "ncclKernel_AllGather_x(x)" : kAllReduce, 9, 10, 20, 200);
    b.stream_sync(9, 16, 210);
    b.launch(swap ? kAllReduce : "ncclKernel_AllGather_x(x)", 9, 220, 230, 400);
    b.stream_sync(9, 226, 410);
    return b.done(0);
  };
  const Trace a = build(false), c = build(true);
  const replay::ReplayGraph ga = replay::build_replay_graph(a), gc = replay::build_replay_graph(c);
  const auto ca = replay::job_comms(a, ga), cc = replay::job_comms(c, gc);
  ASSERT_EQ(ca.size(), 2u);
  ASSERT_EQ(cc.size(), 2u);
  replay::JobLinks links;
  links.offset_ns = {0, 0};
  // rank 0's first with rank 1's second, and the other way round.
  links.collectives.push_back({{{0, ca[0].node}, {1, cc[1].node}}, 100 * us, 0, std::nullopt, {}});
  links.collectives.push_back({{{0, ca[1].node}, {1, cc[0].node}}, 100 * us, 0, std::nullopt, {}});
  const replay::ReplayOrder oa = replay::replay_order(ga), oc = replay::replay_order(gc);
  std::uint64_t forced = 0;
  const auto times = replay::run_job_replay({&ga, &gc}, {&oa, &oc}, links, &forced);
  EXPECT_EQ(forced, 1u);
  ASSERT_EQ(times.size(), 2u);
  for (const auto& t : times)
    for (std::size_t i = 0; i < t.end.size(); ++i) EXPECT_GE(t.end[i], t.start[i]);
}

}  // namespace
}  // namespace syncscope
