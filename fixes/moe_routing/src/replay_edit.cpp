// The MoE routing fix's what-if edits on a replayed trace (FixSpec::replay_edit): moe-sorted
// and moe-device, on predict --trace's MoE detection
// (runs of at least two nonzero/where-style routing syncs in a layer range).
//
// What the programs do (src/torch_step.cpp; Unsloth's sorted dispatch, docs/sources.md
// #moe-routing):
// - loop, per expert: a query (mask compare, nonzero: a device-to-host read of the count and a
//   sync), then the expert's own work (gather its rows, the expert MLP, weight, accumulate);
//   autograd later runs the expert's backward, again once per expert.
// - sorted: the E queries become one argsort + bincount + tolist per layer (3 syncs); each
//   expert's own work stays, one expert after another.
// - device: no query and no per-expert loop: counts and offsets on the device, one grouped
//   GEMM per projection over all experts' rows, forward and backward.
// So:
// - A query goes whole: the calls of the op that issued its sync (the CPU-op range named like
//   its cause, else the sync and its copy call) and the work launched for it since the
//   previous expert's work ended (the mask compare and nonzero kernels), host time (own time
//   and the gap before each call) and GPU work. Where the previous expert's work ends comes
//   from the loop's structure: the calls after the last query of the routing region (the
//   innermost host range holding all of the layer's queries) are one expert's work, W calls;
//   between two queries lie P calls, one expert's work and the next query's pre-work, so each
//   query's pre-work is the P - W calls before it.
// - moe-sorted keeps each layer's first 3 queries (standing for argsort, bincount, tolist)
//   and removes the rest; of the index arithmetic after each expert's query (calls launching
//   only routing-query kernels, e.g. our loop's tokens * k + slot: two ops) it keeps one call,
//   standing for sorted's one division of the argsort order by top_k, and removes the rest.
// - moe-device removes every query, then folds the loop: call j of expert k's work (k >= 1)
//   goes and the GPU work it launched is launched by call j of expert 0's work instead, so it
//   still runs, in stream order: one grouped launch over the same rows, costing the sum of the
//   per-expert kernels. In backward (inside the layer range after its routing region, where a
//   checkpointed layer's backward runs), E consecutive repeats of one launch sequence (kernel
//   names compared with digits ignored: per-expert names differ only there) fold the same way.
// Not modelled (said in a note): for device, the programs' own index arithmetic on a query's
// result, and anything a grouped GEMM gains over the per-expert kernels' summed time; for
// sorted, its division where the loop has no index arithmetic to stand for it (a loop that
// indexes with nonzero's result directly, as torch.where's tuple does).
#include <algorithm>
#include <cctype>
#include <set>
#include <unordered_map>

#include <fmt/format.h>

#include "internal.hpp"
#include "syncscope/fixes/moe_routing/closed_form.hpp"
#include "syncscope/model/analytic.hpp"
#include "syncscope/model/trace_predict_facts.hpp"
#include "syncscope/replay/replay_edit.hpp"

