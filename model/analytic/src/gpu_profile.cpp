#include "syncscope/model/gpu_profile.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <set>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "gpu_profile_fitted.hpp"
#include "syncscope/core/bounds.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/core/file_io.hpp"
#include "syncscope/core/output_policy.hpp"
#include "syncscope/core/text.hpp"

namespace syncscope::model {

namespace {

namespace fs = std::filesystem;

enum class FieldType { String, Bool, Number, Int };

struct Field {
  const char* key;
  FieldType type;
  bool required;  // required fields must be present; required numbers must be > 0
};

// Descriptions and sources are sentences with a URL: 2048 characters is ten times the
// longest shipped one.
constexpr std::size_t kMaxTextChars = 2048;

// The YAML spelling of every GpuProfile member. Optional numbers may be 0 (unknown).
constexpr Field kFields[] = {
    {"schema_version", FieldType::Int, false},
    {"name", FieldType::String, true},
    {"description", FieldType::String, true},
    {"measured", FieldType::Bool, false},
    {"measured_on", FieldType::String, false},
    {"sync_round_trip_ns", FieldType::Number, true},
    {"launch_overhead_ns", FieldType::Number, true},
    {"launch_latency_ns", FieldType::Number, true},
    {"h2d_pinned_bytes_per_s", FieldType::Number, true},
    {"d2h_pinned_bytes_per_s", FieldType::Number, true},
    {"h2d_pageable_bytes_per_s", FieldType::Number, false},
    {"d2h_pageable_bytes_per_s", FieldType::Number, false},
    {"dram_bytes_per_s", FieldType::Number, true},
    {"bf16_flops_per_s", FieldType::Number, true},
    {"fp32_flops_per_s", FieldType::Number, false},
    {"sm_count", FieldType::Int, true},
    {"memory_bytes", FieldType::Number, true},
    {"unified_memory", FieldType::Bool, false},
    {"copy_compute_slowdown", FieldType::Number, false},
    // Fitted from a trace (calibrate --from-trace); optional.
    {"host_op_ns", FieldType::Number, false},
    {"host_launch_op_ns", FieldType::Number, false},
    {"host_after_launch_ns", FieldType::Number, false},
    {"host_range_ns", FieldType::Number, false},
    {"launches_per_op", FieldType::Number, false},
    {"plain_ops_per_launch_op", FieldType::Number, false},
    {"copy_latency_ns", FieldType::Number, false},
    {"kernel_floor_ns", FieldType::Number, false},
    {"copy_floor_ns", FieldType::Number, false},
    {"kernels", FieldType::String, false},     // a list; gpu_profile_fitted.cpp
    {"provenance", FieldType::String, false},  // a map; gpu_profile_fitted.cpp
    {"sources", FieldType::String, true},      // a map; checked separately
};

// Fields whose value needs a source (every measured or datasheet quantity).
bool needs_source(const Field& f) {
  std::string_view k = f.key;
  return f.type == FieldType::Number || k == "sm_count" || k == "unified_memory";
}

double* number_member(GpuProfile& p, std::string_view key) {
  if (key == "sync_round_trip_ns") return &p.sync_round_trip_ns;
  if (key == "launch_overhead_ns") return &p.launch_overhead_ns;
  if (key == "launch_latency_ns") return &p.launch_latency_ns;
  if (key == "h2d_pinned_bytes_per_s") return &p.h2d_pinned_bytes_per_s;
  if (key == "d2h_pinned_bytes_per_s") return &p.d2h_pinned_bytes_per_s;
  if (key == "h2d_pageable_bytes_per_s") return &p.h2d_pageable_bytes_per_s;
  if (key == "d2h_pageable_bytes_per_s") return &p.d2h_pageable_bytes_per_s;
  if (key == "dram_bytes_per_s") return &p.dram_bytes_per_s;
  if (key == "bf16_flops_per_s") return &p.bf16_flops_per_s;
  if (key == "fp32_flops_per_s") return &p.fp32_flops_per_s;
  if (key == "memory_bytes") return &p.memory_bytes;
  if (key == "copy_compute_slowdown") return &p.copy_compute_slowdown;
  if (key == "host_op_ns") return &p.host_op_ns;
  if (key == "host_launch_op_ns") return &p.host_launch_op_ns;
  if (key == "host_after_launch_ns") return &p.host_after_launch_ns;
  if (key == "host_range_ns") return &p.host_range_ns;
  if (key == "launches_per_op") return &p.launches_per_op;
  if (key == "plain_ops_per_launch_op") return &p.plain_ops_per_launch_op;
  if (key == "copy_latency_ns") return &p.copy_latency_ns;
  if (key == "kernel_floor_ns") return &p.kernel_floor_ns;
  if (key == "copy_floor_ns") return &p.copy_floor_ns;
  return nullptr;
}

std::string where(const std::string& file, const YAML::Node& node) {
  const YAML::Mark m = node.Mark();
  if (m.line < 0) return file;
  return fmt::format("{}:{}:{}", file, m.line + 1, m.column + 1);
}

[[noreturn]] void fail(const std::string& file, const YAML::Node& node, const std::string& field,
                       const std::string& what) {
  throw InputError(fmt::format("{}: GPU profile field '{}': {}", where(file, node), printable(field), what));
}

template <typename T>
T scalar_as(const std::string& file, const YAML::Node& node, const std::string& field, const char* expected) {
  if (!node.IsScalar()) fail(file, node, field, fmt::format("expected {}", expected));
  try {
    return node.as<T>();
  } catch (const YAML::Exception&) {
    fail(file, node, field, fmt::format("expected {}, got '{}'", expected, printable(node.Scalar())));
  }
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// Launches per op and plain ops per launching op, as fitted from a trace: an eager op launches
// a handful of kernels, and thousands of host-only ops per launch would be no GPU workload.
constexpr bounds::Range kOpsRatio{0, 10000, "an op launches a handful of kernels; 10000 per op is no eager op"};

// Physical sense of each number (core/bounds.hpp gives the reasons); optional fields may
// also be 0 (unknown).
const bounds::Range* number_bounds(std::string_view key, const char** unit) {
  *unit = "";
  if (key == "sync_round_trip_ns" || key == "launch_overhead_ns" || key == "launch_latency_ns") {
    *unit = "ns";
    return &bounds::kLatencyNs;
  }
  if (key.size() > 12 && key.substr(key.size() - 12) == "_bytes_per_s") {
    *unit = "bytes/s";
    return &bounds::kBytesPerS;
  }
  if (key == "bf16_flops_per_s" || key == "fp32_flops_per_s") {
    *unit = "FLOP/s";
    return &bounds::kFlopsPerS;
  }
  if (key == "memory_bytes") {
    *unit = "bytes";
    return &bounds::kMemoryBytes;
  }
  if (key == "copy_compute_slowdown") return &bounds::kSlowdown;
  // Fitted host costs, latencies and floors (calibrate --from-trace): latencies like the rest.
  if (key.size() > 3 && key.substr(key.size() - 3) == "_ns") {
    *unit = "ns";
    return &bounds::kLatencyNs;
  }
  if (key == "launches_per_op" || key == "plain_ops_per_launch_op") return &kOpsRatio;
  return nullptr;
}

GpuProfile parse_profile(const std::string& text, const std::string& file) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw InputError(fmt::format("{}:{}:{}: GPU profile is not valid YAML/JSON: {}", file, e.mark.line + 1,
                                 e.mark.column + 1, e.msg));
  }
  if (!root.IsMap()) throw InputError(fmt::format("{}: GPU profile must be a mapping of field: value", file));

