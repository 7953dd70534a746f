#include "syncscope/model/results.hpp"
#include "syncscope/fixes/fix_spec.hpp"

#include <cmath>
#include <set>
#include <string_view>
#include <type_traits>
#include <variant>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "syncscope/core/csv.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/core/file_io.hpp"
#include "syncscope/core/json_keys.hpp"

namespace syncscope::model {

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
  std::int64_t int64(const std::string& key, bool required, std::int64_t def = 0) {
    const json* v = get(key, required);
    if (!v) return def;
    if (!v->is_number_integer()) fail(at(key), fmt::format("expected an integer, got {}", v->type_name()));
    return v->get<std::int64_t>();
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

// ---- the per-variant fields, listed once -----------------------------------------------
// JSON writes and reads them in this order; the CSV writes every number and estimate as a
// metric row (identity columns: scenario, fix, variant, baseline, layers). `optional`
// fields are left out of JSON and CSV while unset (an Estimate with n = 0 and value 0), so
// results written before they existed still read and compare equal.
using Member = std::variant<std::string VariantResult::*, bool VariantResult::*, int VariantResult::*,
                            double VariantResult::*, Estimate VariantResult::*>;
enum class Column { Identity, Metric, None };
struct Field {
  const char* name;
  Member member;
  bool required;
  Column csv;
  bool optional = false;  // written only when set
};

const std::vector<Field>& variant_fields() {
  using V = VariantResult;
  static const std::vector<Field> fields = {
      {"scenario", &V::scenario, true, Column::Identity},
      {"fix", &V::fix, true, Column::Identity},
      {"variant", &V::variant, true, Column::Identity},
      {"baseline", &V::baseline, false, Column::Identity},
      {"layers", &V::layers, false, Column::Identity},
      {"step_time_ns", &V::step_time_ns, true, Column::Metric},
      {"syncs_per_step", &V::syncs_per_step, false, Column::Metric},
      {"sync_bubble_ns_per_step", &V::sync_bubble_ns_per_step, false, Column::Metric},
      {"sync_blocked_ns_per_step", &V::sync_blocked_ns_per_step, false, Column::Metric},
      {"h2d_overlap_fraction", &V::h2d_overlap_fraction, false, Column::Metric},
      {"d2h_overlap_fraction", &V::d2h_overlap_fraction, false, Column::Metric},
      {"observed_speedup", &V::measured_speedup, true, Column::Metric},  // by `mode` (schema 2)
      {"predicted_speedup", &V::predicted_speedup, false, Column::Metric},
      {"predicted_saving_ns", &V::predicted_saving_ns, false, Column::Metric},
      {"tolerance", &V::tolerance, false, Column::Metric},
      {"trace_file", &V::trace_file, false, Column::None},
      {"forward_time_ns", &V::forward_time_ns, false, Column::Metric, true},
      {"forward_speedup", &V::forward_speedup, false, Column::Metric, true},
  };
  return fields;
}

// ---- bounds by physical sense on every number read back --------------------------------
// A results file is data anyone with write access may have edited: a step time of -5 ns or
// -1e18 syncs per step is refused with its path, not titled in a report. Times: one training
// step or forward pass takes 0 to a day (86,400 s; a step longer than that is not a step we
// run); counts 0 to 10^9 per step; fractions 0 to 1; speedups (a ratio of two step times)
// 0 to 10^6; a saving is a difference of two times, so within +-1 day.
constexpr double kDayNs = 86400e9;
constexpr double kMaxCount = 1e9;
constexpr double kMaxSpeedup = 1e6;
struct NumberBound {
  const char* field;
  double lo, hi;
  const char* what;
};
constexpr NumberBound kBounds[] = {
    {"layers", 0, kMaxCount, "a count"},
    {"step_time_ns", 0, kDayNs, "a time in ns, 0 to a day"},
    {"syncs_per_step", 0, kMaxCount, "a count per step, 0 to 1e9"},
    {"sync_bubble_ns_per_step", 0, kDayNs, "a time in ns, 0 to a day"},
    {"sync_blocked_ns_per_step", 0, kDayNs, "a time in ns, 0 to a day"},
    {"h2d_overlap_fraction", 0, 1, "a fraction, 0 to 1"},
    {"d2h_overlap_fraction", 0, 1, "a fraction, 0 to 1"},
    {"observed_speedup", 0, kMaxSpeedup, "a ratio of step times, 0 to 1e6"},
    {"predicted_speedup", 0, kMaxSpeedup, "a ratio of step times, 0 to 1e6"},
    {"predicted_saving_ns", -kDayNs, kDayNs, "a time difference in ns, within a day"},
    {"tolerance", 0, 10, "a relative error, as the scenario allows it (0, 10]"},
    {"forward_time_ns", 0, kDayNs, "a time in ns, 0 to a day"},
    {"forward_speedup", 0, kMaxSpeedup, "a ratio of times, 0 to 1e6"},
};

void check_bound(const Reader& r, const std::string& path, const char* field, double v) {
  for (const auto& b : kBounds)
    if (std::string_view(b.field) == field && !(v >= b.lo && v <= b.hi))
      r.fail(path, fmt::format("{} is out of range: expected {} ([{}, {}])", v, b.what, b.lo, b.hi));
}

bool is_set(const Estimate& e) { return e.n != 0 || e.value != 0 || e.lo != 0 || e.hi != 0; }

json network_json(const NetworkInfo& n) {
  json j{{"model", n.model},
         {"parameters", n.parameters},
         {"trainable_parameters", n.trainable_parameters},
         {"tied_embeddings", n.tied_embeddings},
         {"training", n.training}};
  // Written only when known, so results written before the family and base size were
  // recorded still compare equal.
  if (n.base_parameters > 0) j["base_parameters"] = n.base_parameters;
  if (!n.family.empty()) j["family"] = n.family;
  return j;
}

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
    for (const Field& f : variant_fields()) {
      std::visit(
          [&](auto m) {
            using T = std::decay_t<decltype(v.*m)>;
            if constexpr (std::is_same_v<T, Estimate>) {
              if (!f.optional || is_set(v.*m)) o[f.name] = estimate_json(v.*m);
            } else {
              o[f.name] = v.*m;
            }
          },
          f.member);
      if (std::string_view(f.name) == "trace_file") {
        // model_parameters keeps its place after trace_file.
        o["model_parameters"] = json::object();
        for (const auto& [k, p] : v.model_parameters) o["model_parameters"][k] = p;
      }
    }
    if (v.network) o["network"] = network_json(*v.network);
    o["sync_removals"] = json::array();
    for (const auto& c : v.sync_removals)
      o["sync_removals"].push_back(json{{"cause", c.cause},
                                        {"syncs_per_step", c.syncs_per_step},
                                        {"removal_saving_ns", c.saving_ns ? json(*c.saving_ns) : json(nullptr)}});
    j["variants"].push_back(o);
  }
  j["notes"] = r.notes;
  // Notes quote paths and messages, which may hold invalid UTF-8: replaced (U+FFFD), never a
  // type_error after a whole run.
  return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

std::string results_to_csv(const RunResults& r) {
  CsvWriter w;
  // `model` is the last column, so readers indexing the older columns still work.
  w.row({"schema_version", "mode", "scenario", "fix", "variant", "baseline", "layers", "metric", "value", "lo", "hi",
         "n", "model"});
  const std::string sv = std::to_string(r.schema_version);
  for (const auto& v : r.variants) {
    auto row = [&](const std::string& metric, const std::string& value, std::optional<Estimate> e = std::nullopt) {
      w.row({sv, r.mode, v.scenario, v.fix, v.variant, v.baseline ? "true" : "false", std::to_string(v.layers), metric,
             value, e ? num_text(e->lo) : "", e ? num_text(e->hi) : "", e ? std::to_string(e->n) : "",
             v.network ? v.network->model : ""});
    };
    for (const Field& f : variant_fields()) {
      if (f.csv != Column::Metric) continue;
      std::visit(
          [&](auto m) {
            using T = std::decay_t<decltype(v.*m)>;
            if constexpr (std::is_same_v<T, Estimate>) {
              if (!f.optional || is_set(v.*m)) row(f.name, num_text((v.*m).value), v.*m);
            } else if constexpr (std::is_same_v<T, double> || std::is_same_v<T, int>) {
              row(f.name, num_text(static_cast<double>(v.*m)));
            }
          },
          f.member);
    }
    for (const auto& [k, p] : v.model_parameters) row("param:" + k, num_text(p));
    if (v.network) {
      row("network.parameters", std::to_string(v.network->parameters));
      row("network.trainable_parameters", std::to_string(v.network->trainable_parameters));
      if (v.network->base_parameters > 0) row("network.base_parameters", std::to_string(v.network->base_parameters));
      row("network.tied_embeddings", v.network->tied_embeddings ? "true" : "false");
      row("network.training", v.network->training);
    }
    // One row per removed cause; an empty value when no saving is claimed.
    for (const auto& c : v.sync_removals) {
      row("syncs_per_step:" + c.cause, num_text(c.syncs_per_step));
      row("removal_saving_ns:" + c.cause, c.saving_ns ? std::to_string(*c.saving_ns) : std::string());
    }
  }
  return w.str();
}

RunResults results_from_json(std::string_view text, std::string_view source_name) {
  json j;
  try {
    j = json::parse(text);
    refuse_duplicate_keys(text, source_name);  // after parse: valid JSON, so positions are exact
  } catch (const json::parse_error& e) {
    throw InputError(fmt::format("{}: not valid JSON at byte {}: {}", source_name, e.byte, e.what()));
  } catch (const json::exception& e) {  // e.g. a number beyond a double ("1e400")
    throw InputError(fmt::format("{}: not valid JSON: {}", source_name, e.what()));
  }
  Reader root(j, "$", source_name);
  RunResults r;
  r.schema_version = root.integer("schema_version", true);
  if (r.schema_version < 1 || r.schema_version > kResultsSchemaVersion)
    root.fail("$.schema_version",
              fmt::format("this build reads schema_version 1 to {} (got {}): use a matching syncscope",
                          kResultsSchemaVersion, r.schema_version));
  // Schema 2 differs from 3 only by lacking "sync_removals", which the reader takes as optional.
  if (r.schema_version == 2) r.schema_version = kResultsSchemaVersion;
  if (r.schema_version == 1) {
    // Schema 1 called every mode's speedup "measured_speedup"; read as schema 2's
    // "observed_speedup" (what observed it is `mode`).
    if (auto* vs = j.contains("variants") ? &j["variants"] : nullptr; vs && vs->is_array())
      for (auto& v : *vs)
        if (v.is_object() && v.contains("measured_speedup") && !v.contains("observed_speedup")) {
          v["observed_speedup"] = v["measured_speedup"];
          v.erase("measured_speedup");
        }
    r.schema_version = kResultsSchemaVersion;
  }
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
    for (const Field& f : variant_fields()) {
      std::visit(
          [&](auto m) {
            using T = std::decay_t<decltype(x.*m)>;
            if constexpr (std::is_same_v<T, std::string>) x.*m = v.str(f.name, f.required);
            else if constexpr (std::is_same_v<T, bool>) x.*m = v.boolean(f.name, f.required);
            else if constexpr (std::is_same_v<T, int>) x.*m = v.integer(f.name, f.required);
            else if constexpr (std::is_same_v<T, double>) x.*m = v.num(f.name, f.required, x.*m);
            else x.*m = read_estimate(v, f.name, f.required);
            if constexpr (std::is_same_v<T, int> || std::is_same_v<T, double>) {
              check_bound(v, v.at(f.name), f.name, static_cast<double>(x.*m));
            } else if constexpr (std::is_same_v<T, Estimate>) {
              const Estimate& e = x.*m;
              check_bound(v, v.at(f.name) + ".value", f.name, e.value);
              check_bound(v, v.at(f.name) + ".lo", f.name, e.lo);
              check_bound(v, v.at(f.name) + ".hi", f.name, e.hi);
            }
          },
          f.member);
    }
    // A registered fix's name (fix_spec.hpp).
    bool known_fix = false;
    std::string names;
    const auto& registry = fixes::fix_registry();
    for (std::size_t k = 0; k < registry.size(); ++k) {
      known_fix |= registry[k].name == x.fix;
      names += fmt::format("{}\"{}\"", k == 0 ? "" : k + 1 == registry.size() ? " or " : ", ", registry[k].name);
    }
    if (!known_fix) v.fail(v.at("fix"), fmt::format("expected {}, got \"{}\"", names, x.fix));
    if (!(x.tolerance > 0)) v.fail(v.at("tolerance"), "must be > 0 (a fraction, e.g. 0.10)");
    x.model_parameters = read_number_map(v, "model_parameters");
    if (const json* n = v.get("network", false)) {
      Reader nr(*n, v.at("network"), source_name);
      NetworkInfo ni;
      ni.model = nr.str("model", false);
      ni.parameters = nr.int64("parameters", true);
      ni.trainable_parameters = nr.int64("trainable_parameters", true);
      ni.tied_embeddings = nr.boolean("tied_embeddings", false);
      ni.training = nr.str("training", true);
      ni.base_parameters = nr.int64("base_parameters", false);
      ni.family = nr.str("family", false);
      nr.finish();
      if (ni.parameters < 0 || ni.trainable_parameters < 0 || ni.trainable_parameters > ni.parameters ||
          ni.base_parameters < 0)
        nr.fail(v.at("network"), "expected 0 <= trainable_parameters <= parameters");
      if (ni.training != "full" && ni.training != "lora" && ni.training != "qlora")
        nr.fail(v.at("network") + ".training", fmt::format("expected full, lora or qlora, got \"{}\"", ni.training));
      x.network = ni;
    }
    if (const json* sr = v.get("sync_removals", false)) {
      if (!sr->is_array()) v.fail(v.at("sync_removals"), "expected an array");
      for (std::size_t k = 0; k < sr->size(); ++k) {
        Reader c((*sr)[k], fmt::format("{}[{}]", v.at("sync_removals"), k), source_name);
        SyncRemoval sc;
        sc.cause = c.str("cause", true);
        sc.syncs_per_step = c.num("syncs_per_step", true);
        if (const json* s = c.get("removal_saving_ns", true); !s->is_null()) {
          if (s->is_number_integer()) {
            sc.saving_ns = c.int64("removal_saving_ns", true);
          } else {
            // Written as a double before integer ns (e.g. 1456000.0): rounded to the ns.
            const double d = c.num("removal_saving_ns", true);
            if (std::fabs(d) >= 9.2e18) c.fail(c.at("removal_saving_ns"), "out of range for integer ns");
            sc.saving_ns = std::llround(d);
          }
        }
        c.finish();
        if (!(sc.syncs_per_step >= 0 && sc.syncs_per_step <= kMaxCount))
          c.fail(c.at("syncs_per_step"),
                 fmt::format("{} is out of range: expected a count per step, 0 to 1e9", sc.syncs_per_step));
        if (sc.saving_ns &&
            !(static_cast<double>(*sc.saving_ns) >= -kDayNs && static_cast<double>(*sc.saving_ns) <= kDayNs))
          c.fail(c.at("removal_saving_ns"), fmt::format("{} is out of range: expected a time difference in ns, "
                                                        "within a day",
                                                        *sc.saving_ns));
        x.sync_removals.push_back(std::move(sc));
      }
    }
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

// results.json of the largest sweep we write is a few MB; 256 MiB bounds an edited one.
constexpr std::uint64_t kMaxResultsBytes = std::uint64_t{256} << 20;

RunResults read_results(const std::filesystem::path& path_or_dir) {
  std::filesystem::path p = path_or_dir;
  std::error_code ec;
  if (std::filesystem::is_directory(p, ec)) {
    p /= "results.json";
    if (!std::filesystem::exists(p, ec))
      throw InputError(
          fmt::format("{}: a run directory must hold results.json (from `syncscope run`)", path_or_dir.string()));
  }
  // Refused unless a regular file, before it is opened for reading (a FIFO there must not
  // hang validate or report).
  return results_from_json(read_regular_file(p, kMaxResultsBytes), p.string());
}

}  // namespace syncscope::model
