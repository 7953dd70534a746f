#include "analysis_hta_printers.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "analysis_gpu_printers.hpp"
#include "syncscope/core/text.hpp"
#include "syncscope/reports/analysis_printers.hpp"
#include "text_cells.hpp"

namespace syncscope::reports_detail {

using nlohmann::ordered_json;

namespace {

constexpr std::size_t kTableAnnotations = 5;  // table rows; JSON and CSV hold every listed one
constexpr std::size_t kTableSequences = 3;

std::string roots_rule(const KernelSequenceOptions& o) { return o.op.empty() ? "top-level cpu_op" : "name contains"; }

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : "|") + x;
  return s;
}

// A kernel's name as a table can hold it: C++ kernel names are long ("void ns::kernel<...>(args)");
// without "void " and the parameter list, at most `width` bytes.
std::string short_kernel(std::string_view name, std::size_t width) {
  std::string n(name.starts_with("void ") ? name.substr(5) : name);
  // "at::native::(anonymous namespace)::foo<..>(args)": the namespace's parentheses are no parameter list.
  for (std::size_t p; (p = n.find("(anonymous namespace)::")) != std::string::npos;) n.erase(p, 23);
  if (auto p = n.find('('); p != std::string::npos && p > 0) n.resize(p);
  return shorten(printable(n), width);
}

// An op's name as a table can hold it: autograd nodes ("autograd::engine::evaluate_function:
// AddmmBackward0") by the node's own name, the part that tells them apart.
std::string short_op(const std::string& name, std::size_t width) {
  const auto p = name.rfind(": ");
  return shorten(printable(name.size() > width && p != std::string::npos ? name.substr(p + 2) : name), width);
}

}  // namespace

void hta_breakdowns_json(const GpuAnalyses& g, ordered_json& j) {
  j["gpu_annotations"] = ordered_json::array();
  for (const auto& a : g.gpu_annotations) {
    ordered_json e{{"name", a.name}, {"streams", a.streams}};
    e.update(stats_json(a.stats));
    j["gpu_annotations"].push_back(std::move(e));
  }
  j["gpu_annotation_names"] = g.gpu_annotation_names;
  const KernelSequences& ks = g.kernel_sequences;
  ordered_json s{{"op", ks.options.op},
                 {"roots_rule", roots_rule(ks.options)},
                 {"min_pattern_len", ks.options.min_pattern_len},
                 {"top_k", ks.options.top_k},
                 {"roots", ks.roots},
                 {"patterns", ks.patterns}};
  s["top"] = ordered_json::array();
  for (const auto& q : ks.top)
    s["top"].push_back(ordered_json{{"op", q.op},
                                    {"kernels", q.kernels},
                                    {"length", q.kernels.size()},
                                    {"count", q.count},
                                    {"gpu_ns", q.gpu_ns},
                                    {"host_ns", q.host_ns}});
  j["kernel_sequences"] = std::move(s);
}

