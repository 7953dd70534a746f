// The published figures (each fix's FixSpec::published_scenarios, from its folder:
// docs/sources.md#packing-cache, #offload-double-buffer, #moe-routing) beside the runs of
// scenarios/published/, as `validate --published` and the report print them. The figures are
// inputs as printed; nothing here is fitted to them.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "syncscope/model/published.hpp"

namespace syncscope::model {

namespace {

// Every registered fix's figures (FixSpec::published_scenarios), in registry order, with the
// fix's name.
std::vector<std::pair<std::string, fixes::PublishedScenarioFigure>> figures() {
  std::vector<std::pair<std::string, fixes::PublishedScenarioFigure>> out;
  for (const fixes::FixSpec& f : fixes::fix_registry())
    for (const auto& figure : f.published_scenarios) out.emplace_back(f.name, figure);
  return out;
}

const VariantResult* find_variant(const std::vector<RunResults>& runs, const std::string& scenario,
                                  const std::string& fix, const std::string& variant) {
  for (const auto& r : runs)
    for (const auto& v : r.variants)
      if (v.scenario == scenario && v.fix == fix && v.variant == variant) return &v;
  return nullptr;
}

const VariantResult* find_baseline(const std::vector<RunResults>& runs, const std::string& scenario,
                                   const std::string& fix) {
  for (const auto& r : runs)
    for (const auto& v : r.variants)
      if (v.scenario == scenario && v.fix == fix && v.baseline) return &v;
  return nullptr;
}

}  // namespace

bool published_scenario(const std::string& scenario) {
  for (const fixes::FixSpec& f : fixes::fix_registry())
    for (const auto& figure : f.published_scenarios)
      if (figure.scenario == scenario) return true;
  return false;
}

bool published_scenario_shows(const std::string& scenario, const std::string& what) {
  for (const fixes::FixSpec& f : fixes::fix_registry())
    for (const auto& figure : f.published_scenarios)
      if (figure.scenario == scenario && figure.what == what) return true;
  return false;
}

std::vector<PublishedFigureRow> published_figure_rows(const std::vector<RunResults>& runs) {
  std::vector<PublishedFigureRow> rows;
  for (const auto& [fix, f] : figures()) {
    PublishedFigureRow r;
    r.figure = f.figure;
    r.scenario = f.scenario;
    r.fix = fix;
    r.variant = f.variant;
    r.what = f.what;
    r.published = f.published;
    r.published_lo = f.lo;
    r.published_hi = f.hi;
    r.independent = f.independent;
    r.assumptions = f.assumptions;
    r.source = f.source;
    const VariantResult* v = find_variant(runs, r.scenario, r.fix, r.variant);
    const VariantResult* b = find_baseline(runs, r.scenario, r.fix);
    if (v && b && v->step_time_ns.value > 0 && b->step_time_ns.value > 0) {
      const double sv = v->step_time_ns.value, sb = b->step_time_ns.value;
      const double fv = v->forward_time_ns.value, fb = b->forward_time_ns.value;
      if (r.what == "step") {
        r.found = true;
        r.simulated = sb / sv - 1.0;
      } else if (r.what == "forward" && fv > 0 && fb > 0) {
        r.found = true;
        r.simulated = fb / fv - 1.0;
      } else if (r.what == "backward" && fv > 0 && fb > 0 && sv > fv && sb > fb) {
        // Backward = the step less its forward (the optimizer's small LoRA update included).
        r.found = true;
        r.simulated = (sb - fb) / (sv - fv) - 1.0;
      } else if (r.what == "rebuild_ms" && b->layers > 1) {
        r.found = true;
        r.simulated = (sb - sv) / (b->layers - 1) / 1e6;
      }
      if (r.found) r.ratio = r.simulated / r.published;
    }
    rows.push_back(std::move(r));
  }
  return rows;
}

std::string published_figure_table(const std::vector<PublishedFigureRow>& rows, const std::string& label,
                                   bool markdown) {
  auto value = [](const PublishedFigureRow& r, double x) {
    return r.what == "rebuild_ms" ? fmt::format("{:.2f} ms", x) : fmt::format("{:+.1f}%", 100 * x);
  };
  auto published = [&](const PublishedFigureRow& r) {
    if (r.published_lo != r.published_hi)
      return fmt::format("{:.0f}-{:.0f}%", 100 * r.published_lo, 100 * r.published_hi);
    return value(r, r.published);
  };
  auto verdict = [](const PublishedFigureRow& r) -> std::string {
    if (!r.found) return "not run";
    std::string v = r.ratio >= kPublishedGoalLo && r.ratio <= kPublishedGoalHi ? "within" : "miss";
    if (!r.independent) v += " (not independent)";
    return v;
  };
  std::string out;
  out += fmt::format("published figures beside {}\n", label);
  if (markdown) {
    out += "\n| figure | published | simulated | simulated / published | goal 0.8-1.25 | assumptions |\n";
    out += "|---|---|---|---|---|---|\n";
  } else {
    out += fmt::format("{:<48} {:>10} {:>10} {:>7}  {}\n", "figure", "published", "simulated", "ratio",
                       "goal 0.8-1.25 [assumptions]");
  }
  std::vector<std::string> notes;
  for (const auto& r : rows) {
    auto it = std::find(notes.begin(), notes.end(), r.assumptions);
    const std::size_t note = static_cast<std::size_t>(it - notes.begin()) + 1;
    if (it == notes.end()) notes.push_back(r.assumptions);
    const std::string sim = r.found ? value(r, r.simulated) : "-";
    const std::string ratio = r.found ? fmt::format("{:.2f}", r.ratio) : "-";
    if (markdown)
      out += fmt::format("| {} | {} | {} | {} | {} | [{}] |\n", r.figure, published(r), sim,
                         r.found ? ratio + "x" : "-", verdict(r), note);
    else
      out += fmt::format("{:<48} {:>10} {:>10} {:>7}  {} [{}]\n", r.figure, published(r), sim, ratio, verdict(r), note);
  }
  out += markdown ? "\n" : "assumptions:\n";
  for (std::size_t i = 0; i < notes.size(); ++i) out += fmt::format("  [{}] {}\n", i + 1, notes[i]);
  return out;
}

}  // namespace syncscope::model
