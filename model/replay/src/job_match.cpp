// Whole-job replay, its matching (replay_job.hpp): each rank's communication kernels by group
// and order, the collectives the ranks share, and each rank's clock offset.
#include <algorithm>
#include <charconv>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

#include <fmt/format.h>

#include "graph_internal.hpp"
#include "syncscope/core/text.hpp"
#include "syncscope/replay/replay_job.hpp"

namespace syncscope::replay {

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

std::optional<std::pair<std::vector<std::int64_t>, bool>> parse_group_ranks(std::string_view text,
                                                                            std::int32_t group_size) {
  // PyTorch's ParamCommsUtils writes fmt::format("[{}]", fmt::join(ranks, ", ")) and, past
  // kTruncatLength (30) ranks, the first 29, ", ...", and the last (torch/csrc/profiler/util.cpp).
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  if (text.size() < 2 || text.front() != '[' || text.back() != ']') return std::nullopt;
  text = text.substr(1, text.size() - 2);
  std::vector<std::int64_t> ranks;
  bool ellipsis = false;
  std::size_t after_ellipsis = 0;
  while (!text.empty()) {
    const std::size_t comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (item == "...") {
      if (ellipsis) return std::nullopt;
      ellipsis = true;
      continue;
    }
    std::int64_t r = -1;
    const auto [p, ec] = std::from_chars(item.data(), item.data() + item.size(), r);
    if (ec != std::errc{} || p != item.data() + item.size() || r < 0) return std::nullopt;
    ranks.push_back(r);
    after_ellipsis += ellipsis ? 1 : 0;
  }
  if (!ellipsis) return std::make_pair(std::move(ranks), false);
  if (after_ellipsis != 1 || ranks.size() < 3) return std::nullopt;
  // The middle is not written: when the head is evenly spaced and the last rank lies on the same
  // progression at group_size - 1 steps, it is the whole list (new_group over a range, a
  // strided group); else only the written ranks are known.
  const std::int64_t first = ranks.front(), stride = ranks[1] - ranks[0], last = ranks.back();
  bool even = stride > 0;
  for (std::size_t i = 1; i + 1 < ranks.size(); ++i) even = even && ranks[i] - ranks[i - 1] == stride;
  if (even && group_size > static_cast<std::int32_t>(ranks.size()) && last == first + stride * (group_size - 1)) {
    std::vector<std::int64_t> all;
    for (std::int32_t i = 0; i < group_size; ++i) all.push_back(first + stride * i);
    return std::make_pair(std::move(all), false);
  }
  return std::make_pair(std::move(ranks), true);
}

namespace {

// Kineto's collective args for each kernel: its own (newer PyTorch) or its record_param_comms
// CPU op's, joined by External id (the op's, its launch's and the kernel's are the same).
struct CommArgsIndex {
  std::unordered_map<std::uint64_t, const CollectiveArgs*> by_correlation, by_external;
  explicit CommArgsIndex(const Trace& t) {
    for (const CollectiveArgs& c : t.collectives) {
      if (c.on == CollectiveArgs::On::Kernel && c.correlation != 0) by_correlation.emplace(c.correlation, &c);
      else if (c.on == CollectiveArgs::On::CpuOp && c.external_id != 0) by_external.emplace(c.external_id, &c);
    }
  }
  // Fields the kernel lacks are taken from its CPU op.
  std::pair<const CollectiveArgs*, const CollectiveArgs*> of(const Kernel& k) const {
    const CollectiveArgs* own = nullptr;
    const CollectiveArgs* op = nullptr;
    if (auto it = by_correlation.find(k.correlation); k.correlation != 0 && it != by_correlation.end())
      own = it->second;
    if (auto it = by_external.find(k.external_id); k.external_id != 0 && it != by_external.end()) op = it->second;
    return {own, op};
  }
};

bool point_to_point(std::string_view collective) {
  // ProcessGroupNCCL numbers send/recv apart from collectives: their Seq need not agree across ranks.
  return collective == "send" || collective == "recv" || collective == "SendRecv" || collective == "Send" ||
         collective == "Recv";
}

void fill_from_args(const Trace& trace, const CollectiveArgs* own, const CollectiveArgs* op, JobComm& c,
                    std::uint64_t* unreadable_ranks) {
  auto pick = [&](StringId CollectiveArgs::*f) -> std::string_view {
    if (own && own->*f != kNoString) return trace.str(own->*f);
    if (op && op->*f != kNoString) return trace.str(op->*f);
    return {};
  };
  auto pick_n = [&](auto CollectiveArgs::*f) -> std::int64_t {
    if (own && own->*f >= 0) return own->*f;
    if (op && op->*f >= 0) return op->*f;
    return -1;
  };
  if (const auto pg = pick(&CollectiveArgs::process_group); !pg.empty()) c.group = "pg " + std::string(pg);
  if (const auto name = pick(&CollectiveArgs::collective); !name.empty()) c.collective = std::string(name);
  c.dtype = std::string(pick(&CollectiveArgs::dtype));
  c.in_nelems = pick_n(&CollectiveArgs::in_nelems);
  c.out_nelems = pick_n(&CollectiveArgs::out_nelems);
  const std::int64_t seq = pick_n(&CollectiveArgs::seq);
  if (seq >= 0 && c.group.rfind("pg ", 0) == 0 && !point_to_point(c.collective)) c.seq = seq;
  if (const auto text = pick(&CollectiveArgs::group_ranks); !text.empty()) {
    const auto size = static_cast<std::int32_t>(pick_n(&CollectiveArgs::group_size));
    if (auto r = parse_group_ranks(text, size)) {
      c.group_ranks = std::move(r->first);
      c.ranks_partial = r->second;
    } else if (unreadable_ranks) {
      ++*unreadable_ranks;
    }
  }
}

}  // namespace

std::vector<JobComm> job_comms(const Trace& trace, const ReplayGraph& g, std::uint64_t* unreadable_ranks) {
  std::vector<JobComm> out;
  std::vector<std::uint32_t> nodes;
  for (std::uint32_t i = 0; i < g.nodes.size(); ++i)
    if (g.nodes[i].comm && g.nodes[i].kind == ReplayNode::Kind::Kernel) nodes.push_back(i);
  std::stable_sort(nodes.begin(), nodes.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return g.nodes[a].rec_start < g.nodes[b].rec_start; });
  const CommArgsIndex index(trace);
  std::vector<std::uint32_t> kernel_of;
  for (std::uint32_t i : nodes) kernel_of.push_back(g.nodes[i].record);
  std::vector<std::string> nccl = nccl_calls(trace, kernel_of);
  // A process group's collectives run on one stream per device (ProcessGroupNCCL): without a
  // group name the group is the stream, numbered by first use so that ranks whose stream ids
  // differ still agree.
  std::unordered_map<std::int32_t, std::size_t> group_of_lane;
  for (std::size_t at = 0; at < nodes.size(); ++at) {
    const std::uint32_t i = nodes[at];
    const ReplayNode& n = g.nodes[i];
    const Kernel& k = trace.kernels[n.record];
    JobComm c;
    c.node = i;
    c.nccl = std::move(nccl[at]);
    c.collective = collective_of_kernel(trace.str(k.name));
    c.rec_start = n.rec_start;
    c.rec_end = n.rec_end;
    if (k.process_group != kNoString) c.group = "pg " + std::string(trace.str(k.process_group));
    const auto [own, op] = index.of(k);
    fill_from_args(trace, own, op, c, unreadable_ranks);
    if (c.group.empty()) {
      auto [it, fresh] = group_of_lane.try_emplace(n.lane, group_of_lane.size());
      (void)fresh;
      c.group = fmt::format("stream#{}", it->second);
    }
    out.push_back(std::move(c));
  }
  return out;
}

