// Whole-job replay, its matching (replay_job.hpp): each rank's communication kernels by group
// and order, the collectives the ranks share, and each rank's clock offset.
#include <algorithm>
#include <map>
#include <unordered_map>

#include <fmt/format.h>

#include "graph_internal.hpp"
#include "syncscope/core/text.hpp"
#include "syncscope/model/replay_job.hpp"

namespace syncscope::model {

std::string collective_of_kernel(std::string_view name) {
  name = name.substr(0, name.find('('));
  // NCCL names its kernels ncclKernel_<Collective>_<Algorithm>_<Protocol>_<Op>_<Type> (NCCL 2.x
  // before 2.19) or ncclDevKernel_<Collective>_<Op>_<Type>_<Algorithm>_<Protocol> (2.19 on);
  // RCCL keeps NCCL's names.
  for (std::string_view prefix : {"ncclKernel_", "ncclDevKernel_", "rcclKernel_", "rcclDevKernel_"})
    if (name.substr(0, prefix.size()) == prefix) {
      std::string_view rest = name.substr(prefix.size());
      return std::string(rest.substr(0, rest.find('_')));
    }
  return std::string(name);
}

std::vector<JobComm> job_comms(const Trace& trace, const ReplayGraph& g) {
  std::vector<JobComm> out;
  std::vector<std::uint32_t> nodes;
  for (std::uint32_t i = 0; i < g.nodes.size(); ++i)
    if (g.nodes[i].comm && g.nodes[i].kind == ReplayNode::Kind::Kernel) nodes.push_back(i);
  std::stable_sort(nodes.begin(), nodes.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return g.nodes[a].rec_start < g.nodes[b].rec_start; });
  // A process group's collectives run on one stream per device (ProcessGroupNCCL): the group is
  // the stream, numbered by first use so that ranks whose stream ids differ still agree.
  std::unordered_map<std::int32_t, std::size_t> group_of_lane;
  for (std::uint32_t i : nodes) {
    const ReplayNode& n = g.nodes[i];
    const Kernel& k = trace.kernels[n.record];
    std::string group;
    if (k.process_group != kNoString) {
      group = "pg " + std::string(trace.str(k.process_group));  // the trace names it (PyTorch >= 2.2)
    } else {
      auto [it, fresh] = group_of_lane.try_emplace(n.lane, group_of_lane.size());
      (void)fresh;
      group = fmt::format("stream#{}", it->second);
    }
    out.push_back({i, std::move(group), collective_of_kernel(trace.str(k.name)), n.rec_start, n.rec_end});
  }
  return out;
}