namespace syncscope::fixes::moe_routing::detail {

using namespace syncscope::replay;  // the graph's types

namespace {

using Launched = std::unordered_map<std::uint32_t, std::vector<std::uint32_t>>;  // call -> GPU nodes

// Index of `node` in its thread's call list (sorted by recorded start); list.size() if absent.
std::size_t position(const std::vector<std::uint32_t>& list, const ReplayGraph& g, std::uint32_t node) {
  auto it = std::lower_bound(list.begin(), list.end(), g.nodes[node].rec_start,
                             [&](std::uint32_t n, Ns x) { return g.nodes[n].rec_start < x; });
  while (it != list.end() && *it != node && g.nodes[*it].rec_start == g.nodes[node].rec_start) ++it;
  return it != list.end() && *it == node ? static_cast<std::size_t>(it - list.begin()) : list.size();
}

// The call is not made: its own time and the host time that led to it (the gap) go.
void drop_call(ReplayGraph& g, std::uint32_t c, std::set<std::uint32_t>& gone) {
  ReplayNode& n = g.nodes[c];
  n.removed = true;
  n.own_ns = 0;
  n.gap_ns = 0;
  gone.insert(c);
}

// Call `from` is not made; the GPU work it launched is launched by `to` instead.
void fold_call(ReplayGraph& g, const Launched& launched, std::uint32_t from, std::uint32_t to) {
  ReplayNode& n = g.nodes[from];
  n.removed = true;
  n.own_ns = 0;
  n.gap_ns = 0;
  n.sync = false;
  if (auto it = launched.find(from); it != launched.end())
    for (std::uint32_t a : it->second) g.nodes[a].launch = to;
}

// A call's key for finding repeats: the names of the GPU work it launched, digits ignored
// ("expert_07.down" and "expert_06.down" are one kernel for different experts), else its name.
std::string repeat_key(const Trace& trace, const ReplayGraph& g, const Launched& launched, std::uint32_t c) {
  std::string key;
  auto add = [&](std::string_view s) {
    bool digits = false;
    for (char ch : s) {
      if (std::isdigit(static_cast<unsigned char>(ch))) {
        if (!digits) key += '#';
        digits = true;
      } else {
        key += ch;
        digits = false;
      }
    }
    key += '|';
  };
  auto it = launched.find(c);
  if (it == launched.end() || it->second.empty()) {
    add(trace.str(trace.api_calls[g.nodes[c].record].name));
    return key;
  }
  for (std::uint32_t a : it->second) {
    const ReplayNode& x = g.nodes[a];
    if (x.kind == ReplayNode::Kind::Kernel) add(trace.str(trace.kernels[x.record].name));
    else if (x.kind == ReplayNode::Kind::Copy) add(kind_name(trace.memcpys[x.record].kind));
    else add("memset");
  }
  return key;
}

// A call whose GPU work is all kernels of a routing query (is_routing_query_kernel), and no
// sync: the index arithmetic a loop runs on a query's result.
bool index_call(const Trace& trace, const ReplayGraph& g, const Launched& launched, std::uint32_t c) {
  if (g.nodes[c].removed || g.nodes[c].sync) return false;
  auto it = launched.find(c);
  if (it == launched.end() || it->second.empty()) return false;
  for (std::uint32_t a : it->second) {
    const ReplayNode& x = g.nodes[a];
    if (x.kind != ReplayNode::Kind::Kernel) return false;
    if (!is_routing_query_kernel(model::detail::lower(trace.str(trace.kernels[x.record].name)))) return false;
  }
  return true;
}

struct Repeat {
  std::size_t start = 0, period = 0;  // `count` blocks of `period` calls from `start`
};

// The longest run of `count` consecutive repeats of one block of at least 2 calls.
std::optional<Repeat> find_repeat(const std::vector<std::string>& keys, std::size_t count) {
  std::optional<Repeat> best;
  if (count < 2) return best;
  const std::size_t n = keys.size();
  for (std::size_t p = 2; p * count <= n; ++p) {
    const std::size_t need = (count - 1) * p;  // keys[i] == keys[i + p] for i in [s, s + need)
    std::size_t run = 0;
    for (std::size_t i = 0; i + p < n; ++i) {
      run = keys[i] == keys[i + p] ? run + 1 : 0;
      if (run == need) {
        if (!best || p > best->period) best = Repeat{i + 1 - need, p};
        break;
      }
    }
  }
  return best;
}

std::size_t median_count(std::vector<std::size_t> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// What the edit did, counted over the layers, for its notes.
struct MoeCounts {
  std::size_t folded_fwd = 0, folded_bwd = 0, layers = 0, pre_work = 0, index_ops = 0, index_experts = 0;
};

// One layer range's routing pass: its queries removed (sorted keeps `keep`), then sorted's index
// arithmetic, or device's per-expert loop folded into one pass.
void edit_moe_layer(ReplayEditContext& ctx, const model::detail::TraceFacts& facts,
                    const std::vector<const SyncPoint*>& routing, std::size_t li, const Launched& launched, bool device,
                    std::size_t keep, std::set<std::uint32_t>& gone, MoeCounts& c) {
  const Trace& trace = ctx.trace;
  ReplayGraph& g = ctx.graph;
  EditResult& r = ctx.result;
  if (routing.size() < 2) return;  // predict --trace: a run of at least two per layer
  std::vector<const ReplaySync*> q;
  for (const SyncPoint* sp : routing)
    if (auto j = ctx.graph_sync(*sp)) q.push_back(&g.syncs[*j]);
  if (q.size() < 2) return;
  const std::int32_t t = ctx.thread_of(q.front()->pid, q.front()->tid);
  if (t < 0) return;
  const auto& list = g.thread_calls[static_cast<std::size_t>(t)];
  const std::size_t E = q.size();
  // Each query's calls: [qs, qe] in the thread's list.
  std::vector<std::size_t> qs(E), qe(E);
  bool found = true;
  for (std::size_t k = 0; k < E && found; ++k) {
    const std::size_t at = position(list, g, q[k]->node);
    std::size_t first = q[k]->copy_call != kNoNode ? position(list, g, q[k]->copy_call) : at, last = at;
    if (const Range* op = ctx.enclosing_op(*q[k])) {
      while (first > 0 && g.nodes[list[first - 1]].rec_start >= op->start) --first;
      while (last + 1 < list.size() && g.nodes[list[last + 1]].rec_start < op->end) ++last;
    }
    found = at < list.size() && first <= at && (k == 0 || first > qe[k - 1]);
    qs[k] = first;
    qe[k] = last;
  }
  if (!found) return;
  // The routing region: the innermost host range on this thread holding every query.
  const model::detail::Window& layer = facts.layers[li];
  const Ns qa = g.nodes[list[qs.front()]].rec_start, qb = g.nodes[list[qe.back()]].rec_end;
  Ns region_start = layer.start, region_end = layer.end;
  for (const Range& x : trace.ranges) {
    if (!model::detail::is_host_range(x) || x.tid != g.threads[static_cast<std::size_t>(t)].second) continue;
    if (x.start > qa || x.end < qb || x.end - x.start >= region_end - region_start) continue;
    region_start = std::max(x.start, layer.start);
    region_end = std::min(x.end, layer.end);
  }
  std::size_t region_first = qs.front(), region_last = qe.back();
  while (region_first > 0 && g.nodes[list[region_first - 1]].rec_start >= region_start) --region_first;
  while (region_last + 1 < list.size() && g.nodes[list[region_last + 1]].rec_start < region_end) ++region_last;
  std::vector<std::size_t> between;
  for (std::size_t k = 1; k < E; ++k) between.push_back(qs[k] - qe[k - 1] - 1);
  const std::size_t P = median_count(between);
  const std::size_t W = std::min(P, region_last - qe.back());  // one expert's work
  const std::size_t R = P - W;                                 // one query's pre-work
  ++c.layers;
  // Queries go whole: their op's calls and their pre-work.
  for (std::size_t k = keep; k < E; ++k) {
    ctx.remove_graph_sync(*q[k]);
    for (std::size_t i = qs[k]; i <= qe[k]; ++i) drop_call(g, list[i], gone);
    const std::size_t floor = k == 0 ? region_first : qe[k - 1] + 1;
    for (std::size_t i = qs[k]; i > floor && qs[k] - i < R; --i) {
      drop_call(g, list[i - 1], gone);
      ++c.pre_work;
    }
    ++r.selected;
  }
  if (!device) {
    // The index arithmetic on each query's result: the calls right after the query whose
    // GPU work is all routing-query kernels (the token/slot arithmetic turning nonzero's
    // (token, slot) pairs into flat indices, is_routing_query_kernel). Sorted has the
    // indices already, as the stable argsort's order: it turns an expert's slice of them into
    // token rows with one division by top_k (docs/sources.md#moe-routing), one launch over the
    // same rows. So of the n index calls after every expert's query (kept ones included: each
    // expert divides), the first stays, standing for the division, and n - 1 go.
    for (std::size_t k = 0; k < E; ++k) {
      const std::size_t end = k + 1 < E ? qs[k + 1] : list.size();
      std::size_t n = 0;
      for (std::size_t i = qe[k] + 1; i < end && index_call(trace, g, launched, list[i]); ++i, ++n)
        if (n > 0) {
          drop_call(g, list[i], gone);
          ++c.index_ops;
        }
      if (n > 0) ++c.index_experts;
    }
    return;
  }
  // Forward: expert k's work is launched by expert 0's calls.
  auto work = [&](std::size_t k) {  // [first, end) of expert k's work in the list
    const std::size_t first = qe[k] + 1;
    const std::size_t end = k + 1 < E ? (qs[k + 1] >= R ? qs[k + 1] - R : qs[k + 1]) : qe[k] + 1 + W;
    return std::make_pair(first, std::max(first, end));
  };
  const auto [w0, w0_end] = work(0);
  if (w0_end > w0) {
    for (std::size_t k = 1; k < E; ++k) {
      const auto [a, b] = work(k);
      for (std::size_t i = a; i < b && i < list.size(); ++i) {
        fold_call(g, launched, list[i], list[std::min(w0 + (i - a), w0_end - 1)]);
        ++c.folded_fwd;
      }
    }
  }
  // Backward of a checkpointed layer: after the routing region, inside the layer range.
  std::vector<std::size_t> idx;
  for (std::size_t i = region_last + 1; i < list.size() && g.nodes[list[i]].rec_start < layer.end; ++i)
    if (!g.nodes[list[i]].removed) idx.push_back(i);
  std::vector<std::string> keys;
  keys.reserve(idx.size());
  for (std::size_t i : idx) keys.push_back(repeat_key(trace, g, launched, list[i]));
  if (auto rep = find_repeat(keys, E)) {
    for (std::size_t k = 1; k < E; ++k)
      for (std::size_t j = 0; j < rep->period; ++j) {
        fold_call(g, launched, list[idx[rep->start + k * rep->period + j]], list[idx[rep->start + j]]);
        ++c.folded_bwd;
      }
  }
}

}  // namespace

void replay_edit(ReplayEditContext& ctx) {
  ReplayGraph& g = ctx.graph;
  EditResult& r = ctx.result;
  const model::detail::TraceFacts& facts = ctx.facts();
  const bool device = ctx.edit.variant == "device";
  const std::size_t keep = device ? 0 : static_cast<std::size_t>(kMoeSortedSyncsPerCall);
  Launched launched;
  for (std::uint32_t i = 0; i < g.nodes.size(); ++i)
    if (g.nodes[i].kind != ReplayNode::Kind::Call && g.nodes[i].launch != kNoNode)
      launched[g.nodes[i].launch].push_back(i);
  std::set<std::uint32_t> gone;
  MoeCounts c;
  const auto routing = routing_syncs(facts);
  for (std::size_t li = 0; li < facts.layers.size(); ++li)
    edit_moe_layer(ctx, facts, routing[li], li, launched, device, keep, gone, c);
  ctx.remove_launched(gone);
  if (r.selected == 0) {
    r.nothing_selected = fmt::format(
        "--what-if {}: no layer range holds a run of at least two per-expert routing "
        "syncs (nonzero/where-style causes){} ({} layer range(s){}); {}",
        ctx.edit.text, keep ? fmt::format(", more than the {} sorted keeps", keep) : "", facts.layers.size(),
        facts.layer_glob.empty() ? "" : fmt::format(" matching '{}'", facts.layer_glob), ctx.holdings(true));
    return;
  }
  r.notes.push_back(
      fmt::format("{} routing pass(es): {} per-expert queries removed with {} call(s) of pre-work (mask "
                  "compare, nonzero kernels){}",
                  c.layers, r.selected, c.pre_work,
                  keep ? fmt::format("; the first {} of each pass kept for argsort, bincount and tolist", keep)
                       : std::string()));
  if (device)
    r.notes.push_back(
        fmt::format("per-expert loop folded into one pass: {} forward and {} backward call(s) of experts "
                    "after the first no longer made, their GPU work launched with the first expert's "
                    "(a grouped launch over the same rows, the per-expert kernels' summed time)",
                    c.folded_fwd, c.folded_bwd));
  if (!device)
    r.notes.push_back(
        c.index_experts > 0
            ? fmt::format("index arithmetic on each query's result: {} call(s) removed, one per expert kept for "
                          "sorted's division by top_k ({} expert(s) with index calls)",
                          c.index_ops, c.index_experts)
            : "no index arithmetic after the queries (no routing-query kernels after a query): sorted's one division "
              "per expert is not charged");
  if (device)
    r.notes.push_back(
        "not modelled: the program's own index arithmetic on each query's result, and what one grouped kernel takes "
        "against the per-expert kernels' summed time (an upper bound)");
}

}  // namespace syncscope::fixes::moe_routing::detail
