// The launch queue of a replay graph (replay.hpp): its depth fitted from the trace and each
// launch call's slot.
#include <algorithm>
#include <limits>
#include <map>
#include <unordered_map>
#include <utility>

#include "graph_internal.hpp"

namespace syncscope::replay::graph_detail {
namespace {

// Counts over positions 0..n-1 (a Fenwick tree): add one, count those below a position, find
// the k-th present; each O(log n).
class PositionCounts {
 public:
  explicit PositionCounts(std::size_t n) : tree_(n + 1, 0) {}
  void add(std::size_t pos) {
    for (std::size_t i = pos + 1; i < tree_.size(); i += i & (~i + 1)) ++tree_[i];
  }
  std::size_t count_below(std::size_t pos) const {  // present at positions < pos
    std::size_t c = 0;
    for (std::size_t i = pos; i > 0; i -= i & (~i + 1)) c += tree_[i];
    return c;
  }
  std::size_t kth(std::size_t k) const {  // position of the k-th present (1-based k)
    std::size_t pos = 0, step = 1;
    while (step * 2 < tree_.size()) step *= 2;
    for (; step > 0; step /= 2)
      if (pos + step < tree_.size() && tree_[pos + step] < k) {
        pos += step;
        k -= tree_[pos];
      }
    return pos;
  }

 private:
  std::vector<std::uint32_t> tree_;
};

}  // namespace

// The launch queue (issue 36: a launch call blocks for 100 us - 5 ms when the GPU's queue is full;
// taken as fixed host time, the wait is counted once on the host and again on the stream). Per
// device: at a launch call's return, the activities issued before it that had not started are
// pending. A call over kBlockedLaunchNs that returned with work pending waited for the queue: it
// returns when the activity that freed its slot (the last of them to start before its return)
// starts, after a launch's median own time. Any launch call returns only once no more than the
// queue's depth is pending: once the activity that started (depth + 1)-th from last among those
// issued before it, in the trace's order of starts, has started. The depth is fitted: the most
// ever left pending at a launch call's return, so that no recorded return breaks it. With no
// call blocked on a full queue the trace never filled it, its depth is unknown, nothing is
// modelled.
void model_launch_queue(ReplayGraph& g, std::size_t first_gpu,
                        const std::function<std::span<const std::uint32_t>(std::uint32_t)>& launched) {
  struct Device {
    std::vector<std::uint32_t> by_issue, by_start;        // its GPU activities with a traced launch
    std::vector<std::uint32_t> calls;                     // its launch calls, by start
    std::unordered_map<std::uint32_t, std::size_t> rank;  // activity -> its place in by_start
  };
  std::map<std::int32_t, Device> devices;
  auto device_of = [&](std::uint32_t gpu) { return g.lanes[static_cast<std::size_t>(g.nodes[gpu].lane)].first; };
  for (std::size_t i = first_gpu; i < g.nodes.size(); ++i)
    if (g.nodes[i].launch != kNoNode)
      devices[device_of(static_cast<std::uint32_t>(i))].by_issue.push_back(static_cast<std::uint32_t>(i));
  for (std::size_t c = 0; c < first_gpu; ++c) {
    const auto mine = launched(static_cast<std::uint32_t>(c));
    if (!g.nodes[c].sync && !mine.empty())
      devices[device_of(mine.front())].calls.push_back(static_cast<std::uint32_t>(c));
  }
  auto issue = [&](std::uint32_t x) { return std::pair{g.nodes[g.nodes[x].launch].rec_start, x}; };
  auto start = [&](std::uint32_t x) { return std::pair{g.nodes[x].rec_start, x}; };
  // Per call: how many activities of its device were issued before it, and (a call blocked on
  // the queue) the activity that freed its slot.
  struct Seen {
    std::uint32_t call, freed_by;
    std::size_t issued_before;
  };
  std::map<std::int32_t, std::vector<Seen>> seen;
  std::vector<Ns> unblocked;
  std::uint32_t depth = 0;
  for (auto& [id, d] : devices) {
    std::sort(d.by_issue.begin(), d.by_issue.end(), [&](auto a, auto b) { return issue(a) < issue(b); });
    d.by_start = d.by_issue;
    std::sort(d.by_start.begin(), d.by_start.end(), [&](auto a, auto b) { return start(a) < start(b); });
    std::sort(d.calls.begin(), d.calls.end(), [&](auto a, auto b) {
      return std::pair{g.nodes[a].rec_start, a} < std::pair{g.nodes[b].rec_start, b};
    });
    for (std::size_t k = 0; k < d.by_start.size(); ++k) d.rank[d.by_start[k]] = k;
    PositionCounts counts(d.by_start.size());  // the activities issued before the current call
    std::size_t inserted = 0;
    for (std::uint32_t c : d.calls) {
      const ReplayNode& n = g.nodes[c];
      while (inserted < d.by_issue.size() && issue(d.by_issue[inserted]).first < n.rec_start)
        counts.add(d.rank[d.by_issue[inserted++]]);
      const auto started_by_return =
          static_cast<std::size_t>(std::upper_bound(d.by_start.begin(), d.by_start.end(), n.rec_end,
                                                    [&](Ns t, std::uint32_t x) { return t < g.nodes[x].rec_start; }) -
                                   d.by_start.begin());
      const std::size_t started = counts.count_below(started_by_return);
      const auto pending = static_cast<std::uint32_t>(inserted - started);
      depth = std::max(depth, pending);
      Seen s{c, kNoNode, inserted};
      if (n.rec_end - n.rec_start <= kBlockedLaunchNs) {
        unblocked.push_back(n.rec_end - n.rec_start);
      } else if (pending > 0 && started > 0) {  // long with nothing pending: a module load, a lock
        s.freed_by = d.by_start[counts.kth(started)];
        ++g.blocked_launches;
      }
      seen[id].push_back(s);
    }
  }
  if (g.blocked_launches == 0) return;
  g.launch_queue_depth = depth;
  const Ns own = median_of(unblocked, 0);
  // The depth known: each call's bound, the counts rebuilt in the same order.
  for (auto& [id, d] : devices) {
    PositionCounts counts(d.by_start.size());
    std::size_t inserted = 0;
    for (const Seen& s : seen[id]) {
      ReplayNode& n = g.nodes[s.call];
      while (inserted < s.issued_before) counts.add(d.rank[d.by_issue[inserted++]]);
      if (s.freed_by != kNoNode) {
        n.engine_prev = s.freed_by;
        n.own_ns = std::min(n.own_ns, own);
      } else if (inserted > depth) {
        n.engine_prev = d.by_start[counts.kth(inserted - depth)];
      }
    }
  }
}

}  // namespace syncscope::replay::graph_detail
