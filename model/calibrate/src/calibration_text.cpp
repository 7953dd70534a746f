// A trace calibration as JSON (its text table is in reports/model_printers), and how kernels
// are named and classed.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "syncscope/calibrate/trace_calibration.hpp"
#include "syncscope/model/trace_predict_facts.hpp"

namespace syncscope::calibrate {

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
  using model::detail::contains_any;
  const std::string n = model::detail::lower(kernel_name);
  if (contains_any(n, {"flash", "fmha", "attention", "sdpa", "mha_"})) return "attention";
  if (contains_any(n, {"reduce", "reduction", "softmax", "norm", "splitk"})) return "reduce";
  if (contains_any(n, {"gemm", "nvjet", "xmma", "cutlass", "cublas", "matmul", "bmm", "wgrad", "dgrad", "_proj"}))
    return "gemm";
  if (contains_any(n, {"elementwise", "vectorized", "unrolled", "functor", "copy", "fill", "silu", "gelu", "index",
                       "cat"}))
    return "elementwise";
  return "other";
}

std::string calibration_to_json(const TraceCalibration& c) {
  nlohmann::ordered_json j;
  j["schema_version"] = c.schema_version;
  j["profile"] = c.profile.name;
  for (const auto& e : c.estimates)
    j["estimates"][e.field] = {{"value", e.value.value},
                               {"lo", e.value.lo},
                               {"hi", e.value.hi},
                               {"events", e.events},
                               {"estimator", e.estimator}};
  j["from_base"] = c.from_base;
  for (const auto& k : c.kernel_classes)
    j["kernel_classes"][k.kernel_class] = {{"median_ns", k.median_ns.value},
                                           {"lo", k.median_ns.lo},
                                           {"hi", k.median_ns.hi},
                                           {"p10_ns", k.p10_ns},
                                           {"p90_ns", k.p90_ns},
                                           {"events", k.events},
                                           {"names", k.names}};
  j["provenance"] = c.profile.provenance;
  j["notes"] = c.notes;
  j["warnings"] = c.warnings;
  return j.dump(2) + "\n";
}

}  // namespace syncscope::calibrate
