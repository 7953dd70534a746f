// Whole-job replay: the NCCL calls that launched each communication kernel, from NCCL's own NVTX
// ranges (replay_job.hpp, nccl_calls). NCCL (2.16 on, unless NCCL_NVTX_DISABLE=1) pushes a range
// in its domain "NCCL" named after the C function (src/include/nvtx.h: ncclAllReduce, ncclSend,
// ncclGroupStart, ...) on the calling thread; Nsight Systems exports them as NVTX_EVENTS rows. A
// kernel of a lone call is launched inside that call's range; the kernel of a group
// (ncclGroupStart; ncclSend; ncclRecv; ...; ncclGroupEnd) inside its ncclGroupEnd's range.
#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <unordered_map>

#include <fmt/format.h>

#include "syncscope/replay/replay_job.hpp"

namespace syncscope::replay {
namespace {

// The NCCL functions that start communication (src/collectives.cc, src/enqueue.cc); ncclBcast is
// the legacy in-place broadcast.
constexpr std::array<std::string_view, 12> kOps = {"ncclAllReduce", "ncclAllGather", "ncclReduceScatter",
                                                   "ncclBroadcast", "ncclBcast",     "ncclReduce",
                                                   "ncclSend",      "ncclRecv",      "ncclAlltoAll",
                                                   "ncclAllToAll",  "ncclGather",    "ncclScatter"};

enum class What : std::uint8_t { Op, GroupStart, GroupEnd };

struct NcclRange {
  Ns start = 0, end = 0;
  What what = What::Op;
  std::string_view name;
};

std::optional<What> what_of(std::string_view name) {
  if (name == "ncclGroupStart") return What::GroupStart;
  if (name == "ncclGroupEnd") return What::GroupEnd;
  if (std::find(kOps.begin(), kOps.end(), name) != kOps.end()) return What::Op;
  return std::nullopt;
}

// "ncclAllReduce", or "ncclRecv x2 + ncclSend x2": each call once, with its count past one.
std::string label(const std::vector<std::string_view>& ops) {
  std::map<std::string_view, std::size_t> count;
  for (std::string_view op : ops) ++count[op];
  std::string s;
  for (const auto& [op, n] : count)
    s += (s.empty() ? "" : " + ") + std::string(op) + (n > 1 ? fmt::format(" x{}", n) : "");
  return s;
}

// The calls of the group whose ncclGroupEnd is list[end]: those after its ncclGroupStart (nested
// groups are one group to NCCL: the outermost end launches), in order.
std::vector<std::string_view> group_ops(const std::vector<NcclRange>& list, std::size_t end) {
  std::vector<std::string_view> ops;
  std::size_t depth = 0;
  for (std::size_t j = end; j-- > 0;) {
    const NcclRange& r = list[j];
    if (r.what == What::GroupEnd) ++depth;
    else if (r.what == What::GroupStart) {
      if (depth == 0) break;
      --depth;
    } else {
      ops.push_back(r.name);
    }
  }
  std::reverse(ops.begin(), ops.end());
  return ops;
}

}  // namespace

std::vector<std::string> nccl_calls(const Trace& trace, const std::vector<std::uint32_t>& kernels) {
  std::vector<std::string> out(kernels.size());
  // Each thread's NCCL ranges by start; none (a Kineto trace, NCCL_NVTX_DISABLE): nothing to read.
  std::map<std::pair<std::int64_t, std::int64_t>, std::vector<NcclRange>> by_thread;
  for (const Range& r : trace.ranges) {
    if (r.kind == RangeKind::GpuUserAnnotation) continue;
    if (r.domain != kNoString && trace.str(r.domain) != "NCCL") continue;
    const std::string_view name = trace.str(r.name);
    if (name.substr(0, 4) != "nccl") continue;
    if (const auto what = what_of(name)) by_thread[{r.pid, r.tid}].push_back({r.start, r.end, *what, name});
  }
  if (by_thread.empty()) return out;
  for (auto& [thread, list] : by_thread)
    std::stable_sort(list.begin(), list.end(),
                     [](const NcclRange& a, const NcclRange& b) { return a.start < b.start; });
  std::unordered_map<std::uint64_t, std::size_t> want;  // launch correlation -> index into `kernels`
  for (std::size_t i = 0; i < kernels.size(); ++i)
    if (const std::uint64_t c = trace.kernels[kernels[i]].correlation; c != 0) want.emplace(c, i);
  for (const ApiCall& call : trace.api_calls) {
    const auto w = want.find(call.correlation);
    if (call.correlation == 0 || w == want.end()) continue;
    const auto t = by_thread.find({call.pid, call.tid});
    if (t == by_thread.end()) continue;
    const std::vector<NcclRange>& list = t->second;
    // The innermost NCCL range around the launch: the last to start among those holding it.
    const auto after =
        std::upper_bound(list.begin(), list.end(), call.start, [](Ns at, const NcclRange& r) { return at < r.start; });
    // NVTX ranges of one thread nest: the innermost holding the launch started last, and only
    // calls that ended before the launch lie between (a few; 64 is far more than NCCL nests).
    std::size_t looked = 0;
    for (auto it = after; it != list.begin() && looked < 64; ++looked) {
      --it;
      if (it->end < call.end) continue;
      if (it->what == What::Op) out[w->second] = std::string(it->name);
      else if (it->what == What::GroupEnd)
        out[w->second] = label(group_ops(list, static_cast<std::size_t>(it - list.begin())));
      break;
    }
  }
  return out;
}

std::string nccl_operation(std::string_view calls) {
  // Sends and receives pair across ranks (one rank's ncclSend is its peer's ncclRecv): one kind.
  std::vector<std::string> kinds;
  std::size_t at = 0;
  while (at <= calls.size() && !calls.empty()) {
    const std::size_t plus = calls.find(" + ", at);
    std::string_view item = calls.substr(at, plus == std::string_view::npos ? std::string_view::npos : plus - at);
    item = item.substr(0, item.find(' '));  // without " xN"
    std::string kind = item == "ncclSend" || item == "ncclRecv" ? "ncclSend/ncclRecv" : std::string(item);
    if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end()) kinds.push_back(std::move(kind));
    if (plus == std::string_view::npos) break;
    at = plus + 3;
  }
  std::sort(kinds.begin(), kinds.end());
  std::string s;
  for (const std::string& k : kinds) s += (s.empty() ? "" : " + ") + k;
  return s;
}

}  // namespace syncscope::replay
