// GPU user annotations per name: count, total, min, max, mean, sample std of the ranges'
// durations (definition in syncscope/analysis/gpu_analyses.hpp, GpuAnnotationTime; HTA
// get_gpu_user_annotation_breakdown, hta/analyzers/breakdown_analysis.py).
#include <algorithm>
#include <set>
#include <utility>

#include "gpu_internal.hpp"

namespace syncscope::analysis_detail {

void gpu_annotation_breakdown(const Trace& trace, GpuAnalyses& out) {
  // Per interned name: its durations and the streams it ran on. Names are few (record_function
  // labels), ranges many: a table indexed by StringId, not a map of strings.
  std::vector<std::int32_t> slot(trace.strings.size(), -1);
  struct Acc {
    StringId name;
    std::vector<Ns> durs;
    std::set<std::pair<std::int32_t, std::int64_t>> streams;
  };
  std::vector<Acc> acc;
  for (const auto& r : trace.ranges) {
    if (r.kind != RangeKind::GpuUserAnnotation || r.name >= slot.size()) continue;
    if (slot[r.name] < 0) {
      slot[r.name] = static_cast<std::int32_t>(acc.size());
      acc.push_back({r.name, {}, {}});
    }
    Acc& a = acc[static_cast<std::size_t>(slot[r.name])];
    // A range ending before it starts (a broken trace) counts with duration 0, as the kernels.
    a.durs.push_back(std::max<Ns>(0, r.end - r.start));
    a.streams.emplace(r.device, r.stream);
  }
  std::vector<GpuAnnotationTime> rows;
  rows.reserve(acc.size());
  for (auto& a : acc) {
    GpuAnnotationTime g;
    g.name = std::string(trace.str(a.name));
    g.stats = duration_stats(a.durs);
    g.streams = a.streams.size();
    rows.push_back(std::move(g));
  }
  std::sort(rows.begin(), rows.end(), [](const GpuAnnotationTime& x, const GpuAnnotationTime& y) {
    return x.stats.total_ns != y.stats.total_ns ? x.stats.total_ns > y.stats.total_ns : x.name < y.name;
  });
  out.gpu_annotation_names = rows.size();
  if (rows.size() > kTopGpuAnnotations) rows.resize(kTopGpuAnnotations);
  out.gpu_annotations = std::move(rows);
}

}  // namespace syncscope::analysis_detail