  std::set<std::string> known;
  for (const auto& f : kFields) known.insert(f.key);
  std::set<std::string> seen;
  for (const auto& kv : root) {
    if (!kv.first.IsScalar()) fail(file, kv.first, "(key)", "expected a field name");
    std::string key = kv.first.Scalar();
    if (!seen.insert(key).second) fail(file, kv.first, key, "given twice; give it once");
    if (!known.count(key)) {
      std::string list;
      for (const auto& f : kFields) list += std::string(list.empty() ? "" : ", ") + f.key;
      fail(file, kv.first, key, fmt::format("unknown field (known fields: {})", list));
    }
  }

  GpuProfile p;
  for (const auto& f : kFields) {
    const std::string key = f.key;
    YAML::Node node = root[key];
    if (!node) {
      if (f.required) throw InputError(fmt::format("{}: GPU profile: missing required field '{}'", file, key));
      continue;
    }
    if (key == "sources") {
      if (!node.IsMap()) fail(file, node, key, "expected a mapping of field name -> source text");
      std::set<std::string> seen_sources;
      for (const auto& kv : node) {
        if (!kv.first.IsScalar()) fail(file, kv.first, "sources", "expected field names as keys");
        std::string k = kv.first.Scalar();
        if (!seen_sources.insert(k).second) fail(file, kv.first, "sources." + k, "given twice; give it once");
        if (!known.count(k) || k == "sources") fail(file, kv.first, "sources." + k, "names no profile field");
        p.sources[k] = scalar_as<std::string>(file, kv.second, "sources." + k, "a string");
        if (p.sources[k].empty()) fail(file, kv.second, "sources." + k, "empty source");
        if (auto problem = name_problem(p.sources[k], kMaxTextChars))
          fail(file, kv.second, "sources." + k, "the text " + *problem);
      }
      continue;
    }
    if (key == "kernels" || key == "provenance") {
      parse_fitted_section(file, key, node, p);
      continue;
    }
    switch (f.type) {
      case FieldType::String: {
        std::string v = scalar_as<std::string>(file, node, key, "a string");
        if (key == "name") p.name = v;
        else if (key == "description") p.description = v;
        else if (key == "measured_on") p.measured_on = v;
        if (f.required && v.empty()) fail(file, node, key, "must not be empty");
        // Printed in tables, traces and the report: printable UTF-8, a name at most 128
        // characters, other text at most kMaxTextChars.
        if (auto problem = name_problem(v, key == "name" ? bounds::kMaxNameChars : kMaxTextChars);
            problem && !v.empty())
          fail(file, node, key, "the text " + *problem);
        break;
      }
      case FieldType::Bool: {
        bool v = scalar_as<bool>(file, node, key, "true or false");
        if (key == "measured") p.measured = v;
        else if (key == "unified_memory") p.unified_memory = v;
        break;
      }
      case FieldType::Int: {
        double v = scalar_as<double>(file, node, key, "an integer");
        if (v != std::floor(v)) fail(file, node, key, "expected an integer");
        if (key == "schema_version") {
          if (v != kGpuProfileSchemaVersion)
            fail(file, node, key, fmt::format("this build reads schema_version {}", kGpuProfileSchemaVersion));
        } else if (key == "sm_count") {
          if (!bounds::kSmCount.contains(v))
            fail(file, node, key,
                 fmt::format("expected {}, got {}", bounds::describe_int(bounds::kSmCount), node.Scalar()));
          p.sm_count = static_cast<int>(v);
        }
        break;
      }
      case FieldType::Number: {
        double v = scalar_as<double>(file, node, key, "a number");
        if (!std::isfinite(v) || v < 0) fail(file, node, key, "must be a finite number >= 0");
        if (f.required && v <= 0) fail(file, node, key, "must be > 0");
        const char* unit = "";
        if (const bounds::Range* r = number_bounds(key, &unit);
            r != nullptr && !r->contains(v) && (f.required || v != 0))
          fail(file, node, key,
               fmt::format("expected {}{}, got {}", bounds::describe_number(*r, unit),
                           f.required ? "" : " or 0 (unknown)", node.Scalar()));
        *number_member(p, key) = v;
        break;
      }
    }
  }
  // Every quantity present needs its source (datasheet, docs/sources.md section, measurement or a
  // stated assumption).
  for (const auto& f : kFields) {
    if (!needs_source(f) || !root[f.key]) continue;
    if (!p.sources.count(f.key))
      throw InputError(
          fmt::format("{}: GPU profile: field '{}' has no entry in 'sources' (add sources.{}: "
                      "\"<datasheet URL/title>\", \"docs/sources.md#<anchor>\", \"measured: ...\" or "
                      "\"assumed: <reason>\")",
                      file, f.key, f.key));
  }
  return p;
}

std::vector<fs::path> profile_dirs() {
  std::vector<fs::path> dirs;
  if (const char* env = std::getenv("SYNCSCOPE_PROFILES_DIR"); env && *env) dirs.emplace_back(env);
#ifdef SYNCSCOPE_PROFILES_SOURCE_DIR
  dirs.emplace_back(SYNCSCOPE_PROFILES_SOURCE_DIR);
#endif
#ifdef SYNCSCOPE_PROFILES_INSTALL_DIR
  dirs.emplace_back(SYNCSCOPE_PROFILES_INSTALL_DIR);
#endif
  // Relocated installs: <prefix>/bin/syncscope -> <prefix>/share/syncscope/profiles.
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) dirs.push_back(exe.parent_path().parent_path() / "share" / "syncscope" / "profiles");
  return dirs;
}

