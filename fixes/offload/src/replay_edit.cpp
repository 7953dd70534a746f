// The offload fix's what-if edits on a replayed trace (FixSpec::replay_edit), on the graph
// alone (no predict --trace facts needed):
// - double-buffer: the copy stream's k-th wait on the compute stream waits for what its
//   (k-1)-th waited for: with two buffers, reload k reuses the buffer compute k-2 last read.
// - prefetch[:K]: a ring of K+1 buffers (K = 2..1024; without :K predict --trace's
//   prefetch_depth): reload k waits for what reload k-K waited for.
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <vector>

#include "internal.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/fixes/offload/closed_form.hpp"
#include "syncscope/replay/replay_edit.hpp"

namespace syncscope::fixes::offload::detail {

namespace {

// predict --trace's reload threshold: smaller host-to-device copies are not checkpoint reloads.
constexpr std::uint64_t kReloadMinBytes = std::uint64_t{1} << 20;

}  // namespace

int prefetch_depth_argument(const std::string& text, const std::string& k) {
  const bool digits =
      !k.empty() && k.size() <= 4 && std::all_of(k.begin(), k.end(), [](char c) { return c >= '0' && c <= '9'; });
  const int depth = digits ? std::stoi(k) : 0;
  SYNCSCOPE_INPUT_ERROR_IF(depth < 2 || depth > 1024,
                           fmt::format("--what-if '{}': prefetch:K looks K = 2..1024 layers ahead (a ring of K+1 "
                                       "buffers; K = 1 is double-buffer)",
                                       text));
  return depth;
}

void replay_edit(ReplayEditContext& ctx) {
  replay::ReplayGraph& g = ctx.graph;
  replay::EditResult& r = ctx.result;
  // A ring of d+1 buffers (d = 1: double buffering): reload k reuses the buffer reload k-d
  // filled, so it waits only for what reload k-d waited for (that buffer's last reader);
  // the first reloads wait for what the first waited for.
  std::size_t d = 1;
  if (ctx.edit.variant == "prefetch")
    d = static_cast<std::size_t>(ctx.edit.argument.empty() ? trace_prefetch_depth(ctx.options)
                                                           : prefetch_depth_argument(ctx.edit.text, ctx.edit.argument));
  // Per copy stream: its nodes that wait on another stream and are reloads.
  std::map<std::int32_t, std::vector<std::uint32_t>> waited;
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    const replay::ReplayNode& n = g.nodes[i];
    if (n.kind != replay::ReplayNode::Kind::Copy || n.direction != CopyKind::HtoD || n.waits.empty()) continue;
    if (ctx.trace.memcpys[n.record].bytes < kReloadMinBytes) continue;
    waited[n.lane].push_back(static_cast<std::uint32_t>(i));
  }
  for (auto& [lane, v] : waited) {
    std::sort(v.begin(), v.end(),
              [&](std::uint32_t a, std::uint32_t b) { return g.nodes[a].rec_start < g.nodes[b].rec_start; });
    std::vector<std::vector<std::uint32_t>> before(v.size());
    for (std::size_t k = 0; k < v.size(); ++k) before[k] = g.nodes[v[k]].waits;
    for (std::size_t k = 1; k < v.size(); ++k) {
      g.nodes[v[k]].waits = before[k >= d ? k - d : 0];
      ++r.selected;
    }
  }
  if (r.selected == 0)
    r.nothing_selected = fmt::format(
        "--what-if {}: no host-to-device copy of at least 1 MiB waits (through an event) "
        "for another stream more than once; the trace has {} copies",
        ctx.edit.text, ctx.trace.memcpys.size());
}

}  // namespace syncscope::fixes::offload::detail
