// Whole-job replay's matching by Kineto's own identity (replay_job.hpp, rule "seq"): the
// record_param_comms args as a real trace writes them (tests/fixtures/ranks/hta_nccl, rank 0 of
// a 2-rank job), and hand-built ranks for what real data of ours does not show: a sub-group
// collective, a collective missing on one rank, Seq numbers that disagree, clocks seconds apart.
//
// The real trace has "Process Group Name"/"Ranks"/"Description" but no "Seq" (PyTorch before
// 2.4): the two-rank tests pair it with a peer DERIVED from it (the same trace, called rank 1,
// its clock moved), which tests the mechanism, not the replay's accuracy on a real job.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <string>
#include <unordered_map>

#include "syncscope/core/error.hpp"
#include "syncscope/io/trace_io.hpp"
#include "syncscope/replay/replay_job.hpp"
#include "test_paths.hpp"
#include "test_units.hpp"

namespace syncscope {
namespace {

using test::us;
constexpr const char* kReal = "ranks/hta_nccl/nccl_data_rank0of2.json.gz";

bool has_line(const std::vector<std::string>& lines, const std::string& part) {
  return std::any_of(lines.begin(), lines.end(),
                     [&](const std::string& l) { return l.find(part) != std::string::npos; });
}

TEST(ReplayJobSeq, GroupRanksAsPyTorchWritesThem) {
  auto r = replay::parse_group_ranks("[0, 1, 2, 3]", 4);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->first, (std::vector<std::int64_t>{0, 1, 2, 3}));
  EXPECT_FALSE(r->second);
  // Past 30 ranks PyTorch writes the first 29, "...", and the last.
  std::string text = "[";
  for (int i = 0; i < 29; ++i) text += std::to_string(i * 2) + ", ";
  text += "..., 254]";
  r = replay::parse_group_ranks(text, 128);  // 0, 2, ..., 254: evenly spaced, 128 of them
  ASSERT_TRUE(r);
  EXPECT_EQ(r->first.size(), 128u);
  EXPECT_EQ(r->first[100], 200);
  EXPECT_FALSE(r->second);
  r = replay::parse_group_ranks(text, -1);  // no group size: only the written ranks are known
  ASSERT_TRUE(r);
  EXPECT_EQ(r->first.size(), 30u);
  EXPECT_TRUE(r->second);
  EXPECT_FALSE(replay::parse_group_ranks("0, 1", 2));
  EXPECT_FALSE(replay::parse_group_ranks("[0, one]", 2));
  EXPECT_FALSE(replay::parse_group_ranks("[0, ..., 3, ..., 7]", 8));
  EXPECT_TRUE(replay::parse_group_ranks("[]", 0));
}

// The real trace: 27 record_param_comms CPU ops (21 collectives and 6 "wait"s) and the 21 NCCL
// kernels they launched, each with the args on it; one process group "0" of ranks [0, 1].
TEST(ReplayJobSeq, RealTraceCollectiveArgsAreRead) {
  const Trace t = read_trace(test::fixture(kReal));
  const auto on_kernel = std::count_if(t.collectives.begin(), t.collectives.end(),
                                       [](const CollectiveArgs& c) { return c.on == CollectiveArgs::On::Kernel; });
  EXPECT_EQ(on_kernel, 21);
  EXPECT_EQ(t.collectives.size(), 48u);
  const replay::ReplayGraph g = replay::build_replay_graph(t);
  std::uint64_t unreadable = 0;
  const auto comms = replay::job_comms(t, g, &unreadable);
  EXPECT_EQ(unreadable, 0u);
  ASSERT_EQ(comms.size(), 21u);
  for (const auto& c : comms) {
    EXPECT_EQ(c.group, "pg 0");
    EXPECT_EQ(c.group_ranks, (std::vector<std::int64_t>{0, 1}));
    EXPECT_FALSE(c.seq);  // no "Seq" in this PyTorch's args
  }
  // Each step broadcasts 53,120 floats, then 53 longs, then all-reduces.
  EXPECT_EQ(comms[0].dtype, "Float");
  EXPECT_EQ(comms[1].dtype, "Long");
  EXPECT_EQ(comms[1].in_nelems, 53);
  EXPECT_EQ(comms[0].collective, "broadcast");
  EXPECT_EQ(comms[0].in_nelems, 53120);
  EXPECT_EQ(comms[2].collective, "allreduce");
  EXPECT_EQ(comms[2].in_nelems, 2049000);
  // The kernel's own args win; without them the CPU op's are found by External id.
  Trace op_only = t;
  op_only.collectives.erase(std::remove_if(op_only.collectives.begin(), op_only.collectives.end(),
                                           [](const CollectiveArgs& c) { return c.on == CollectiveArgs::On::Kernel; }),
                            op_only.collectives.end());
  for (Kernel& k : op_only.kernels) k.process_group = kNoString;
  const auto from_op = replay::job_comms(op_only, replay::build_replay_graph(op_only));
  ASSERT_EQ(from_op.size(), 21u);
  EXPECT_EQ(from_op[2].group, "pg 0");
  EXPECT_EQ(from_op[2].collective, "allreduce");
  EXPECT_EQ(from_op[2].in_nelems, 2049000);
}

// Odd values are counted, not fatal: a "Seq" that is no integer, a "Process Group Ranks"
// array where PyTorch writes a string. What is read survives our writer and reader.
TEST(ReplayJobSeq, OddArgsAreCountedAndTheArgsSurviveAWriteAndRead) {
  const std::string json = R"J({"traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 1, "tid": 1, "ts": 10, "dur": 5,
     "args": {"External id": 7, "Seq": "x", "Process Group Name": "3", "Process Group Ranks": [0, 1],
              "Group size": 2, "Collective name": "allreduce", "dtype": "Float", "In msg nelems": 64}},
    {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)", "pid": 0, "tid": 9, "ts": 12,
     "dur": 4, "args": {"External id": 7, "device": 0, "stream": 9, "correlation": 11, "Seq": 42,
              "Process Group Name": "3", "Process Group Description": "tp", "Process Group Ranks": "[0, 1]",
              "Collective name": "allreduce", "Out msg nelems": 64}}]})J";
  const Trace t = parse_chrome_json(json);
  ASSERT_EQ(t.collectives.size(), 2u);
  std::vector<std::string> fields;
  for (const auto& w : t.meta.read_warnings) fields.push_back(w.field);
  EXPECT_TRUE(has_line(fields, "args.Seq"));
  EXPECT_TRUE(has_line(fields, "args.Process Group Ranks"));
  const auto& op = t.collectives[0].on == CollectiveArgs::On::CpuOp ? t.collectives[0] : t.collectives[1];
  const auto& kernel = t.collectives[0].on == CollectiveArgs::On::Kernel ? t.collectives[0] : t.collectives[1];
  EXPECT_EQ(op.seq, -1);
  EXPECT_EQ(op.group_ranks, kNoString);
  EXPECT_EQ(op.external_id, 7u);
  EXPECT_EQ(op.in_nelems, 64);
  EXPECT_EQ(kernel.seq, 42);
  EXPECT_EQ(kernel.correlation, 11u);
  EXPECT_EQ(t.str(kernel.group_desc), "tp");
  EXPECT_EQ(t.str(kernel.group_ranks), "[0, 1]");
  const Trace back = parse_chrome_json(chrome_json_string(t));
  ASSERT_EQ(back.collectives.size(), 2u);
  for (const auto& c : back.collectives) {
    EXPECT_EQ(back.str(c.process_group), "3");
    EXPECT_EQ(back.str(c.collective), "allreduce");
    if (c.on == CollectiveArgs::On::Kernel) {
      EXPECT_EQ(c.seq, 42);
      EXPECT_EQ(back.str(c.group_ranks), "[0, 1]");
      EXPECT_EQ(c.out_nelems, 64);
    } else {
      EXPECT_EQ(c.group_size, 2);
      EXPECT_EQ(back.str(c.dtype), "Float");
    }
  }
}

