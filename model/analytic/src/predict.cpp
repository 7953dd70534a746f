#include "syncscope/model/predict.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "syncscope/core/error.hpp"

namespace syncscope::model {

namespace {

using json = nlohmann::ordered_json;

}  // namespace

void attach_speedup(FixPrediction& f, const std::optional<Interval>& step_ns, const PropagationOptions& prop) {
  if (!step_ns) return;
  check_interval(*step_ns, "step time");
  f.step_time_ns = *step_ns;
  if (!f.applicable) return;
  // Validate at the point values (a clear error); draws where S >= T are dropped.
  (void)speedup(step_ns->value, f.saving_ns.value);
  f.speedup = propagate(
      {*step_ns, f.saving_ns},
      [](std::span<const double> x) { return x[1] < x[0] && x[0] > 0 ? x[0] / (x[0] - x[1]) : std::nan(""); }, prop);
}

std::string prediction_to_json(const PredictionReport& r) {
  auto iv = [](const Interval& x) { return json{{"value", x.value}, {"lo", x.lo}, {"hi", x.hi}}; };
  json j;
  j["schema_version"] = r.schema_version;
  j["kind"] = "syncscope.prediction";
  j["interval_level"] = kIntervalLevel;
  j["source"] = r.source;
  j["gpu_profile"] = r.gpu_profile;
  j["fixes"] = json::array();
  for (const auto& f : r.fixes) {
    json o;
    o["fix"] = f.fix;
    o["variant"] = f.variant;
    o["applicable"] = f.applicable;
    o["reason"] = f.reason;
    o["formula"] = f.formula;
    o["predicted_saving_ns"] = f.saving_ns.value;
    o["predicted_saving_interval_ns"] = json::array({f.saving_ns.lo, f.saving_ns.hi});
    o["step_time_ns"] = f.step_time_ns ? iv(*f.step_time_ns) : json(nullptr);
    o["predicted_speedup"] = f.speedup ? json(f.speedup->value) : json(nullptr);
    o["predicted_speedup_interval"] = f.speedup ? json::array({f.speedup->lo, f.speedup->hi}) : json(nullptr);
    o["regime"] = f.regime;
    o["parameters"] = json::object();
    for (const auto& [k, v] : f.parameters) o["parameters"][k] = iv(v);
    o["alternatives"] = json::object();
    for (const auto& [k, v] : f.alternatives) o["alternatives"][k] = iv(v);
    o["evidence"] = f.evidence;
    o["notes"] = f.notes;
    j["fixes"].push_back(o);
  }
  j["notes"] = r.notes;
  return j.dump(2) + "\n";
}

}  // namespace syncscope::model