namespace {

struct Member {
  std::uint32_t rank;  // index
  const JobComm* comm;
};

// One collective matched across ranks, with what it was matched by.
struct Matched {
  std::vector<Member> members;
  std::int64_t seq = 0;  // Kineto's Seq (rule Seq), else the position in the group's order
  std::string group;
  MatchRule rule = MatchRule::StreamOrder;
  std::vector<std::int64_t> participants;  // the group's ranks, complete (empty: not known)
  bool nccl_checked = false;               // two or more members' NCCL calls known, the same operation
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

// The index into the group's ranks of each of `agree`, from `here` and `where`.
std::vector<std::size_t> where_of(const std::vector<Member>& agree, const std::vector<Member>& here,
                                  const std::vector<std::size_t>& where) {
  std::vector<std::size_t> out;
  for (const Member& a : agree)
    for (std::size_t m = 0; m < here.size(); ++m)
      if (here[m].rank == a.rank) out.push_back(where[m]);
  return out;
}

// The NCCL calls of one collective's members (JobComm::nccl), where known, must be one operation:
// a member whose calls are another than most members' is named, left out of `agree` and matched
// no further in its group (as a kernel that disagrees). True when two or more members' calls are
// known and agree.
bool check_nccl(const std::string& group, std::size_t k, std::vector<Member>& agree,
                const std::vector<std::size_t>& where, std::vector<bool>& active,
                const std::vector<std::int64_t>& ranks, JobLinks& links) {
  std::map<std::string, std::size_t> count;
  std::string best;  // the operation most members' calls are (ties: the lowest rank's)
  std::size_t top = 0;
  for (const Member& m : agree) {
    if (m.comm->nccl.empty()) continue;
    const std::string op = nccl_operation(m.comm->nccl);
    if (const std::size_t n = ++count[op]; n > top) {
      top = n;
      best = op;
    }
  }
  if (count.empty()) return false;
  std::string holders;  // the ranks whose calls are `best`
  for (const Member& m : agree)
    if (!m.comm->nccl.empty() && nccl_operation(m.comm->nccl) == best)
      holders += (holders.empty() ? "" : ", ") + std::to_string(ranks[m.rank]);
  std::vector<Member> kept;
  std::size_t known = 0;
  for (std::size_t m = 0; m < agree.size(); ++m) {
    const JobComm& c = *agree[m].comm;
    if (c.nccl.empty() || nccl_operation(c.nccl) == best) {
      known += c.nccl.empty() ? 0 : 1;
      kept.push_back(agree[m]);
      continue;
    }
    active[where[m]] = false;
    add_mismatch(links, fmt::format("rank {}, group {}, collective {}: NCCL calls {} here, {} on rank(s) {} (NCCL's "
                                    "NVTX ranges): not one operation, not matched (this rank's collectives in the "
                                    "group from here on are not matched)",
                                    ranks[agree[m].rank], group, k, printable(c.nccl), printable(best), holders));
  }
  agree = std::move(kept);
  return known >= 2;
}

// One group's collectives matched by order, over the ranks that ran the group. A rank whose
// collective at some position disagrees with the others', or that has no collective there, is
// named and matched no further in this group: after a disagreement its order means nothing.
void match_group(const std::string& group,
                 const std::vector<std::pair<std::uint32_t, std::vector<const JobComm*>>>& by_rank,
                 const std::vector<std::int64_t>& ranks, std::vector<Matched>& out, JobLinks& links) {
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
    const bool checked = check_nccl(group, k, agree, where_of(agree, here, where), active, ranks, links);
    if (agree.size() < 2) continue;
    const MatchRule rule = group.rfind("pg ", 0) == 0 ? MatchRule::GroupOrder : MatchRule::StreamOrder;
    out.push_back({std::move(agree), static_cast<std::int64_t>(k), group, rule, {}, checked});
  }
}

// The group's ranks as the first member with a complete list says (empty: none says).
std::vector<std::int64_t> participants_of(const std::vector<Member>& members) {
  for (const Member& m : members)
    if (!m.comm->group_ranks.empty() && !m.comm->ranks_partial) return m.comm->group_ranks;
  return {};
}

// What must agree across a collective's members under rule Seq: the collective, and where every
// rank moves the same amount (all-reduce, broadcast, all-gather, reduce-scatter; not all-to-all,
// whose splits differ per rank, nor gather/scatter, whose root differs) the dtype and sizes.
std::string signature(const JobComm& c) {
  const std::string& n = c.collective;
  const bool one_size = n.find("allreduce") != std::string::npos || n.find("broadcast") != std::string::npos ||
                        n.find("allgather") != std::string::npos || n.find("reduce_scatter") != std::string::npos;
  if (!one_size || (c.in_nelems < 0 && c.out_nelems < 0 && c.dtype.empty())) return n;
  return fmt::format("{} ({} {} -> {} elements)", n, c.dtype.empty() ? "?" : c.dtype, c.in_nelems, c.out_nelems);
}

std::string rank_list(const std::vector<Member>& members, const std::vector<std::int64_t>& ranks) {
  std::string s;
  for (const Member& m : members) s += (s.empty() ? "" : ", ") + std::to_string(ranks[m.rank]);
  return s;
}

using SeqKey = std::tuple<std::string, std::int64_t, std::uint32_t>;  // (group, Seq, occurrence on the rank)

// Rule Seq's checks of one key's members: a member outside the group's ranks, or running
// another collective than most do, is named and left out; a rank of the group that has
// collectives of the group around this Seq but not this one is named as missing it.
std::vector<Member> check_seq_members(
    const SeqKey& key, std::vector<Member> members, const std::vector<std::int64_t>& expect,
    const std::vector<std::int64_t>& ranks,
    const std::map<std::pair<std::uint32_t, std::string>, std::pair<std::int64_t, std::int64_t>>& window,
    JobLinks& links) {
  const auto& [group, seq, occurrence] = key;
  auto in_group = [&](std::int64_t rank) {
    return expect.empty() || std::find(expect.begin(), expect.end(), rank) != expect.end();
  };
  std::vector<Member> inside;
  for (const Member& m : members) {
    if (in_group(ranks[m.rank])) {
      inside.push_back(m);
      continue;
    }
    add_mismatch(links, fmt::format("rank {}, group {}, seq {}: ran it, but its Process Group Ranks do not list "
                                    "rank {}: not matched",
                                    ranks[m.rank], group, seq, ranks[m.rank]));
  }
  std::vector<Member> agree;
  if (!inside.empty()) {
    std::map<std::string, std::size_t> count;
    for (const Member& m : inside) ++count[signature(*m.comm)];
    std::string best = signature(*inside.front().comm);
    for (const auto& [sig, n] : count)
      if (n > count[best]) best = sig;
    for (const Member& m : inside) {
      const std::string sig = signature(*m.comm);
      if (sig == best) {
        agree.push_back(m);
        continue;
      }
      add_mismatch(links, fmt::format("rank {}, group {}, seq {}: {} here, {} on the other ranks: not matched",
                                      ranks[m.rank], group, seq, printable(sig), printable(best)));
    }
  }
  if (occurrence != 0) return agree;  // a missing collective is named once, at its first kernel
  for (std::uint32_t j = 0; j < ranks.size(); ++j) {
    if (!in_group(ranks[j])) continue;
    if (std::any_of(members.begin(), members.end(), [&](const Member& m) { return m.rank == j; })) continue;
    const auto w = window.find({j, group});
    // Outside the rank's traced window of this group (it started or stopped profiling at
    // another collective) nothing is missing: only between its first and last Seq.
    if (w == window.end() || seq < w->second.first || seq > w->second.second) continue;
    add_mismatch(links, fmt::format("rank {}, group {}, seq {}: missing here (rank(s) {} ran it): its peers are "
                                    "matched without it",
                                    ranks[j], group, seq, rank_list(members, ranks)));
  }
  return agree;
}

// Rule Seq: every rank's collectives with a Seq, keyed by (group, Seq); the groups seen on two
// ranks or more are added to `groups`.
void match_by_seq(const std::vector<std::vector<JobComm>>& comms, const std::vector<std::int64_t>& ranks,
                  std::vector<Matched>& out, std::map<std::string, std::set<std::uint32_t>>& groups, JobLinks& links) {
  std::map<SeqKey, std::vector<Member>> keyed;
  std::map<std::pair<std::uint32_t, std::string>, std::pair<std::int64_t, std::int64_t>> window;  // first, last Seq
  for (std::uint32_t r = 0; r < comms.size(); ++r) {
    std::map<std::pair<std::string, std::int64_t>, std::uint32_t> occurrences;  // coalesced: one Seq, several kernels
    for (const JobComm& c : comms[r]) {
      if (!c.seq) continue;
      const std::uint32_t k = occurrences[{c.group, *c.seq}]++;
      keyed[{c.group, *c.seq, k}].push_back({r, &c});
      groups[c.group].insert(r);
      auto [w, fresh] = window.try_emplace({r, c.group}, *c.seq, *c.seq);
      if (!fresh) w->second = {std::min(w->second.first, *c.seq), std::max(w->second.second, *c.seq)};
    }
  }
  for (auto& [key, members] : keyed) {
    const std::vector<std::int64_t> expect = participants_of(members);
    std::vector<Member> agree = check_seq_members(key, members, expect, ranks, window, links);
    if (agree.size() < 2) continue;
    out.push_back({std::move(agree), std::get<1>(key), std::get<0>(key), MatchRule::Seq, expect, false});
  }
}

// Clock offsets from the shared collectives' recorded ends, from the first rank outwards, and
// how well each is known: 3 median absolute deviations of the end differences it rests on, added
// along the way from the first rank (1 us, the coarsest trace resolution, at least).
struct Clocks {
  std::vector<Ns> offset, noise;
};
Clocks clock_offsets(const std::vector<Matched>& matched, std::size_t nranks) {
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<Ns>> diffs;  // (a, b): end_b - end_a
  for (const Matched& mc : matched)
    for (std::size_t m = 1; m < mc.members.size(); ++m) {
      const auto& members = mc.members;
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
void drop_non_overlapping(std::vector<Matched>& matched, const Clocks& clocks, const std::vector<std::int64_t>& ranks,
                          JobLinks& links) {
  std::size_t kept = 0;
  for (std::size_t c = 0; c < matched.size(); ++c) {
    auto& members = matched[c].members;
    const Member last = members[last_member(members, clocks.offset)];
    const Ns last_start = last.comm->rec_start - clocks.offset[last.rank];
    std::vector<Member> ok;
    for (const Member& m : members) {
      const Ns end = m.comm->rec_end - clocks.offset[m.rank];
      if (end + clocks.noise[m.rank] + clocks.noise[last.rank] >= last_start) {
        ok.push_back(m);
        continue;
      }
      add_mismatch(links, fmt::format("rank {}, group {}, {} {}: ended {:.3f} ms before rank {} started it "
                                      "(clocks aligned): not the same collective, not matched",
                                      ranks[m.rank], matched[c].group,
                                      matched[c].rule == MatchRule::Seq ? "seq" : "collective", matched[c].seq,
                                      static_cast<double>(last_start - end) / 1e6, ranks[last.rank]));
    }
    if (ok.size() < 2) continue;
    members = std::move(ok);
    if (kept != c) matched[kept] = std::move(matched[c]);
    ++kept;
  }
  matched.resize(kept);
}

}  // namespace

JobLinks match_collectives(const std::vector<std::vector<JobComm>>& comms, const std::vector<std::int64_t>& ranks) {
  JobLinks links;
  std::vector<Matched> matched;
  std::map<std::string, std::set<std::uint32_t>> on_ranks;  // group -> ranks with a collective of it
  match_by_seq(comms, ranks, matched, on_ranks, links);
  // The rest by group and order: group -> (rank index, its collectives without a Seq, in order)
  std::map<std::string, std::vector<std::pair<std::uint32_t, std::vector<const JobComm*>>>> groups;
  for (std::uint32_t r = 0; r < comms.size(); ++r) {
    std::map<std::string, std::vector<const JobComm*>> mine;
    for (const JobComm& c : comms[r])
      if (!c.seq) mine[c.group].push_back(&c);
    for (auto& [name, list] : mine) {
      on_ranks[name].insert(r);
      groups[name].push_back({r, std::move(list)});
    }
  }
  for (const auto& [name, by_rank] : groups) {
    if (by_rank.size() < 2) continue;
    const std::size_t before = matched.size();
    match_group(name, by_rank, ranks, matched, links);
    for (std::size_t c = before; c < matched.size(); ++c) matched[c].participants = participants_of(matched[c].members);
  }
  for (const auto& [name, rs] : on_ranks) links.groups += rs.size() >= 2 ? 1 : 0;
  // The clocks from every match, the matches that cannot be one collective dropped, and the
  // clocks again from what is left.
  drop_non_overlapping(matched, clock_offsets(matched, comms.size()), ranks, links);
  links.offset_ns = clock_offsets(matched, comms.size()).offset;
  for (Matched& mc : matched) {
    const auto& members = mc.members;
    JobCollective c;
    for (const Member& m : members) c.members.push_back({m.rank, m.comm->node});
    c.last = static_cast<std::uint32_t>(last_member(members, links.offset_ns));
    c.transfer_ns = members[c.last].comm->rec_end - members[c.last].comm->rec_start;
    c.participants = std::move(mc.participants);
    links.nccl_checked += mc.nccl_checked ? 1 : 0;
    links.collectives.push_back(std::move(c));
    links.rule.push_back(mc.rule);
  }
  return links;
}

}  // namespace syncscope::replay