namespace {

struct Member {
  std::uint32_t rank;  // index
  const JobComm* comm;
};

void add_mismatch(JobLinks& links, std::string line) {
  ++links.mismatches_total;
  if (links.mismatches.size() < kMaxMismatchLines) links.mismatches.push_back(std::move(line));
}

// The collective most of `members` run (ties: the lowest rank's).
std::string majority(const std::vector<Member>& members) {
  std::map<std::string, std::size_t> count;
  for (const Member& m : members) ++count[m.comm->collective];
  std::string best = members.front().comm->collective;
  for (const auto& [name, n] : count)
    if (n > count[best]) best = name;
  return best;
}

// One group's collectives matched by order, over the ranks that ran the group. A rank whose
// collective at some position disagrees with the others', or that has no collective there, is
// named and matched no further in this group: after a disagreement its order means nothing.
void match_group(const std::string& group,
                 const std::vector<std::pair<std::uint32_t, std::vector<const JobComm*>>>& by_rank,
                 const std::vector<std::int64_t>& ranks, std::vector<std::vector<Member>>& out,
                 std::vector<std::size_t>& seq, std::vector<std::string>& groups, JobLinks& links) {
  std::vector<bool> active(by_rank.size(), true);
  std::size_t longest = 0;
  for (const auto& [r, list] : by_rank) longest = std::max(longest, list.size());
  for (std::size_t k = 0; k < longest; ++k) {
    std::vector<Member> here;
    std::vector<std::size_t> where;
    for (std::size_t j = 0; j < by_rank.size(); ++j) {
      if (!active[j]) continue;
      const auto& [r, list] = by_rank[j];
      if (k < list.size()) {
        here.push_back({r, list[k]});
        where.push_back(j);
      } else {
        active[j] = false;
        add_mismatch(links, fmt::format("rank {}, group {}: {} collective(s), the other ranks have more (collective {} "
                                        "on, missing here: its peers' are anchored or matched without it)",
                                        ranks[r], group, list.size(), k));
      }
    }
    if (here.size() < 2) break;
    const std::string kind = majority(here);
    std::vector<Member> agree;
    for (std::size_t m = 0; m < here.size(); ++m) {
      if (here[m].comm->collective == kind) {
        agree.push_back(here[m]);
        continue;
      }
      active[where[m]] = false;
      add_mismatch(links,
                   fmt::format("rank {}, group {}, collective {}: {} here, {} on the other ranks (this rank's "
                               "collectives in the group from here on are not matched)",
                               ranks[here[m].rank], group, k, printable(here[m].comm->collective), printable(kind)));
    }
    if (agree.size() < 2) continue;
    out.push_back(std::move(agree));
    seq.push_back(k);
    groups.push_back(group);
  }
}

// Clock offsets from the shared collectives' recorded ends, from the first rank outwards, and
// how well each is known: 3 median absolute deviations of the end differences it rests on, added
// along the way from the first rank (1 us, the coarsest trace resolution, at least).
struct Clocks {
  std::vector<Ns> offset, noise;
};
Clocks clock_offsets(const std::vector<std::vector<Member>>& matched, std::size_t nranks) {
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<Ns>> diffs;  // (a, b): end_b - end_a
  for (const auto& members : matched)
    for (std::size_t m = 1; m < members.size(); ++m) {
      const Member &a = members.front(), &b = members[m];
      if (a.rank < b.rank) diffs[{a.rank, b.rank}].push_back(b.comm->rec_end - a.comm->rec_end);
      else diffs[{b.rank, a.rank}].push_back(a.comm->rec_end - b.comm->rec_end);
    }
  struct Edge {
    std::uint32_t other;
    Ns d, noise;  // other's clock - mine; 3 MAD
  };
  std::vector<std::vector<Edge>> adj(nranks);
  for (auto& [pair, v] : diffs) {
    const Ns d = graph_detail::median_of(v, 0);
    for (Ns& x : v) x = x > d ? x - d : d - x;
    const Ns noise = 3 * graph_detail::median_of(std::move(v), 0) + 1000;
    adj[pair.first].push_back({pair.second, d, noise});
    adj[pair.second].push_back({pair.first, -d, noise});
  }
  Clocks c{std::vector<Ns>(nranks, 0), std::vector<Ns>(nranks, 1000)};
  std::vector<bool> seen(nranks, false);
  for (std::size_t root = 0; root < nranks; ++root) {
    if (seen[root]) continue;
    seen[root] = true;
    std::vector<std::uint32_t> queue{static_cast<std::uint32_t>(root)};
    for (std::size_t h = 0; h < queue.size(); ++h)
      for (const Edge& e : adj[queue[h]])
        if (!seen[e.other]) {
          seen[e.other] = true;
          c.offset[e.other] = c.offset[queue[h]] + e.d;
          c.noise[e.other] = c.noise[queue[h]] + e.noise;
          queue.push_back(e.other);
        }
  }
  return c;
}

// The member that started last, on the first rank's clock.
std::size_t last_member(const std::vector<Member>& members, const std::vector<Ns>& offset) {
  std::size_t last = 0;
  for (std::size_t m = 1; m < members.size(); ++m)
    if (members[m].comm->rec_start - offset[members[m].rank] >
        members[last].comm->rec_start - offset[members[last].rank])
      last = m;
  return last;
}

// Participants of one collective overlap in time: each that started earlier was still running
// (waiting in the kernel for its peers) when the last one started. A member that had ended by
// then, beyond what the clocks are known to, ran another collective: it is not matched (ranks of
// two jobs, or orders that disagree without the names showing it).
void drop_non_overlapping(std::vector<std::vector<Member>>& matched, const Clocks& clocks,
                          const std::vector<std::int64_t>& ranks, const std::vector<std::size_t>& seq,
                          const std::vector<std::string>& group, JobLinks& links) {
  std::size_t kept = 0;
  for (std::size_t c = 0; c < matched.size(); ++c) {
    auto& members = matched[c];
    const Member last = members[last_member(members, clocks.offset)];
    const Ns last_start = last.comm->rec_start - clocks.offset[last.rank];
    std::vector<Member> ok;
    for (const Member& m : members) {
      const Ns end = m.comm->rec_end - clocks.offset[m.rank];
      if (end + clocks.noise[m.rank] + clocks.noise[last.rank] >= last_start) {
        ok.push_back(m);
        continue;
      }
      add_mismatch(links, fmt::format("rank {}, group {}, collective {}: ended {:.3f} ms before rank {} started it "
                                      "(clocks aligned): not the same collective, not matched",
                                      ranks[m.rank], group[c], seq[c], static_cast<double>(last_start - end) / 1e6,
                                      ranks[last.rank]));
    }
    if (ok.size() >= 2) matched[kept++] = std::move(ok);
  }
  matched.resize(kept);
}

}  // namespace

JobLinks match_collectives(const std::vector<std::vector<JobComm>>& comms, const std::vector<std::int64_t>& ranks) {
  JobLinks links;
  // group -> (rank index, its collectives in order)
  std::map<std::string, std::vector<std::pair<std::uint32_t, std::vector<const JobComm*>>>> groups;
  for (std::uint32_t r = 0; r < comms.size(); ++r) {
    std::map<std::string, std::vector<const JobComm*>> mine;
    for (const JobComm& c : comms[r]) mine[c.group].push_back(&c);
    for (auto& [name, list] : mine) groups[name].push_back({r, std::move(list)});
  }
  std::vector<std::vector<Member>> matched;
  std::vector<std::size_t> seq;
  std::vector<std::string> group;
  for (const auto& [name, by_rank] : groups) {
    if (by_rank.size() < 2) continue;
    ++links.groups;
    match_group(name, by_rank, ranks, matched, seq, group, links);
  }
  // The clocks from every match, the matches that cannot be one collective dropped, and the
  // clocks again from what is left.
  drop_non_overlapping(matched, clock_offsets(matched, comms.size()), ranks, seq, group, links);
  links.offset_ns = clock_offsets(matched, comms.size()).offset;
  for (const auto& members : matched) {
    JobCollective c;
    for (const Member& m : members) c.members.push_back({m.rank, m.comm->node});
    c.last = static_cast<std::uint32_t>(last_member(members, links.offset_ns));
    c.transfer_ns = members[c.last].comm->rec_end - members[c.last].comm->rec_start;
    links.collectives.push_back(std::move(c));
  }
  return links;
}

}  // namespace syncscope::model