fs::path shipped_dir() {
  for (const auto& d : profile_dirs()) {
    std::error_code ec;
    if (fs::is_directory(d, ec)) return d;
  }
  return {};
}

std::string yaml_quote(const std::string& s) {
  YAML::Emitter e;
  e << YAML::DoubleQuoted << s;
  return e.c_str();
}

std::string number_text(double v) {
  if (v == std::floor(v) && std::fabs(v) < 1e15) return fmt::format("{:.0f}", v);
  return fmt::format("{:.6g}", v);
}

}  // namespace

std::vector<std::string> shipped_gpu_profiles() {
  std::vector<std::string> names;
  fs::path dir = shipped_dir();
  if (dir.empty()) return names;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.is_regular_file() && e.path().extension() == ".yaml") names.push_back(e.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

GpuProfile parse_gpu_profile(const std::string& text, const std::string& source) {
  GpuProfile p = parse_profile(text, source);
  p.source = source;
  return p;
}

GpuProfile load_gpu_profile(const std::string& name_or_path) {
  std::error_code ec;
  fs::path p(name_or_path);
  const PathKind kind = name_or_path.empty() ? PathKind::Missing : path_kind(p);
  if (kind == PathKind::Directory)
    throw InputError(
        fmt::format("GPU profile '{}': is a directory; give a profile file (YAML, e.g. from syncscope "
                    "calibrate) or a shipped name",
                    name_or_path));
  // A regular file, or a pipe or FIFO (read once: <(...) works too).
  if (kind != PathKind::Missing) return parse_gpu_profile(read_file(p, bounds::kMaxConfigBytes), p.string());
  fs::path dir = shipped_dir();
  if (!dir.empty()) {
    for (const auto& e : fs::directory_iterator(dir)) {
      if (e.path().extension() == ".yaml" && lower(e.path().stem().string()) == lower(name_or_path))
        return parse_gpu_profile(read_file(e.path(), bounds::kMaxConfigBytes), e.path().string());
    }
  }
  std::string list;
  for (const auto& n : shipped_gpu_profiles()) list += (list.empty() ? "" : ", ") + n;
  throw InputError(
      fmt::format("GPU profile '{}': no such file and no shipped profile of that name (shipped: {}; "
                  "directory: {})",
                  name_or_path, list.empty() ? "none found" : list,
                  dir.empty() ? "not found, set SYNCSCOPE_PROFILES_DIR" : dir.string()));
}

std::string gpu_profile_to_yaml(const GpuProfile& p) {
  std::string out;
  out += "# syncscope GPU profile (model/README.md explains each field). Times in ns, rates in\n";
  out += "# bytes/s and FLOP/s, fractions 0..1.\n";
  out += fmt::format("schema_version: {}\n", kGpuProfileSchemaVersion);
  out += fmt::format("name: {}\n", yaml_quote(p.name));
  out += fmt::format("description: {}\n", yaml_quote(p.description));
  out += fmt::format("measured: {}\n", p.measured ? "true" : "false");
  if (!p.measured_on.empty()) out += fmt::format("measured_on: {}\n", yaml_quote(p.measured_on));
  GpuProfile copy = p;
  for (const auto& f : kFields) {
    std::string_view k = f.key;
    if (f.type == FieldType::Number) {
      double v = *number_member(copy, k);
      if (f.required || v != 0 || p.sources.count(f.key)) out += fmt::format("{}: {}\n", k, number_text(v));
    }
    if (k == "sm_count") out += fmt::format("sm_count: {}\n", p.sm_count);
    if (k == "unified_memory" && (p.unified_memory || p.sources.count(f.key)))
      out += fmt::format("unified_memory: {}\n", p.unified_memory ? "true" : "false");
  }
  out += fitted_sections_to_yaml(p);
  out += "sources:\n";
  for (const auto& [k, v] : p.sources) out += fmt::format("  {}: {}\n", k, yaml_quote(v));
  return out;
}

}  // namespace syncscope::model
