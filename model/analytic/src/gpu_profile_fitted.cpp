#include "gpu_profile_fitted.hpp"

#include <cmath>

#include <fmt/format.h>

#include "syncscope/core/error.hpp"

namespace syncscope::model {

namespace {

// A profile lists the kernels that matter, not every template instance a trace holds.
constexpr std::size_t kMaxKernels = 4096;

[[noreturn]] void bad(const std::string& file, const YAML::Node& node, const std::string& field,
                      const std::string& what) {
  const YAML::Mark m = node.Mark();
  const std::string at = m.line < 0 ? file : fmt::format("{}:{}:{}", file, m.line + 1, m.column + 1);
  throw InputError(fmt::format("{}: GPU profile field '{}': {}", at, field, what));
}

std::string text(const std::string& file, const YAML::Node& node, const std::string& field) {
  if (!node || !node.IsScalar()) bad(file, node, field, "expected a string");
  return node.Scalar();
}

double number(const std::string& file, const YAML::Node& node, const std::string& field) {
  if (!node || !node.IsScalar()) bad(file, node, field, "expected a number");
  double v = 0;
  try {
    v = node.as<double>();
  } catch (const YAML::Exception&) {
    bad(file, node, field, fmt::format("expected a number, got '{}'", node.Scalar()));
  }
  if (!std::isfinite(v) || v < 0) bad(file, node, field, "must be a finite number >= 0");
  return v;
}

std::string quoted(const std::string& s) {
  YAML::Emitter e;
  e << YAML::DoubleQuoted << s;
  return e.c_str();
}

}  // namespace

void parse_fitted_section(const std::string& file, const std::string& key, const YAML::Node& node, GpuProfile& p) {
  if (key == "provenance") {
    if (!node.IsMap()) bad(file, node, key, "expected a mapping of key -> text");
    for (const auto& kv : node) {
      const std::string k = kv.first.as<std::string>();
      p.provenance[k] = text(file, kv.second, "provenance." + k);
    }
    return;
  }
  if (!node.IsSequence()) bad(file, node, key, "expected a list of {name, class, median_ns, events, ...}");
  if (node.size() > kMaxKernels) bad(file, node, key, fmt::format("more than {} entries", kMaxKernels));
  for (std::size_t i = 0; i < node.size(); ++i) {
    const YAML::Node k = node[i];
    const std::string at = fmt::format("kernels[{}]", i);
    if (!k.IsMap()) bad(file, k, at, "expected a mapping {name, class, median_ns, events}");
    for (const auto& kv : k) {
      const std::string f = kv.first.as<std::string>();
      if (f != "name" && f != "class" && f != "median_ns" && f != "events" && f != "host_before_ns" &&
          f != "host_after_ns" && f != "host_events")
        bad(file, kv.first, at + "." + f,
            "unknown field (known: name, class, median_ns, events, host_before_ns, host_after_ns, host_events)");
    }
    FittedKernel fk;
    fk.name = text(file, k["name"], at + ".name");
    if (fk.name.empty()) bad(file, k["name"], at + ".name", "must not be empty");
    fk.kernel_class = k["class"] ? text(file, k["class"], at + ".class") : "other";
    fk.median_ns = number(file, k["median_ns"], at + ".median_ns");
    if (!(fk.median_ns > 0)) bad(file, k["median_ns"], at + ".median_ns", "must be > 0");
    const double events = number(file, k["events"], at + ".events");
    if (events != std::floor(events) || events < 1) bad(file, k["events"], at + ".events", "expected an integer >= 1");
    fk.events = static_cast<std::int64_t>(events);
    if (k["host_events"]) {
      const double he = number(file, k["host_events"], at + ".host_events");
      if (he != std::floor(he)) bad(file, k["host_events"], at + ".host_events", "expected an integer");
      fk.host_events = static_cast<std::int64_t>(he);
      fk.host_before_ns = k["host_before_ns"] ? number(file, k["host_before_ns"], at + ".host_before_ns") : 0;
      fk.host_after_ns = k["host_after_ns"] ? number(file, k["host_after_ns"], at + ".host_after_ns") : 0;
    }
    p.kernels.push_back(std::move(fk));
  }
}

std::string fitted_sections_to_yaml(const GpuProfile& p) {
  std::string out;
  if (!p.kernels.empty()) {
    out += "kernels:\n";
    for (const auto& k : p.kernels) {
      std::string host;
      if (k.host_events > 0)
        host = fmt::format(", host_before_ns: {:.0f}, host_after_ns: {:.0f}, host_events: {}", k.host_before_ns,
                           k.host_after_ns, k.host_events);
      out += fmt::format("  - {{name: {}, class: {}, median_ns: {:.0f}, events: {}{}}}\n", quoted(k.name),
                         quoted(k.kernel_class), k.median_ns, k.events, host);
    }
  }
  if (!p.provenance.empty()) {
    out += "provenance:\n";
    for (const auto& [k, v] : p.provenance) out += fmt::format("  {}: {}\n", k, quoted(v));
  }
  return out;
}

}  // namespace syncscope::model