void hta_breakdowns_rows(const GpuAnalyses& g, CsvWriter& csv, const std::string& version) {
  auto row = [&](const std::string& kind, const std::string& name, std::size_t index, const std::string& metric,
                 const std::string& value) {
    // Names come from the trace: escaped as in the tables.
    csv.row({kind, printable(name), std::to_string(index), printable(metric), printable(value), version});
  };
  auto num = [](auto v) { return fmt::format("{}", v); };
  for (const auto& a : g.gpu_annotations) {
    const DurationStats& s = a.stats;
    for (const auto& [metric, value] : {std::pair<const char*, std::string>{"count", num(s.count)},
                                        {"total_ns", num(s.total_ns)},
                                        {"min_ns", num(s.min_ns)},
                                        {"max_ns", num(s.max_ns)},
                                        {"mean_ns", num(s.mean_ns)},
                                        {"std_ns", num(s.std_ns)},
                                        {"median_ns", num(s.median_ns)},
                                        {"p90_ns", num(s.p90_ns)},
                                        {"streams", num(a.streams)}})
      row("gpu_annotation", a.name, 0, metric, value);
  }
  const KernelSequences& ks = g.kernel_sequences;
  const std::string rule = ks.options.op.empty() ? roots_rule(ks.options) : ks.options.op;
  row("kernel_sequences", rule, 0, "roots", num(ks.roots));
  row("kernel_sequences", rule, 0, "patterns", num(ks.patterns));
  row("kernel_sequences", rule, 0, "min_pattern_len", num(ks.options.min_pattern_len));
  row("kernel_sequences", rule, 0, "top_k", num(ks.options.top_k));
  for (std::size_t i = 0; i < ks.top.size(); ++i) {
    const KernelSequence& q = ks.top[i];
    row("kernel_sequence", q.op, i, "kernels", joined(q.kernels));
    row("kernel_sequence", q.op, i, "length", num(q.kernels.size()));
    row("kernel_sequence", q.op, i, "count", num(q.count));
    row("kernel_sequence", q.op, i, "gpu_ns", num(q.gpu_ns));
    row("kernel_sequence", q.op, i, "host_ns", num(q.host_ns));
  }
}

void print_hta_breakdowns_table(const GpuAnalyses& g, std::ostream& out) {
  if (!g.gpu_annotations.empty()) {
    out << fmt::format("{:<36}{:>7}{:>11}{:>10}{:>10}{:>10}{:>10}\n", "GPU user annotations (GPU time)", "count",
                       "total", "mean", "min", "max", "std");
    const std::size_t n = std::min(kTableAnnotations, g.gpu_annotations.size());
    for (std::size_t i = 0; i < n; ++i) {
      const auto& a = g.gpu_annotations[i];
      out << fmt::format("  {:<34}{:>7}{:>11}{:>10}{:>10}{:>10}{:>10}\n", shorten(printable(a.name), 33), a.stats.count,
                         format_duration(a.stats.total_ns), duration_cell(a.stats.mean_ns),
                         format_duration(a.stats.min_ns), format_duration(a.stats.max_ns),
                         duration_cell(a.stats.std_ns));
    }
    if (g.gpu_annotation_names > n)
      out << fmt::format("  ... {} more names (--format json lists {})\n", g.gpu_annotation_names - n,
                         g.gpu_annotations.size());
  }
  const KernelSequences& ks = g.kernel_sequences;
  // Only where the trace has GPU work: a host-only trace has no sequences to look for.
  if (g.by_class.empty()) return;
  const std::string roots =
      ks.options.op.empty() ? "top-level cpu_ops" : fmt::format("ops named *{}*", printable(ks.options.op));
  out << fmt::format("frequent kernel sequences (under {}, >= {} kernels): ", roots, ks.options.min_pattern_len);
  if (ks.patterns == 0) {
    out << "none\n";
    return;
  }
  out << fmt::format("{} patterns over {} ops\n", ks.patterns, ks.roots);
  const std::size_t n = std::min(kTableSequences, ks.top.size());
  for (std::size_t i = 0; i < n; ++i) {
    const auto& q = ks.top[i];
    out << fmt::format("  {:>6} x {}: {} kernels, GPU {} (host {})\n", q.count, short_op(q.op, 40), q.kernels.size(),
                       format_duration(q.gpu_ns), format_duration(q.host_ns));
    std::string line;
    std::size_t shown = 0;
    for (const auto& k : q.kernels) {
      std::string part = short_kernel(k, 40);
      if (shown > 0 && line.size() + part.size() + 3 > 100) break;
      line += (shown++ ? " | " : "") + part;
    }
    if (shown < q.kernels.size()) line += fmt::format(" | +{} more", q.kernels.size() - shown);
    out << "           " << line << "\n";
  }
  if (ks.patterns > n)
    out << fmt::format("  ... {} more patterns (--format json lists the top {})\n", ks.patterns - n, ks.top.size());
}

}  // namespace syncscope::reports_detail