// The real rank 0 and a peer derived from it; `seq` numbers both ranks' collectives in order
// (as PyTorch >= 2.4 would have written them).
Trace derived(std::int64_t rank, Ns shift, bool seq) {
  Trace t = read_trace(test::fixture(kReal));
  t.meta.rank = rank;
  for (auto& k : t.kernels) k.start += shift, k.end += shift;
  for (auto& a : t.api_calls) a.start += shift, a.end += shift;
  for (auto& r : t.ranges) r.start += shift, r.end += shift;
  for (auto& x : t.memcpys) x.start += shift, x.end += shift;
  for (auto& x : t.memsets) x.start += shift, x.end += shift;
  for (auto& x : t.syncs) x.start += shift, x.end += shift;
  for (auto& x : t.cuda_events) x.timestamp += shift;
  if (seq) {
    std::vector<CollectiveArgs*> on_kernels;
    for (auto& c : t.collectives)
      if (c.on == CollectiveArgs::On::Kernel) on_kernels.push_back(&c);
    // Numbered in the order the kernels ran (one group: its Seq order).
    std::unordered_map<std::uint64_t, Ns> start_of;
    for (const auto& k : t.kernels) start_of[k.correlation] = k.start;
    std::sort(on_kernels.begin(), on_kernels.end(), [&](const CollectiveArgs* a, const CollectiveArgs* b) {
      return start_of[a->correlation] < start_of[b->correlation];
    });
    for (std::size_t i = 0; i < on_kernels.size(); ++i) on_kernels[i]->seq = static_cast<std::int64_t>(i) + 100;
  }
  return t;
}

