#include "syncscope/model/results.hpp"

#include <cmath>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "syncscope/core/csv.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/core/file_io.hpp"

namespace syncscope {

namespace {

using json = nlohmann::ordered_json;

json estimate_json(const Estimate& e) { return json{{"value", e.value}, {"lo", e.lo}, {"hi", e.hi}, {"n", e.n}}; }

// A strict reader over one JSON object: every access names the JSON path; unknown keys are
// errors (a misspelt field must not silently become a default).
class Reader {
 public:
  Reader(const json& j, std::string path, std::string_view source) : j_(j), path_(std::move(path)), source_(source) {
    if (!j_.is_object()) fail(path_, "expected an object");
  }

  [[noreturn]] void fail(const std::string& path, const std::string& what) const {
    throw InputError(fmt::format("{}: {}: {}", source_, path, what));
  }
  std::string at(const std::string& key) const { return path_ + "." + key; }

  const json* get(const std::string& key, bool required) {
    seen_.insert(key);
    auto it = j_.find(key);
    if (it == j_.end()) {
      if (required) fail(at(key), "missing required field");
      return nullptr;
    }
    return &*it;
  }

  std::string str(const std::string& key, bool required, std::string def = {}) {
    const json* v = get(key, required);
    if (!v) return def;
    if (!v->is_string()) fail(at(key), fmt::format("expected a string, got {}", v->type_name()));
    return v->get<std::string>();
  }
  double num(const std::string& key, bool required, double def = 0) {
    const json* v = get(key, required);
    if (!v) return def;
    if (!v->is_number()) fail(at(key), fmt::format("expected a number, got {}", v->type_name()));
    double d = v->get<double>();
    if (!std::isfinite(d)) fail(at(key), "expected a finite number");
    return d;
  }
  int integer(const std::string& key, bool required, int def = 0) {
    const json* v = get(key, required);
    if (!v) return def;
    if (!v->is_number_integer()) fail(at(key), fmt::format("expected an integer, got {}", v->type_name()));
    return v->get<int>();
  }
  bool boolean(const std::string& key, bool required, bool def = false) {
    const json* v = get(key, required);
    if (!v) return def;
    if (!v->is_boolean()) fail(at(key), fmt::format("expected true or false, got {}", v->type_name()));
    return v->get<bool>();
  }
  void finish() const {
    for (auto it = j_.begin(); it != j_.end(); ++it)
      if (!seen_.count(it.key())) fail(at(it.key()), "unknown field");
  }
  std::string_view source() const { return source_; }

