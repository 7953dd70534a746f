// Step and layer markers of the legacy torch.profiler (legacy_ranges.hpp says why).
#include "legacy_ranges.hpp"

#include <algorithm>
#include <charconv>
#include <optional>
#include <tuple>

#include "syncscope/core/glob.hpp"

namespace syncscope::analysis_detail {
namespace {

std::optional<std::int64_t> integer(std::string_view s) {
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

}  // namespace

std::vector<Range> legacy_ranges(const Trace& trace, const std::string& glob, const AnalysisOptions& options) {
  std::vector<Range> out;
  if (glob.empty()) return out;
  std::vector<std::int8_t> memo(trace.strings.size(), -1);  // per interned name: -1 unknown, 0/1
  for (const auto& e : trace.others) {
    if (e.phase != 'X' || e.category != kNoString || e.name == kNoString || e.name >= memo.size()) continue;
    auto& m = memo[e.name];
    if (m < 0) m = glob_match(glob, trace.str(e.name)) ? 1 : 0;
    if (!m) continue;
    // Plain values with a flag rather than optionals: GCC 12 at -O1 (the ci preset) warns
    // falsely that a copied std::optional<int64_t> may be used uninitialized here.
    const std::optional<std::int64_t> pid_read = e.pid == kNoString ? std::nullopt : integer(trace.str(e.pid));
    const bool has_pid = pid_read.has_value();
    const std::int64_t pid = has_pid ? *pid_read : -1;
    if (options.pid && (!has_pid || pid != *options.pid)) continue;
    const std::optional<std::int64_t> tid = e.tid == kNoString ? std::nullopt : integer(trace.str(e.tid));
    Range r;
    r.kind = RangeKind::UserAnnotation;
    r.name = e.name;
    r.pid = pid;
    r.tid = tid.value_or(-1);
    r.start = e.start;
    r.end = e.start + std::max<Ns>(0, e.duration);
    out.push_back(r);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const Range& x, const Range& y) { return std::tie(x.start, y.end) < std::tie(y.start, x.end); });
  out.erase(std::unique(out.begin(), out.end(),
                        [](const Range& x, const Range& y) {
                          return x.name == y.name && x.start == y.start && x.end == y.end;
                        }),
            out.end());
  return out;
}

}  // namespace syncscope::analysis_detail