replay::JobRankInput input(std::string name, std::function<Trace()> load) {
  replay::JobRankInput in;
  in.source = std::move(name);
  in.load = std::move(load);
  return in;
}

TEST(ReplayJobSeq, RealRankAndItsDerivedPeerMatchEveryCollective) {
  for (const bool seq : {false, true}) {
    const replay::JobReplayReport rep =
        replay::replay_job({input("rank0", [seq] { return derived(0, 0, seq); }),
                            input("rank1", [seq] { return derived(1, 5'000'000'000, seq); })},
                           {}, "derived");
    SCOPED_TRACE(seq ? "with Seq" : "without Seq");
    EXPECT_EQ(rep.collectives, 21u);
    EXPECT_EQ(rep.matched_by_seq, seq ? 21u : 0u);
    EXPECT_EQ(rep.matched_by_group_order, seq ? 0u : 21u);
    EXPECT_EQ(rep.matched_by_stream_order, 0u);
    EXPECT_EQ(rep.mismatches_total, 0u);
    EXPECT_FALSE(rep.peers_anchored);  // a job of 2, both given; group [0, 1]
    EXPECT_EQ(rep.ranks[1].clock_offset_ns, 5'000'000'000);
    for (const auto& r : rep.ranks) EXPECT_EQ(r.unmatched, 0u);
    const std::string json = replay::job_replay_to_json(rep);
    EXPECT_NE(json.find(seq ? "\"seq\": 21" : "\"group_order\": 21"), std::string::npos);
  }
}

// ---- hand-built ranks ----------------------------------------------------------------------

struct Coll {
  const char* group;  // "Process Group Name"
  std::int64_t seq;
  const char* ranks;  // "Process Group Ranks"
  const char* name;   // "Collective name"
  Ns start, end;      // the kernel, us
};

// Each collective launched 10 us before its kernel starts and waited for (stream sync) to its
// end + 5; one step around them all.
Trace seq_rank(std::int64_t rank, std::int64_t world, const std::vector<Coll>& colls, Ns shift = 0) {
  Trace t;
  std::uint64_t corr = 1;
  Ns last = 0;
  auto call = [&](const char* name, Ns a, Ns b, std::uint64_t c) {
    ApiCall x;
    x.name = t.intern(name);
    x.pid = x.tid = 1;
    x.start = a * us + shift;
    x.end = b * us + shift;
    x.correlation = c;
    x.device = 0;
    t.api_calls.push_back(x);
  };
  for (const Coll& c : colls) {
    call("cudaLaunchKernel", c.start - 10, c.start - 5, corr);
    Kernel k;
    k.name = t.intern("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)");
    k.device = 0;
    k.stream = 9;
    k.start = c.start * us + shift;
    k.end = c.end * us + shift;
    k.correlation = corr;
    k.process_group = t.intern(c.group);
    t.kernels.push_back(k);
    CollectiveArgs a;
    a.on = CollectiveArgs::On::Kernel;
    a.correlation = corr++;
    a.seq = c.seq;
    a.process_group = k.process_group;
    a.group_ranks = t.intern(c.ranks);
    a.collective = t.intern(c.name);
    t.collectives.push_back(a);
    call("cudaStreamSynchronize", c.start - 5, c.end + 5, corr);
    SyncRecord s;
    s.type = SyncType::StreamSync;
    s.device = 0;
    s.stream = 9;
    s.start = (c.start - 5) * us + shift;
    s.end = (c.end + 5) * us + shift;
    s.correlation = corr++;
    t.syncs.push_back(s);
    last = std::max(last, c.end + 5);
  }
  Range step;
  step.kind = RangeKind::UserAnnotation;
  step.name = t.intern("ProfilerStep#0");
  step.pid = step.tid = 1;
  step.start = shift;
  step.end = (last + 10) * us + shift;
  t.ranges.push_back(step);
  t.meta.rank = rank;
  t.meta.extra["distributedInfo"] =
      "{\"rank\": " + std::to_string(rank) + ", \"world_size\": " + std::to_string(world) + "}";
  t.finalize();
  return t;
}

std::vector<replay::JobRankInput> inputs(const std::vector<std::function<Trace()>>& loads) {
  std::vector<replay::JobRankInput> in;
  for (std::size_t r = 0; r < loads.size(); ++r) in.push_back(input("rank" + std::to_string(r), loads[r]));
  return in;
}

// Group "1" is ranks 0 and 2 of 3. Its collective is matched on those two only and, with rank 1
// absent, needs no anchor: every one of its participants is given.
TEST(ReplayJobSeq, ASubGroupCollectiveWaitsOnlyForItsRanks) {
  const Coll world0{"0", 0, "[0, 1, 2]", "allreduce", 20, 100};
  const Coll sub0{"1", 0, "[0, 2]", "allreduce", 120, 200};
  auto r0 = [=] { return seq_rank(0, 3, {world0, sub0}); };
  auto r1 = [=] { return seq_rank(1, 3, {world0}); };
  auto r2 = [=] { return seq_rank(2, 3, {world0, sub0}); };
  const replay::JobReplayReport all = replay::replay_job(inputs({r0, r1, r2}), {}, "job");
  EXPECT_EQ(all.collectives, 2u);
  EXPECT_EQ(all.matched_by_seq, 2u);
  EXPECT_EQ(all.mismatches_total, 0u) << (all.mismatches.empty() ? "" : all.mismatches[0]);
  EXPECT_FALSE(all.peers_anchored);
  EXPECT_EQ(all.ranks[1].collectives, 1u);
  for (const auto& r : all.ranks) EXPECT_EQ(r.unmatched, 0u);
  // Ranks 0 and 2 only: the world group's collective is anchored (rank 1's arrival is not
  // known), the sub-group's is not.
  const replay::JobReplayReport two = replay::replay_job({input("rank0", r0), input("rank2", r2)}, {}, "job");
  EXPECT_EQ(two.collectives, 2u);
  EXPECT_TRUE(two.peers_anchored);
  EXPECT_TRUE(has_line(two.warnings, "1 of the 2 matched collective(s) have peers not given")) << two.warnings[0];
  EXPECT_TRUE(has_line(two.warnings, "1 decided by their group's Process Group Ranks"));
  // A rank that runs a group's collective its Process Group Ranks do not list is named.
  auto r1_in_sub = [=] { return seq_rank(1, 3, {world0, sub0}); };
  const replay::JobReplayReport odd = replay::replay_job(inputs({r0, r1_in_sub, r2}), {}, "job");
  EXPECT_TRUE(has_line(odd.mismatches, "rank 1, group pg 1, seq 0: ran it, but its Process Group Ranks do not list"));
  EXPECT_EQ(odd.collectives, 2u);
}

TEST(ReplayJobSeq, ACollectiveMissingOnOneRankIsNamedWithGroupAndSeq) {
  auto r0 = [] {
    return seq_rank(0, 2,
                    {{"0", 7, "[0, 1]", "allreduce", 20, 100},
                     {"0", 8, "[0, 1]", "broadcast", 120, 150},
                     {"0", 9, "[0, 1]", "allreduce", 170, 250}});
  };
  auto r1 = [] {
    return seq_rank(1, 2, {{"0", 7, "[0, 1]", "allreduce", 20, 100}, {"0", 9, "[0, 1]", "allreduce", 170, 250}});
  };
  const replay::JobReplayReport rep = replay::replay_job(inputs({r0, r1}), {}, "job");
  EXPECT_EQ(rep.collectives, 2u);
  EXPECT_EQ(rep.matched_by_seq, 2u);
  ASSERT_EQ(rep.mismatches_total, 1u);
  EXPECT_NE(rep.mismatches[0].find("rank 1, group pg 0, seq 8: missing here (rank(s) 0 ran it)"), std::string::npos)
      << rep.mismatches[0];
  EXPECT_EQ(rep.ranks[0].unmatched, 1u);  // anchored
}

// Rank 1 numbers the same collectives one higher: its Seq 1 is a broadcast where rank 0's is an
// all-reduce, and so on. Each disagreement is named; nothing matches, so exit 2 naming the first.
TEST(ReplayJobSeq, SeqNumbersThatDisagreeAreNamedAndRefusedWhenNothingMatches) {
  auto r0 = [] {
    return seq_rank(0, 2,
                    {{"0", 0, "[0, 1]", "allreduce", 20, 100},
                     {"0", 1, "[0, 1]", "broadcast", 120, 150},
                     {"0", 2, "[0, 1]", "allreduce", 170, 250}});
  };
  auto r1 = [] {
    return seq_rank(1, 2,
                    {{"0", 1, "[0, 1]", "allreduce", 20, 100},
                     {"0", 2, "[0, 1]", "broadcast", 120, 150},
                     {"0", 3, "[0, 1]", "allreduce", 170, 250}});
  };
  std::string error;
  try {
    (void)replay::replay_job(inputs({r0, r1}), {}, "job");
  } catch (const InputError& e) {
    error = e.what();
  }
  EXPECT_NE(error.find("no collective matched"), std::string::npos) << error;
  EXPECT_NE(error.find("rank 1, group pg 0, seq 1: allreduce here, broadcast on the other ranks"), std::string::npos)
      << error;
  // Windows that do not meet (profiled over other steps): said so, with what to compare.
  auto late = [] { return seq_rank(1, 2, {{"0", 40, "[0, 1]", "allreduce", 20, 100}}); };
  try {
    (void)replay::replay_job(inputs({r0, late}), {}, "job");
    error.clear();
  } catch (const InputError& e) {
    error = e.what();
  }
  EXPECT_NE(error.find("compare their Seq numbers"), std::string::npos) << error;
}

TEST(ReplayJobSeq, ClocksSecondsApartAreAlignedOnSeqMatches) {
  const std::vector<Coll> colls{{"0", 3, "[0, 1]", "allreduce", 20, 100}, {"0", 4, "[0, 1]", "allreduce", 130, 180}};
  const replay::JobReplayReport rep = replay::replay_job(inputs({[=] { return seq_rank(0, 2, colls); },
                                                                 [=] { return seq_rank(1, 2, colls, 3'000'000'000); }}),
                                                         {}, "job");
  EXPECT_EQ(rep.matched_by_seq, 2u);
  EXPECT_EQ(rep.ranks[1].clock_offset_ns, 3'000'000'000);
  for (const auto& r : rep.ranks) EXPECT_EQ(r.steps[0].replayed_ns, r.steps[0].measured_ns) << "rank " << r.rank;
}

}  // namespace
}  // namespace syncscope
