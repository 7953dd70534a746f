// A fix's prediction with intervals, the report that holds them, and its JSON rendering
// (`syncscope predict`; the text is reports/model_printers.hpp). Each fix's closed form fills
// FixPrediction from its parameters (fixes/<name>/closed_form.hpp); this layer attaches the
// step-level speedup.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "syncscope/model/analytic.hpp"
#include "syncscope/model/interval.hpp"

namespace syncscope::model {

inline constexpr int kPredictionSchemaVersion = 1;

struct FixPrediction {
  std::string fix;      // the fix's registry name (FixSpec::name)
  std::string variant;  // "cached", "double", "prefetch", "sorted", "device"
  bool applicable = true;
  std::string reason;                            // why not applicable, or which inputs are missing
  std::string formula;                           // the form used, e.g. "(L-1)*s"
  Interval saving_ns;                            // per step
  std::optional<Interval> step_time_ns;          // baseline step time when known
  std::optional<Interval> speedup;               // needs a step time
  std::string regime;                            // "host-bound", "gpu-bound", "balanced", "copy-bound", ... or ""
  std::map<std::string, Interval> parameters;    // s_ns, c_ns, g_ns, q_ns, L, ...
  std::map<std::string, Interval> alternatives;  // other forms' savings (e.g. the published form)
  std::vector<std::string> evidence;             // what in a trace supports the parameters
  std::vector<std::string> notes;
};

struct PredictionReport {
  int schema_version = kPredictionSchemaVersion;
  std::string source;       // "explicit values", a scenario file or a trace file
  std::string gpu_profile;  // name or file, "" when none
  std::vector<FixPrediction> fixes;
  std::vector<std::string> notes;
};

// Attaches a step time and computes the speedup interval (T / (T - S)); a no-op without one.
void attach_speedup(FixPrediction& f, const std::optional<Interval>& step_ns, const PropagationOptions& prop = {});

// The report as JSON (the text for people: reports/model_printers.hpp).
std::string prediction_to_json(const PredictionReport& report);

}  // namespace syncscope::model
