// Whole-job replay (replay_job.hpp): each rank's graph built from its trace (one trace held at a
// time), the collectives matched, identity replay of the job, then each edit on one rank with
// every rank replayed again.
#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "syncscope/analysis/ranks.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/core/text.hpp"
#include "syncscope/replay/replay_job.hpp"

namespace syncscope::replay {
namespace {

struct RankGraph {
  std::int64_t rank = -1;
  std::size_t input = 0;  // index into the inputs
  std::optional<std::int64_t> world_size;
  ReplayGraph graph;
  ReplayOrder order;
  std::vector<JobComm> comms;
  std::uint64_t unreadable_ranks = 0;  // "Process Group Ranks" values not read
  std::optional<Trace> trace;          // kept for the rank an edit is applied to
};

template <class T>
T median_of_values(std::vector<T> v) {
  if (v.empty()) return T{};
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : static_cast<T>((v[n / 2 - 1] + v[n / 2]) / 2);
}

std::optional<std::int64_t> world_size_of(const TraceMetadata& meta) {
  auto it = meta.extra.find("distributedInfo");
  if (it == meta.extra.end()) return std::nullopt;
  const auto j = nlohmann::json::parse(it->second, nullptr, false);  // generous: unreadable is unknown
  if (!j.is_object() || !j.contains("world_size") || !j["world_size"].is_number_integer()) return std::nullopt;
  return j["world_size"].get<std::int64_t>();
}

RankGraph load_rank(const JobRankInput& in, std::size_t index, const JobReplayOptions& options) {
  RankGraph rg;
  rg.input = index;
  Trace trace = in.load();
  const auto rank = rank_from_metadata(trace.meta);
  SYNCSCOPE_INPUT_ERROR_IF(!rank && !in.rank,
                           fmt::format("{}: no rank: the trace has no distributedInfo.rank and its file name no "
                                       "'rank<N>' (name the files rank0.json, rank1.json, ...)",
                                       printable(in.source)));
  rg.rank = rank ? *rank : *in.rank;
  rg.world_size = world_size_of(trace.meta);
  ReplayOptions ro;
  ro.step_glob = options.step_glob;
  rg.graph = build_replay_graph(trace, ro);
  rg.comms = job_comms(trace, rg.graph, &rg.unreadable_ranks);
  rg.order = replay_order(rg.graph);
  if (options.what_if_rank && *options.what_if_rank == rg.rank && !options.what_if.empty()) rg.trace = std::move(trace);
  return rg;
}

// The error figures over steps with a measured time.
void error_figures(const std::vector<ReplayedStep>& steps, double& median, double& max, std::size_t& n) {
  std::vector<double> errs;
  for (const auto& s : steps)
    if (s.measured_ns > 0) errs.push_back(std::fabs(s.error()));
  n = errs.size();
  median = errs.empty() ? 0 : median_of_values(errs);
  max = errs.empty() ? 0 : *std::max_element(errs.begin(), errs.end());
}

// Two files of one rank are refused. Ranks that say they are of a job of another size than the
// most ranks say are of another job: named, and their collectives not matched (`excluded`).
void check_set(const std::vector<RankGraph>& rg, const std::vector<JobRankInput>& inputs, JobReplayReport& rep,
               std::vector<bool>& excluded) {
  for (std::size_t i = 1; i < rg.size(); ++i)
    SYNCSCOPE_INPUT_ERROR_IF(rg[i].rank == rg[i - 1].rank,
                             fmt::format("{} and {} are both rank {}: give one trace per rank",
                                         printable(inputs[rg[i - 1].input].source),
                                         printable(inputs[rg[i].input].source), rg[i].rank));
  excluded.assign(rg.size(), false);
  std::map<std::int64_t, std::size_t> worlds;
  for (const RankGraph& r : rg)
    if (r.world_size) ++worlds[*r.world_size];
  if (worlds.size() < 2) return;
  std::int64_t job = worlds.begin()->first;
  for (const auto& [w, n] : worlds)
    if (n > worlds[job]) job = w;
  for (std::size_t i = 0; i < rg.size(); ++i)
    if (rg[i].world_size && *rg[i].world_size != job) {
      excluded[i] = true;
      rep.warnings.push_back(
          fmt::format("rank {} ({}) is of a job of {} ranks, the others' of {}: not of this job, its "
                      "collectives not matched (replayed with its peers anchored)",
                      rg[i].rank, printable(inputs[rg[i].input].source), *rg[i].world_size, job));
    }
}

// A collective with a peer whose trace is not given is anchored: it ends no earlier than
// recorded. Its peers are its group's ranks where the trace lists them ("Process Group Ranks":
// a sub-group whose ranks are all given needs no anchor), else the job's world_size ranks.
void anchor_absent_peers(const std::vector<RankGraph>& rg, const std::vector<bool>& excluded, JobLinks& links,
                         JobReplayReport& rep) {
  std::size_t given = 0;
  std::vector<std::int64_t> given_ranks;
  for (std::size_t i = 0; i < rg.size(); ++i)
    if (!excluded[i]) {
      ++given;
      given_ranks.push_back(rg[i].rank);
      if (rg[i].world_size) rep.world_size = rg[i].world_size;
    }
  const bool world_short = rep.world_size && static_cast<std::int64_t>(given) < *rep.world_size;
  std::uint64_t anchored = 0, by_group = 0;
  for (JobCollective& c : links.collectives) {
    bool absent = world_short;
    if (!c.participants.empty()) {
      absent = std::any_of(c.participants.begin(), c.participants.end(), [&](std::int64_t p) {
        return !std::binary_search(given_ranks.begin(), given_ranks.end(), p);
      });
      by_group += absent != world_short ? 1 : 0;
    }
    if (!absent) continue;
    const auto [r, node] = c.members[c.last];
    c.anchored_end = rg[r].graph.nodes[node].rec_end - links.offset_ns[r];
    ++anchored;
  }
  if (anchored == 0) return;
  rep.peers_anchored = true;
  rep.warnings.push_back(fmt::format(
      "{} of the job's {} ranks given: {} of the {} matched collective(s) have peers not given, anchored, so each "
      "ends no earlier than recorded (an edit can delay it, not bring it forward){}",
      given, rep.world_size ? std::to_string(*rep.world_size) : std::string("?"), anchored, links.collectives.size(),
      by_group ? fmt::format("; {} decided by their group's Process Group Ranks", by_group) : std::string()));
}

// Why nothing matched, for the message.
std::string nothing_matched(const std::vector<RankGraph>& rg, const std::vector<bool>& excluded, const JobLinks& links,
                            const JobReplayReport& rep) {
  if (std::count(excluded.begin(), excluded.end(), true) > 0 && !rep.warnings.empty())
    return "the traces are of jobs of different sizes (distributedInfo.world_size): " + rep.warnings.back() +
           "; give one job's rank traces";
  std::size_t with_comm = 0;
  for (const RankGraph& r : rg) with_comm += r.comms.empty() ? 0 : 1;
  if (with_comm < 2)
    return fmt::format(
        "{} of the {} traces hold communication kernels (NCCL/RCCL): a job replay joins ranks through "
        "their collectives (replay one trace with predict --trace FILE)",
        with_comm, rg.size());
  if (!links.mismatches.empty()) return "their collectives disagree from the first one on: " + links.mismatches.front();
  if (links.groups > 0)
    return fmt::format(
        "{} process group(s) are on two or more ranks, but no one collective of them is (were the "
        "ranks profiled over different steps? compare their Seq numbers)",
        links.groups);
  return "no group of collectives is on two ranks";
}

void fill_ranks(const std::vector<RankGraph>& rg, const std::vector<JobRankInput>& inputs, const JobLinks& links,
                const std::vector<ReplayTimes>& times, JobReplayReport& rep) {
  std::vector<std::uint64_t> matched(rg.size(), 0), last(rg.size(), 0);
  for (const JobCollective& c : links.collectives) {
    for (const auto& [r, node] : c.members) ++matched[r];
    ++last[c.members[c.last].first];
  }
  std::vector<ReplayedStep> all;
  for (std::size_t r = 0; r < rg.size(); ++r) {
    JobRankReplay out;
    out.rank = rg[r].rank;
    out.source = inputs[rg[r].input].source;
    out.steps = replay_steps(rg[r].graph, times[r]);
    out.single_steps = replay_steps(rg[r].graph, run_replay(rg[r].graph, rg[r].order));
    out.clock_offset_ns = links.offset_ns[r];
    out.collectives = matched[r];
    out.unmatched = rg[r].comms.size() - matched[r];
    out.last_arrivals = last[r];
    out.warnings = rg[r].graph.problems.describe(rg[r].graph.step_glob);
    error_figures(out.steps, out.median_abs_error, out.max_abs_error, out.error_steps);
    all.insert(all.end(), out.steps.begin(), out.steps.end());
    rep.ranks.push_back(std::move(out));
  }
  error_figures(all, rep.median_abs_error, rep.max_abs_error, rep.error_steps);
  std::uint64_t most = 0;
  for (std::size_t r = 0; r < rg.size(); ++r)
    if (last[r] > most) {
      most = last[r];
      rep.straggler = rg[r].rank;
    }
}

JobWhatIf one_edit(const std::string& text, std::size_t er, std::vector<RankGraph>& rg, const JobLinks& links,
                   const JobReplayReport& rep, const model::TracePredictOptions& predict) {
  JobWhatIf out;
  out.edit = text;
  out.rank = rg[er].rank;
  ReplayGraph edited = rg[er].graph;
  const EditResult res = apply_what_if(*rg[er].trace, edited, parse_what_if(text), predict);
  out.notes = res.notes;
  // An explicit edit that selects nothing is the user's mistake, as in a single-rank replay.
  SYNCSCOPE_INPUT_ERROR_IF(res.selected == 0, fmt::format("rank {}: {}", out.rank, res.nothing_selected));
  const ReplayOrder order = replay_order(edited);  // an edit may change edges (the MoE edits)
  std::vector<const ReplayGraph*> graphs;
  std::vector<const ReplayOrder*> orders;
  for (std::size_t r = 0; r < rg.size(); ++r) {
    graphs.push_back(r == er ? &edited : &rg[r].graph);
    orders.push_back(r == er ? &order : &rg[r].order);
  }
  const std::vector<ReplayTimes> times = run_job_replay(graphs, orders, links);
  for (std::size_t r = 0; r < rg.size(); ++r) {
    const auto steps = replay_steps(*graphs[r], times[r]);
    std::vector<Ns> replayed, saving;
    bool built = true;
    for (std::size_t s = 0; s < steps.size(); ++s) {
      replayed.push_back(steps[s].replayed_ns);
      built = built && steps[s].unbuilt == 0;
      saving.push_back(rep.ranks[r].steps[s].replayed_ns - steps[s].replayed_ns);
    }
    out.replayed_step_ns.push_back(median_of_values(replayed));
    out.saving_ns.push_back(built && !saving.empty() ? std::optional<Ns>(median_of_values(saving)) : std::nullopt);
  }
  return out;
}

}  // namespace

JobReplayReport replay_job(std::vector<JobRankInput> inputs, const JobReplayOptions& options, std::string source) {
  JobReplayReport rep;
  rep.source = std::move(source);
  rep.step_glob = options.step_glob;
  SYNCSCOPE_INPUT_ERROR_IF(inputs.empty(), rep.source + ": no rank trace to replay");
  SYNCSCOPE_INPUT_ERROR_IF(inputs.size() > kMaxJobReplayRanks,
                           fmt::format("{}: {} rank traces, more than the {} a job replay holds at once (every rank's "
                                       "graph is in memory): give the ranks to look at, their peers are anchored",
                                       rep.source, inputs.size(), kMaxJobReplayRanks));
  std::vector<RankGraph> rg;
  for (std::size_t i = 0; i < inputs.size(); ++i) rg.push_back(load_rank(inputs[i], i, options));
  std::sort(rg.begin(), rg.end(), [](const RankGraph& a, const RankGraph& b) { return a.rank < b.rank; });
  std::vector<bool> excluded;
  check_set(rg, inputs, rep, excluded);
  std::vector<std::vector<JobComm>> comms;
  std::vector<std::int64_t> ranks;
  for (std::size_t i = 0; i < rg.size(); ++i) {
    comms.push_back(excluded[i] ? std::vector<JobComm>{} : rg[i].comms);
    ranks.push_back(rg[i].rank);
  }
  JobLinks links = match_collectives(comms, ranks);
  anchor_absent_peers(rg, excluded, links, rep);
  SYNCSCOPE_INPUT_ERROR_IF(rg.size() >= 2 && links.collectives.empty(),
                           fmt::format("{}: no collective matched across the {} rank traces: {}", rep.source, rg.size(),
                                       nothing_matched(rg, excluded, links, rep)));
  if (rg.size() == 1)
    rep.warnings.push_back(
        fmt::format("one rank's trace: its collectives' peers are anchored at their recorded ends "
                    "(give every rank's trace to replay them)"));
  rep.collectives = links.collectives.size();
  rep.collective_groups = links.groups;
  for (const MatchRule rule : links.rule)
    ++(rule == MatchRule::Seq          ? rep.matched_by_seq
       : rule == MatchRule::GroupOrder ? rep.matched_by_group_order
                                       : rep.matched_by_stream_order);
  for (const RankGraph& r : rg) rep.unreadable_group_ranks += r.unreadable_ranks;
  if (rep.unreadable_group_ranks)
    rep.warnings.push_back(
        fmt::format("{} \"Process Group Ranks\" value(s) not read (expected \"[0, 1, ...]\"): "
                    "those collectives' participants are the ranks that ran them",
                    rep.unreadable_group_ranks));
  rep.mismatches = links.mismatches;
  rep.mismatches_total = links.mismatches_total;
  rep.nccl_checked = links.nccl_checked;
  std::vector<const ReplayGraph*> graphs;
  std::vector<const ReplayOrder*> orders;
  for (const RankGraph& r : rg) {
    graphs.push_back(&r.graph);
    orders.push_back(&r.order);
  }
  const std::vector<ReplayTimes> times = run_job_replay(graphs, orders, links, &rep.out_of_order);
  if (rep.out_of_order)
    rep.warnings.push_back(
        fmt::format("{} collective(s) timed before every peer reached them in the replay (the ranks' "
                    "orders disagree): their missing peers' recorded starts were used",
                    rep.out_of_order));
  fill_ranks(rg, inputs, links, times, rep);
  if (options.what_if.empty()) return rep;
  const std::int64_t target = options.what_if_rank ? *options.what_if_rank
                              : rep.straggler >= 0 ? rep.straggler
                                                   : rg.front().rank;
  auto it = std::find_if(rg.begin(), rg.end(), [&](const RankGraph& r) { return r.rank == target; });
  SYNCSCOPE_INPUT_ERROR_IF(it == rg.end(),
                           fmt::format("{}: --what-if-rank {}: no trace of that rank (the ranks given: {} "
                                       "to {})",
                                       rep.source, target, rg.front().rank, rg.back().rank));
  if (!it->trace) it->trace = inputs[it->input].load();  // the straggler, known only now
  for (const std::string& text : options.what_if)
    rep.what_if.push_back(one_edit(text, static_cast<std::size_t>(it - rg.begin()), rg, links, rep, options.predict));
  return rep;
}

}  // namespace syncscope::replay