 private:
  const json& j_;
  std::string path_;
  std::string_view source_;
  std::set<std::string> seen_;
};

Estimate read_estimate(Reader& parent, const std::string& key, bool required) {
  const json* v = parent.get(key, required);
  if (!v) return {};
  Reader r(*v, parent.at(key), parent.source());
  Estimate e;
  e.value = r.num("value", true);
  e.lo = r.num("lo", false, e.value);
  e.hi = r.num("hi", false, e.value);
  e.n = r.integer("n", false, 0);
  r.finish();
  if (!(e.lo <= e.value && e.value <= e.hi))
    r.fail(parent.at(key), fmt::format("interval [{}, {}] must contain the value {}", e.lo, e.hi, e.value));
  if (e.n < 0) r.fail(parent.at(key) + ".n", "must be >= 0");
  return e;
}

std::map<std::string, std::string> read_string_map(Reader& parent, const std::string& key) {
  std::map<std::string, std::string> m;
  const json* v = parent.get(key, false);
  if (!v) return m;
  if (!v->is_object()) parent.fail(parent.at(key), "expected an object of strings");
  for (auto it = v->begin(); it != v->end(); ++it) {
    if (!it->is_string()) parent.fail(parent.at(key) + "." + it.key(), "expected a string");
    m[it.key()] = it->get<std::string>();
  }
  return m;
}

std::map<std::string, double> read_number_map(Reader& parent, const std::string& key) {
  std::map<std::string, double> m;
  const json* v = parent.get(key, false);
  if (!v) return m;
  if (!v->is_object()) parent.fail(parent.at(key), "expected an object of numbers");
  for (auto it = v->begin(); it != v->end(); ++it) {
    if (!it->is_number()) parent.fail(parent.at(key) + "." + it.key(), "expected a number");
    m[it.key()] = it->get<double>();
  }
  return m;
}

std::string num_text(double v) { return fmt::format("{}", v); }

}  // namespace

std::string results_to_json(const RunResults& r) {
  json j;
  j["schema_version"] = r.schema_version;
  j["mode"] = r.mode;
  json env;
  env["gpu"] = r.env.gpu;
  env["gpu_profile"] = r.env.gpu_profile;
  env["driver"] = r.env.driver;
  env["cuda"] = r.env.cuda;
  env["libtorch"] = r.env.libtorch;
  env["host"] = r.env.host;
  env["commit"] = r.env.commit;
  env["date_utc"] = r.env.date_utc;
  env["extra"] = json::object();
  for (const auto& [k, v] : r.env.extra) env["extra"][k] = v;
  j["env"] = env;
  j["variants"] = json::array();
  for (const auto& v : r.variants) {
    json o;
    o["scenario"] = v.scenario;
    o["fix"] = v.fix;
    o["variant"] = v.variant;
    o["baseline"] = v.baseline;
    o["layers"] = v.layers;
    o["step_time_ns"] = estimate_json(v.step_time_ns);
    o["syncs_per_step"] = v.syncs_per_step;
    o["sync_bubble_ns_per_step"] = v.sync_bubble_ns_per_step;
    o["sync_blocked_ns_per_step"] = v.sync_blocked_ns_per_step;
    o["h2d_overlap_fraction"] = v.h2d_overlap_fraction;
    o["d2h_overlap_fraction"] = v.d2h_overlap_fraction;
    o["measured_speedup"] = estimate_json(v.measured_speedup);
    o["predicted_speedup"] = estimate_json(v.predicted_speedup);
    o["predicted_saving_ns"] = v.predicted_saving_ns;
    o["tolerance"] = v.tolerance;
    o["trace_file"] = v.trace_file;
    o["model_parameters"] = json::object();
    for (const auto& [k, p] : v.model_parameters) o["model_parameters"][k] = p;
    j["variants"].push_back(o);
  }
  j["notes"] = r.notes;
  // Notes quote paths and messages, which may hold invalid UTF-8: replaced (U+FFFD), never a
  // type_error after a whole run.
  return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

std::string results_to_csv(const RunResults& r) {
  CsvWriter w;
  w.row({"schema_version", "mode", "scenario", "fix", "variant", "baseline", "layers", "metric", "value", "lo", "hi",
         "n"});
  const std::string sv = std::to_string(r.schema_version);
  for (const auto& v : r.variants) {
    auto row = [&](const std::string& metric, double value, std::optional<Estimate> e = std::nullopt) {
      w.row({sv, r.mode, v.scenario, v.fix, v.variant, v.baseline ? "true" : "false", std::to_string(v.layers), metric,
             num_text(e ? e->value : value), e ? num_text(e->lo) : "", e ? num_text(e->hi) : "",
             e ? std::to_string(e->n) : ""});
    };
    row("step_time_ns", 0, v.step_time_ns);
    row("measured_speedup", 0, v.measured_speedup);
    row("predicted_speedup", 0, v.predicted_speedup);
    row("predicted_saving_ns", v.predicted_saving_ns);
    row("syncs_per_step", v.syncs_per_step);
    row("sync_bubble_ns_per_step", v.sync_bubble_ns_per_step);
    row("sync_blocked_ns_per_step", v.sync_blocked_ns_per_step);
    row("h2d_overlap_fraction", v.h2d_overlap_fraction);
    row("d2h_overlap_fraction", v.d2h_overlap_fraction);
    row("tolerance", v.tolerance);
    for (const auto& [k, p] : v.model_parameters) row("param:" + k, p);
  }
  return w.str();
}

RunResults results_from_json(std::string_view text, std::string_view source_name) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    throw InputError(fmt::format("{}: not valid JSON at byte {}: {}", source_name, e.byte, e.what()));
  } catch (const json::exception& e) {  // e.g. a number beyond a double ("1e400")
    throw InputError(fmt::format("{}: not valid JSON: {}", source_name, e.what()));
  }
  Reader root(j, "$", source_name);
  RunResults r;
  r.schema_version = root.integer("schema_version", true);
  if (r.schema_version != kResultsSchemaVersion)
    root.fail("$.schema_version", fmt::format("this build reads schema_version {} (got {}): use a matching syncscope",
                                              kResultsSchemaVersion, r.schema_version));
  r.mode = root.str("mode", true);
  if (r.mode != "measured" && r.mode != "simulated")
    root.fail("$.mode", fmt::format("expected \"measured\" or \"simulated\", got \"{}\"", r.mode));
  {
    const json* e = root.get("env", true);
    Reader env(*e, "$.env", source_name);
    r.env.gpu = env.str("gpu", false);
    r.env.gpu_profile = env.str("gpu_profile", false);
    r.env.driver = env.str("driver", false);
    r.env.cuda = env.str("cuda", false);
    r.env.libtorch = env.str("libtorch", false);
    r.env.host = env.str("host", false);
    r.env.commit = env.str("commit", false);
    r.env.date_utc = env.str("date_utc", false);
    r.env.extra = read_string_map(env, "extra");
    env.finish();
  }
  const json* vs = root.get("variants", true);
  if (!vs->is_array()) root.fail("$.variants", "expected an array");
  for (std::size_t i = 0; i < vs->size(); ++i) {
    Reader v((*vs)[i], fmt::format("$.variants[{}]", i), source_name);
    VariantResult x;
    x.scenario = v.str("scenario", true);
    x.fix = v.str("fix", true);
    if (x.fix != "packing" && x.fix != "offload" && x.fix != "moe_routing")
      v.fail(v.at("fix"), fmt::format("expected \"packing\", \"offload\" or \"moe_routing\", got \"{}\"", x.fix));
    x.variant = v.str("variant", true);
    x.baseline = v.boolean("baseline", false);
    x.layers = v.integer("layers", false);
    x.step_time_ns = read_estimate(v, "step_time_ns", true);
    x.syncs_per_step = v.num("syncs_per_step", false);
    x.sync_bubble_ns_per_step = v.num("sync_bubble_ns_per_step", false);
    x.sync_blocked_ns_per_step = v.num("sync_blocked_ns_per_step", false);
    x.h2d_overlap_fraction = v.num("h2d_overlap_fraction", false);
    x.d2h_overlap_fraction = v.num("d2h_overlap_fraction", false);
    x.measured_speedup = read_estimate(v, "measured_speedup", true);
    x.predicted_speedup = read_estimate(v, "predicted_speedup", false);
    x.predicted_saving_ns = v.num("predicted_saving_ns", false);
    x.tolerance = v.num("tolerance", false, 0.10);
    if (!(x.tolerance > 0)) v.fail(v.at("tolerance"), "must be > 0 (a fraction, e.g. 0.10)");
    x.trace_file = v.str("trace_file", false);
    x.model_parameters = read_number_map(v, "model_parameters");
    v.finish();
    r.variants.push_back(std::move(x));
  }
  if (const json* n = root.get("notes", false)) {
    if (!n->is_array()) root.fail("$.notes", "expected an array of strings");
    for (std::size_t i = 0; i < n->size(); ++i) {
      if (!(*n)[i].is_string()) root.fail(fmt::format("$.notes[{}]", i), "expected a string");
      r.notes.push_back((*n)[i].get<std::string>());
    }
  }
  root.finish();
  return r;
}

RunResults read_results(const std::filesystem::path& path_or_dir) {
  std::filesystem::path p = path_or_dir;
  std::error_code ec;
  if (std::filesystem::is_directory(p, ec)) {
    p /= "results.json";
    if (!std::filesystem::exists(p, ec))
      throw InputError(fmt::format("{}: a run directory must hold results.json (from `syncscope run`)",
                                   path_or_dir.string()));
  }
  return results_from_json(read_file(p), p.string());
}

}  // namespace syncscope
