// Printing a trace calibration (text table, JSON), and how kernels are named and classed.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "syncscope/model/trace_calibration.hpp"
#include "trace_predict_facts.hpp"

namespace syncscope::model {

namespace {

// Value, unit and scale for display.
struct Shown {
  double scale;
  const char* unit;
};
Shown shown(const std::string& field) {
  if (field.ends_with("_bytes_per_s")) return {1e9, "GB/s"};
  if (field.ends_with("_ns")) return {1e3, "us"};
  if (field == "memory_bytes") return {1e9, "GB"};
  return {1, ""};
}

}  // namespace

std::string kernel_key(std::string_view name) {
  std::string_view n = name;
  if (n.starts_with("void ")) n.remove_prefix(5);
  // Drop the parameter list: the last top-level "(...)" at the end.
  if (n.ends_with(")")) {
    int depth = 0;
    for (std::size_t i = n.size(); i-- > 0;) {
      if (n[i] == ')') ++depth;
      else if (n[i] == '(' && --depth == 0) {
        if (i > 0) n = n.substr(0, i);
        break;
      }
    }
  }
  return std::string(n);
}

std::string kernel_class_of(std::string_view kernel_name) {
  using detail::contains_any;
  const std::string n = detail::lower(kernel_name);
  if (contains_any(n, {"flash", "fmha", "attention", "sdpa", "mha_"})) return "attention";
  if (contains_any(n, {"reduce", "reduction", "softmax", "norm", "splitk"})) return "reduce";
  if (contains_any(n, {"gemm", "nvjet", "xmma", "cutlass", "cublas", "matmul", "bmm", "wgrad", "dgrad", "_proj"}))
    return "gemm";
  if (contains_any(n, {"elementwise", "vectorized", "unrolled", "functor", "copy", "fill", "silu", "gelu", "index",
                       "cat"}))
    return "elementwise";
  return "other";
}

std::string calibration_to_text(const TraceCalibration& c) {
  std::string out = fmt::format("GPU profile '{}': {}\n", c.profile.name, c.profile.description);
  out += fmt::format("{:<26} {:>12} {:>25} {:>8}  {}\n", "field", "value", "90% interval", "events", "from");
  for (const auto& e : c.estimates) {
    const Shown s = shown(e.field);
    out += fmt::format("{:<26} {:>9.4g} {:<4} {:>12.4g}..{:<12.4g} {:>8}  trace\n", e.field, e.value.value / s.scale,
                       s.unit, e.value.lo / s.scale, e.value.hi / s.scale, e.events);
  }
  for (const auto& f : c.from_base) out += fmt::format("{:<26} {:>12} {:>25} {:>8}  base\n", f, "", "", "");
  if (!c.kernel_classes.empty()) {
    out += "kernel time per class at the trace's shapes:\n";
    out += fmt::format("  {:<12} {:>10} {:>23} {:>10} {:>10} {:>8} {:>6}\n", "class", "median us", "90% interval",
                       "p10 us", "p90 us", "events", "names");
    for (const auto& k : c.kernel_classes)
      out += fmt::format("  {:<12} {:>10.2f} {:>10.2f}..{:<10.2f} {:>10.2f} {:>10.2f} {:>8} {:>6}\n", k.kernel_class,
                         k.median_ns.value / 1e3, k.median_ns.lo / 1e3, k.median_ns.hi / 1e3, k.p10_ns / 1e3,
                         k.p90_ns / 1e3, k.events, k.names);
  }
  for (const auto& n : c.notes) out += "note: " + n + "\n";
  for (const auto& w : c.warnings) out += "warning: " + w + "\n";
  return out;
}

std::string calibration_to_json(const TraceCalibration& c) {
  nlohmann::ordered_json j;
  j["schema_version"] = c.schema_version;
  j["profile"] = c.profile.name;
  for (const auto& e : c.estimates)
    j["estimates"][e.field] = {{"value", e.value.value}, {"lo", e.value.lo}, {"hi", e.value.hi},
                               {"events", e.events}, {"estimator", e.estimator}};
  j["from_base"] = c.from_base;
  for (const auto& k : c.kernel_classes)
    j["kernel_classes"][k.kernel_class] = {{"median_ns", k.median_ns.value}, {"lo", k.median_ns.lo},
                                           {"hi", k.median_ns.hi}, {"p10_ns", k.p10_ns}, {"p90_ns", k.p90_ns},
                                           {"events", k.events}, {"names", k.names}};
  j["provenance"] = c.profile.provenance;
  j["notes"] = c.notes;
  j["warnings"] = c.warnings;
  return j.dump(2) + "\n";
}

}  // namespace syncscope::model
