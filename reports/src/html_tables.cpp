// The report's tables: provenance, validation verdicts, speedups across runs, the numbers
// per variant, the model's parameters per fix (folded) and the simulator's check.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "html_format.hpp"
#include "html_parts.hpp"
#include "syncscope/fixes/fix_spec.hpp"

namespace syncscope::html {

Verdict verdict(const model::VariantResult& v) {
  Verdict out;
  if (v.baseline || !has_estimate(v.predicted_speedup) || !has_estimate(v.measured_speedup)) return out;
  out.applicable = true;
  out.error = (v.predicted_speedup.value - v.measured_speedup.value) / v.measured_speedup.value;
  out.within = std::fabs(out.error) <= v.tolerance;
  return out;
}

std::string verdict_html(const Verdict& v) {
  if (!v.applicable) return "<span class=\"na\">&ndash;</span>";
  return v.within ? "<span class=\"pass\">PASS</span>" : "<span class=\"fail\">FAIL</span>";
}

std::string variant_label(const model::VariantResult& v, bool show_layers) {
  std::string s = v.fix + "=" + v.variant;
  if (show_layers) s += fmt::format(" L={}", v.layers);
  return s;
}

// The models a run trained, in order of first appearance (a run names its model).
std::string run_models(const model::RunResults& r) {
  std::vector<std::string> names;
  for (const auto& v : r.variants)
    if (v.network && !v.network->model.empty() &&
        std::find(names.begin(), names.end(), v.network->model) == names.end())
      names.push_back(v.network->model);
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// The model's config file and its SHA-256 when --hf-config gave it ("" otherwise).
std::string model_config_text(const model::RunResults& r) {
  const auto path = r.env.extra.find("model_config");
  if (path == r.env.extra.end()) return "";
  const auto sha = r.env.extra.find("model_config_sha256");
  return path->second + (sha != r.env.extra.end() ? " (sha256 " + sha->second + ")" : "");
}

std::string provenance_line(const model::RunResults& r) {
  const std::string models = run_models(r);
  const std::string config = model_config_text(r);
  return fmt::format("{} on {} (profile {}){}, {} UTC, commit {}", r.mode,
                     r.env.gpu.empty() ? "unknown GPU" : r.env.gpu,
                     r.env.gpu_profile.empty() ? "none" : r.env.gpu_profile,
                     models.empty() ? "" : ", model " + models + (config.empty() ? "" : " from " + config),
                     r.env.date_utc, r.env.commit);
}

std::string provenance_section(const std::vector<model::ReportRun>& runs) {
  std::string h =
      "<h2 id=\"provenance\">Provenance</h2>\n<table class=\"provenance\"><thead><tr>"
      "<th class=\"l\">run</th><th class=\"l\">mode</th><th class=\"l\">model</th><th class=\"l\">model config</th>"
      "<th class=\"l\">GPU</th><th class=\"l\">GPU profile</th>"
      "<th class=\"l\">driver</th><th class=\"l\">CUDA</th><th class=\"l\">LibTorch</th><th class=\"l\">host</th>"
      "<th class=\"l\">date (UTC)</th><th class=\"l\">commit</th><th>schema</th></tr></thead><tbody>\n";
  for (const auto& run : runs) {
    const auto& r = run.results;
    h += fmt::format(
        "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td>"
        "<td class=\"l\">{}</td><td class=\"l\">{}</td><td "
        "class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td "
        "class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td></tr>\n",
        esc(run.source), esc(r.mode), esc(run_models(r)), esc(model_config_text(r)), esc(r.env.gpu),
        esc(r.env.gpu_profile), esc(r.env.driver), esc(r.env.cuda), esc(r.env.libtorch), esc(r.env.host),
        esc(r.env.date_utc), esc(r.env.commit), r.schema_version);
  }
  h += "</tbody></table>\n";
  // A GPU profile fitted from traces (calibrate --from-trace) says where it came from: run
  // copies its provenance into env.extra as gpu_profile_<key>.
  for (const auto& run : runs) {
    std::string fitted;
    for (const auto& [k, v] : run.results.env.extra)
      if (k.rfind("gpu_profile_", 0) == 0 && k != "gpu_profile_description" && k != "gpu_profile_calibrated" &&
          k != "gpu_profile_measured")  // the name before results schema 2
        fitted += fmt::format("{}{}: {}", fitted.empty() ? "" : "; ", esc(k.substr(12)), esc(v));
    if (!fitted.empty())
      h += "<p class=\"note profile-provenance\">" + esc(run.source) + ": GPU profile " +
           esc(run.results.env.gpu_profile) + " fitted from traces (" + fitted + ")</p>\n";
  }
  for (const auto& run : runs)
    for (const auto& n : run.results.notes) h += "<p class=\"note\">" + esc(run.source) + ": " + esc(n) + "</p>\n";
  return h;
}

std::string validation_section(const std::vector<model::ReportRun>& runs) {
  std::set<std::string> outcomes;
  for (const auto& r : runs) outcomes.insert(outcome_word(r.results));
  // One mode: the header names it. Several: each row's cell says which it is.
  const bool mixed = outcomes.size() > 1;
  const std::string what = mixed ? "measured or simulated" : outcomes.empty() ? "measured" : *outcomes.begin();
  std::string h = "<h2 id=\"validation\">Validation: predicted vs " + what + " speedup</h2>\n";
  if (mixed)
    h += "<p class=\"note\">This report mixes measured and simulated runs: each row says which its speedup is.</p>\n";
  h += "<table class=\"verdicts\"><thead><tr><th class=\"l\">mode</th><th class=\"l\">GPU</th><th "
       "class=\"l\">scenario</th><th class=\"l\">fix</th><th class=\"l\">variant</th><th>L</th><th>predicted "
       "speedup</th><th>" +
       (mixed ? std::string("measured or simulated speedup (per row)") : what + " speedup") +
       "</th><th>error</th><th>tolerance</th><th class=\"l\">verdict</th></tr></thead><tbody>\n";
  int compared = 0, failures = 0;
  double sum_abs = 0, max_abs = 0;
  for (const auto& run : runs) {
    const std::string word = outcome_word(run.results);
    for (const auto& v : run.results.variants) {
      if (v.baseline) continue;
      const Verdict vd = verdict(v);
      if (vd.applicable) {
        ++compared;
        sum_abs += std::fabs(vd.error);
        max_abs = std::max(max_abs, std::fabs(vd.error));
        failures += !vd.within;
      }
      h += fmt::format(
          "<tr data-outcome=\"{}\"><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td "
          "class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}{}</td><td>{}</td><td>{}</td><td "
          "class=\"l\">{}</td></tr>\n",
          word, esc(run.results.mode), esc(run.results.env.gpu), esc(v.scenario), esc(v.fix), esc(v.variant), v.layers,
          estimate_text(v.predicted_speedup), estimate_text(v.measured_speedup),
          mixed ? " <span class=\"mode-tag\">" + word + "</span>" : "",
          vd.applicable ? fmt::format("{:+.1f}%", 100 * vd.error) : "&ndash;",
          fmt::format("{:.0f}%", 100 * v.tolerance),
          vd.applicable ? verdict_html(vd) : "<span class=\"na\">no prediction</span>");
    }
  }
  h += "</tbody></table>\n";
  h += fmt::format(
      "<p class=\"summary\" data-failures=\"{}\">{} variant(s) compared; mean absolute error {:.1f}%, max {:.1f}%; "
      "{} outside tolerance.</p>\n",
      failures, compared, compared ? 100 * sum_abs / compared : 0.0, 100 * max_abs, failures);
  return h;
}

std::string cross_run_tables(const std::vector<model::ReportRun>& runs) {
  std::map<std::string, std::vector<std::size_t>> runs_by_scenario;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    std::set<std::string> names;
    for (const auto& v : runs[i].results.variants) names.insert(v.scenario);
    for (const auto& n : names) runs_by_scenario[n].push_back(i);
  }
  std::string h;
  for (const auto& [scen, idx] : runs_by_scenario) {
    if (idx.size() < 2) continue;
    h += "<h3>" + esc(scen) +
         " across runs: speedup, measured or simulated as each column says</h3>\n"
         "<table class=\"cross-gpu\"><thead><tr><th class=\"l\">fix=variant</th>";
    for (auto i : idx)
      h += "<th>" + esc(runs[i].results.env.gpu) + " (" + outcome_word(runs[i].results) + " speedup)</th>";
    h += "</tr></thead><tbody>\n";
    std::set<std::string> keys;
    for (auto i : idx)
      for (const auto& v : runs[i].results.variants)
        if (v.scenario == scen) keys.insert(v.fix + "=" + v.variant);
    for (const auto& k : keys) {
      h += "<tr><td class=\"l\">" + esc(k) + "</td>";
      for (auto i : idx) {
        std::string cell = "&ndash;";
        for (const auto& v : runs[i].results.variants)
          if (v.scenario == scen && v.fix + "=" + v.variant == k) cell = estimate_text(v.measured_speedup);
        h += "<td>" + cell + "</td>";
      }
      h += "</tr>\n";
    }
    h += "</tbody></table>\n";
  }
  return h;
}

std::string variants_table(const std::vector<const model::VariantResult*>& vs, const std::string& outcome) {
  // The columns from the traces are grouped under the run's mode; the model's apart.
  std::string h = fmt::format(
      "<table class=\"variants\" data-outcome=\"{0}\"><thead><tr><th colspan=\"3\"></th><th colspan=\"8\" "
      "class=\"group mode-{0}\">{0} (from the traces)</th><th class=\"group\">model</th><th colspan=\"2\"></th></tr>"
      "<tr><th class=\"l\">fix</th><th class=\"l\">variant</th><th>L</th><th>{0} step time (ms)</th><th>syncs / "
      "step</th><th>bubble (ms/step)</th><th>host blocked (ms/step)</th><th>H2D overlap</th><th>D2H overlap</th>"
      "<th>{0} speedup</th><th>{0} forward speedup</th><th>predicted speedup</th><th class=\"l\">verdict</th><th "
      "class=\"l\">trace</th></tr>"
      "</thead><tbody>\n",
      outcome);
  for (auto* v : vs) {
    model::Estimate st = v->step_time_ns;
    st.value /= 1e6;
    st.lo /= 1e6;
    st.hi /= 1e6;
    h += fmt::format(
        "<tr><td class=\"l\">{}</td><td class=\"l\">{}{}</td><td>{}</td><td>{}</td><td>{:g}</td><td>{:.2f}</td>"
        "<td>{:.2f}</td><td>{:.2f}</td><td>{:.2f}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"l\">{}</td><td "
        "class=\"l\">{}</td></tr>\n",
        esc(v->fix), esc(v->variant), v->baseline ? " (baseline)" : "", v->layers, estimate_text(st, 2),
        v->syncs_per_step, v->sync_bubble_ns_per_step / 1e6, v->sync_blocked_ns_per_step / 1e6, v->h2d_overlap_fraction,
        v->d2h_overlap_fraction, estimate_text(v->measured_speedup),
        // The forward pass alone (Unsloth's headline is a forward figure); a dash without one.
        estimate_text(v->forward_speedup), estimate_text(v->predicted_speedup), verdict_html(verdict(*v)),
        esc(v->trace_file));
  }
  return h + "</tbody></table>\n";
}

namespace {

// What the model's parameters mean (model/analytic/src/predict.cpp names them); the table
// shows a parameter without an entry by its name alone.
const std::map<std::string, std::string>& parameter_meanings() {
  static const std::map<std::string, std::string> m = {
      {"L", "the count the formula multiplies (see the note below), not always the depth"},
      {"s", "per-layer cost of the metadata rebuild (published form)"},
      {"host_per_layer", "host time per layer"},
      {"gpu_per_layer", "GPU time per layer"},
      {"rebuild_host", "metadata rebuild, host part"},
      {"rebuild_gpu", "metadata rebuild, GPU part"},
      {"round_trip", "sync round trip"},
      {"syncs_per_layer", "host syncs per layer"},
      {"c", "checkpoint reload copy per layer"},
      {"g", "compute per layer"},
      {"sigma", "copy/compute slowdown factor"},
      {"prefetch_depth", "layers prefetched ahead"},
      {"hidden_reloads", "reloads hidden behind compute"},
      {"E", "experts"},
      {"moe_layers", "MoE layers"},
      {"passes", "routing passes per layer"},
      {"q", "cost of one per-expert routing query"},
      {"kernel_delta", "kernel time difference of the fix"},
      {"gpu_busy_per_step", "GPU busy per step"},
      {"other_bubble_per_step", "GPU idle per step not from routing syncs"},
      {"host_after_per_step", "host time after the last routing sync"},
      {"fit_per_layer_saving", "saving per layer, fitted over the layer sweep"},
      {"fit_intercept_difference", "intercept difference of that fit"},
  };
  return m;
}

struct Param {
  std::string name;  // without the unit suffix
  bool time = false;
  // Per column (variant and depth): value and interval when given.
  std::map<std::size_t, std::array<double, 3>> values;  // value, lo, hi (lo = hi = value when exact)
};

// "gpu_ns_per_layer" -> ("gpu_per_layer", time); "s_ns" -> ("s", time); "E" -> ("E", no unit).
std::pair<std::string, bool> split_unit(std::string key) {
  if (key.size() > 3 && key.ends_with("_ns")) return {key.substr(0, key.size() - 3), true};
  if (const auto pos = key.find("_ns_"); pos != std::string::npos) return {key.erase(pos, 3), true};
  return {key, false};
}

}  // namespace

std::string parameters_details(const std::vector<const model::VariantResult*>& vs) {
  std::vector<std::string> fixes;
  for (auto* v : vs)
    if (!v->model_parameters.empty() && std::find(fixes.begin(), fixes.end(), v->fix) == fixes.end())
      fixes.push_back(v->fix);
  if (fixes.empty()) return "<p class=\"note\">No analytical model inputs recorded.</p>\n";
  std::string h = fmt::format(
      "<details class=\"parameters\"><summary>Inputs of the analytical model (its formula's terms, not the "
      "network's size): {} fix(es), with units and intervals</summary>\n",
      fixes.size());
  for (const auto& fix : fixes) {
    std::vector<const model::VariantResult*> cols;
    for (auto* v : vs)
      if (v->fix == fix && !v->model_parameters.empty()) cols.push_back(v);
    std::set<int> depths;
    for (auto* v : cols) depths.insert(v->layers);
    std::vector<Param> params;
    auto param = [&](const std::string& name, bool time) -> Param& {
      for (auto& p : params)
        if (p.name == name) return p;
      params.push_back({name, time, {}});
      return params.back();
    };
    for (std::size_t c = 0; c < cols.size(); ++c) {
      const auto& mp = cols[c]->model_parameters;
      for (const auto& [key, value] : mp) {
        if (key.size() > 3 && (key.ends_with("_lo") || key.ends_with("_hi")) && mp.count(key.substr(0, key.size() - 3)))
          continue;  // the interval of another entry
        const auto lo = mp.find(key + "_lo"), hi = mp.find(key + "_hi");
        auto [name, time] = split_unit(key);
        param(name, time).values[c] = {value, lo != mp.end() ? lo->second : value, hi != mp.end() ? hi->second : value};
      }
    }
    h += "<table class=\"parameters\" data-fix=\"" + esc(fix) + "\"><caption>" + esc(fix) +
         "</caption><thead><tr><th class=\"l\">parameter</th><th class=\"l\">meaning</th><th class=\"l\">unit</th>";
    for (auto* v : cols) h += "<th>" + esc(variant_label(*v, depths.size() > 1)) + "</th>";
    h += "</tr></thead><tbody>\n";
    for (const auto& p : params) {
      double largest = 0;
      for (const auto& [c, x] : p.values) largest = std::max(largest, std::fabs(x[0]));
      const double per = !p.time ? 1 : largest >= 1e6 ? 1e6 : largest >= 1e3 ? 1e3 : 1;
      const std::string unit = !p.time ? "&ndash;" : per == 1e6 ? "ms" : per == 1e3 ? "µs" : "ns";
      const auto meaning = parameter_meanings().find(p.name);
      h += "<tr><td class=\"l\"><code>" + esc(p.name) + "</code></td><td class=\"l\">" +
           (meaning != parameter_meanings().end() ? esc(meaning->second) : "") + "</td><td class=\"l\">" + unit +
           "</td>";
      for (std::size_t c = 0; c < cols.size(); ++c) {
        const auto it = p.values.find(c);
        if (it == p.values.end()) {
          h += "<td>&ndash;</td>";
          continue;
        }
        const auto& [value, lo, hi] = it->second;
        const auto show = [&](double x) { return p.time ? in_unit(x, per) : fmt::format("{:g}", x); };
        h += "<td>" + show(value);
        if (lo != value || hi != value) h += " <span class=\"ci\">[" + show(lo) + ", " + show(hi) + "]</span>";
        h += "</td>";
      }
      h += "</tr>\n";
    }
    h += "</tbody></table>\n";
    // L as the formula used it against the depth run, with the fix's reason when it knows
    // one (FixSpec::layer_count_note: packing's baseline rebuilds twice per layer).
    const std::optional<fixes::Fix> id = fixes::find_fix(fix);
    std::set<std::pair<double, int>> ls;
    for (std::size_t c = 0; c < cols.size(); ++c)
      if (const auto it = cols[c]->model_parameters.find("L"); it != cols[c]->model_parameters.end())
        ls.insert({it->second, cols[c]->layers});
    for (const auto& [L, layers] : ls)
      if (layers > 0 && L != layers) {
        std::optional<std::string> why;
        if (id && fixes::fix_spec(*id).layer_count_note) why = fixes::fix_spec(*id).layer_count_note(L, layers);
        h += fmt::format(
            "<p class=\"note\">{}: L = {:g} with {} decoder layers run: {:g} per layer ({}the count comes from the "
            "baseline's trace).</p>\n",
            esc(fix), L, layers, L / layers, why ? esc(*why) + "; " : "");
      }
  }
  return h + "</details>\n";
}

std::string sim_check_table(const std::vector<const model::ReportRun::SimCheckRow*>& checks) {
  if (checks.empty()) return "";
  std::string h =
      "<h3>Simulator vs measurement</h3>\n<table class=\"sim-check\"><thead><tr><th "
      "class=\"l\">fix=variant</th><th class=\"l\">metric</th><th>simulated</th><th>measured</th>"
      "<th>difference</th></tr></thead><tbody>\n";
  for (auto* c : checks)
    h += fmt::format(
        "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{:.6g}</td><td>{:.6g}</td><td>{:+.1f}%</td></tr>\n",
        esc(c->fix + "=" + c->variant), esc(c->metric), c->simulated, c->measured, 100 * c->relative);
  return h + "</tbody></table>\n";
}

}  // namespace syncscope::html
