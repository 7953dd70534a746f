// The replay section of `predict --trace`: identity accuracy per step, the median step's
// critical path, and each what-if edit beside its closed form.
//
// JSON names (scripts and our checks read them; errors are fractions, times ns):
//   "replay": {"steps": [{"name", "measured_ns", "replayed_ns"}...], "replayed_steps",
//              "median_abs_error", "max_abs_error", "within_goal" (these three only when
//              replayed_steps > 0), "round_trip_ns", "warnings": [...], "critical_path": [...]}
//   "what_if": [{"edit", "applicable", "reason", "replayed_step_ns", "saving_ns" (null when
//               it would rest on an edge the graph could not build), "closed_form_saving_ns"
//               (null when no closed form applies), "closed_form", "off_critical_path": [...],
//               "notes": [...]}...]
#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "syncscope/core/error.hpp"
#include "syncscope/model/predict_inputs.hpp"
#include "syncscope/replay/replay.hpp"

namespace syncscope::replay {
namespace {

template <class T>
T median_value(std::vector<T> v) {
  if (v.empty()) return T{};
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  if (n % 2 == 1) return v[n / 2];
  return static_cast<T>((v[n / 2 - 1] + v[n / 2]) / 2);
}

const model::FixPrediction* find_fix(const model::PredictionReport& rep, const std::string& fix,
                                     const std::string& variant) {
  for (const auto& f : rep.fixes)
    if (f.fix == fix && f.variant == variant) return &f;
  return nullptr;
}

std::string count_text(double n) {
  return std::fabs(n - std::round(n)) < 1e-9 ? fmt::format("{:.0f}", n) : fmt::format("{:.1f}", n);
}

}  // namespace

ReplayReport replay_what_if(const Trace& trace, const std::vector<std::string>& edits,
                            const model::TracePredictOptions& predict_options,
                            const model::PredictionReport& closed_forms) {
  ReplayReport rep;
  ReplayOptions ro;
  ro.step_glob = predict_options.step_glob;
  const ReplayGraph g = build_replay_graph(trace, ro);
  const ReplayTimes t = run_replay(g);
  rep.steps = replay_steps(g, t);
  rep.round_trip_ns = g.round_trip_ns;
  rep.warnings = g.problems.describe(g.step_glob);
  if (t.cycle_nodes)
    rep.warnings.push_back(
        fmt::format("replay: {} node(s) in a dependency cycle (inconsistent timestamps) timed in "
                    "recorded order",
                    t.cycle_nodes));
  if (g.round_trip_samples == 0 && !g.syncs.empty())
    rep.warnings.push_back("replay: no sync in the trace waited for GPU work, so the round trip is unknown (0 used)");
  std::vector<double> errs;
  for (const auto& s : rep.steps)
    if (s.measured_ns > 0) errs.push_back(std::fabs(s.error()));
  rep.error_steps = errs.size();
  if (!errs.empty()) {
    rep.median_abs_error = median_value(errs);
    rep.max_abs_error = *std::max_element(errs.begin(), errs.end());
  }
  // The median step (by measured time) is the one whose critical path is shown.
  std::size_t mid = 0;
  if (!rep.steps.empty()) {
    std::vector<std::size_t> idx(rep.steps.size());
    for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = i;
    std::sort(idx.begin(), idx.end(),
              [&](std::size_t a, std::size_t b) { return rep.steps[a].measured_ns < rep.steps[b].measured_ns; });
    mid = idx[idx.size() / 2];
    rep.critical_step = rep.steps[mid].name;
    rep.critical_path = critical_path(trace, g, t, mid);
  }
  std::vector<std::vector<std::size_t>> base_critical(g.steps.size());
  for (std::size_t i = 0; i < g.steps.size(); ++i) base_critical[i] = critical_syncs(g, t, i);

  const bool explicit_edits = !edits.empty();
  // Without explicit edits: every fix's, in registry order (packing-cache, ..., moe-device, ...).
  const std::vector<std::string> list = explicit_edits ? edits : registered_what_if_edits();
  bool first_explicit = true;
  for (const std::string& text : list) {
    const WhatIfEdit edit = parse_what_if(text);
    WhatIfOutcome out;
    out.edit = text;
    ReplayGraph ge = g;
    EditResult er = apply_what_if(trace, ge, edit, predict_options);
    out.notes = er.notes;
    // The closed form beside it.
    std::string fix, variant;
    if (edit.kind == WhatIfEdit::Kind::Registered) fix = fixes::fix_spec(edit.fix).name, variant = edit.variant;
    if (!fix.empty()) {
      const model::FixPrediction* f = find_fix(closed_forms, fix, variant);
      if (f && f->applicable) {
        out.closed_form_saving_ns = f->saving_ns.value;
        out.closed_form = fmt::format("predict --trace {} {}: {}", fix, variant, f->formula);
      } else {
        out.closed_form = f ? fmt::format("{} {} not applicable: {}", fix, variant, f->reason) : "none";
      }
    }
    if (er.selected == 0) {
      SYNCSCOPE_INPUT_ERROR_IF(explicit_edits, er.nothing_selected);
      out.applicable = false;
      out.reason = er.nothing_selected;
      rep.what_if.push_back(std::move(out));
      continue;
    }
    if (edit.kind == WhatIfEdit::Kind::RemoveSyncs) {
      // "Each removed sync saves its bubble": the analysis's bubbles of the removed syncs, per step.
      double bubbles = 0;
      for (const auto& s : ge.syncs)
        if (ge.nodes[s.node].removed)
          for (const auto& w : g.steps)
            if (w.rec_start <= s.rec_start && s.rec_start < w.rec_end) bubbles += static_cast<double>(s.bubble_ns);
      out.closed_form_saving_ns = g.steps.empty() ? 0.0 : bubbles / static_cast<double>(g.steps.size());
      out.closed_form = "sum of the removed syncs' bubbles per step";
    }
    const ReplayTimes te = run_replay(ge);
    const auto steps_e = replay_steps(ge, te);
    std::vector<Ns> replayed, saving;
    std::size_t withheld = 0;
    std::map<std::string, std::size_t> came_off;
    for (std::size_t i = 0; i < steps_e.size(); ++i) {
      replayed.push_back(steps_e[i].replayed_ns);
      if (steps_e[i].unbuilt > 0) {
        ++withheld;
      } else {
        saving.push_back(rep.steps[i].replayed_ns - steps_e[i].replayed_ns);
      }
      const auto after = critical_syncs(ge, te, i);
      for (std::size_t k : base_critical[i])
        if (std::find(after.begin(), after.end(), k) == after.end())
          ++came_off[fmt::format("{} ({})", g.syncs[k].cause, g.syncs[k].api)];
    }
    out.replayed_step_ns = median_value(replayed);
    if (!saving.empty()) out.saving_ns = median_value(saving);
    if (withheld)
      out.notes.push_back(
          fmt::format("{} of {} step(s) hold an edge the replay could not build: the saving is the "
                      "median over the other {}{}",
                      withheld, steps_e.size(), steps_e.size() - withheld,
                      saving.empty() ? " (none: no saving is claimed)" : ""));
    for (const auto& [what, n] : came_off)
      out.off_critical_path.push_back(fmt::format(
          "{} x {} per step",
          count_text(static_cast<double>(n) / static_cast<double>(std::max<std::size_t>(1, steps_e.size()))), what));
    if (explicit_edits && first_explicit) {
      first_explicit = false;
      if (!rep.steps.empty()) rep.edited_critical_path = critical_path(trace, ge, te, mid);
    }
    rep.what_if.push_back(std::move(out));
  }
  return rep;
}

TracePredictionWithReplay predict_with_replay(const Trace& trace, const model::TracePredictOptions& options,
                                              const std::string& source, const std::vector<std::string>& edits,
                                              const std::optional<model::Interval>& step_time_ns) {
  TracePredictionWithReplay out;
  out.prediction = model::predict_from_trace(trace, options, source);
  out.replay = replay_what_if(trace, edits, options, out.prediction);
  if (step_time_ns) model::replace_step_time(out.prediction, *step_time_ns, options.propagation);
  return out;
}

std::string prediction_with_replay_to_json(const model::PredictionReport& prediction, const ReplayReport& r) {
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(model::prediction_to_json(prediction));
  nlohmann::ordered_json steps = nlohmann::ordered_json::array();
  for (const auto& s : r.steps)
    steps.push_back({{"name", s.name},
                     {"measured_ns", s.measured_ns},
                     {"replayed_ns", s.replayed_ns},
                     {"unbuilt_edges", s.unbuilt}});
  nlohmann::ordered_json path = nlohmann::ordered_json::array();
  for (const auto& c : r.critical_path)
    path.push_back({{"where", c.where}, {"what", c.what}, {"start_ns", c.start_ns}, {"duration_ns", c.duration_ns}});
  nlohmann::ordered_json rj = {{"steps", steps}, {"replayed_steps", r.error_steps}};
  // Error figures only over replayed steps: with none there is nothing to have an error.
  if (r.error_steps > 0) {
    rj["median_abs_error"] = r.median_abs_error;
    rj["max_abs_error"] = r.max_abs_error;
    rj["within_goal"] = r.within_goal();
  }
  rj["round_trip_ns"] = r.round_trip_ns;
  rj["warnings"] = r.warnings;
  rj["critical_step"] = r.critical_step;
  rj["critical_path"] = path;
  j["replay"] = std::move(rj);
  nlohmann::ordered_json wi = nlohmann::ordered_json::array();
  for (const auto& w : r.what_if) {
    nlohmann::ordered_json e;
    e["edit"] = w.edit;
    e["applicable"] = w.applicable;
    if (!w.applicable) e["reason"] = w.reason;
    e["replayed_step_ns"] = w.applicable ? nlohmann::ordered_json(w.replayed_step_ns) : nlohmann::ordered_json(nullptr);
    e["saving_ns"] = w.saving_ns ? nlohmann::ordered_json(*w.saving_ns) : nlohmann::ordered_json(nullptr);
    e["closed_form_saving_ns"] =
        w.closed_form_saving_ns ? nlohmann::ordered_json(*w.closed_form_saving_ns) : nlohmann::ordered_json(nullptr);
    e["closed_form"] = w.closed_form;
    e["off_critical_path"] = w.off_critical_path;
    e["notes"] = w.notes;
    wi.push_back(std::move(e));
  }
  j["what_if"] = wi;
  return j.dump(2) + "\n";
}

}  // namespace syncscope::replay
