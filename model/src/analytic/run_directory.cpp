// timelines.json and sim_check.json of a results directory, and loading a whole directory
// for `report`.
#include "syncscope/model/run_directory.hpp"

#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>

#include "syncscope/core/error.hpp"
#include "syncscope/core/file_io.hpp"
#include "syncscope/io/trace_io.hpp"

namespace syncscope {

// ---- timelines.json -------------------------------------------------------------------

std::string timelines_to_json(const std::vector<TimelineStrip>& strips) {
  nlohmann::json j;
  j["schema_version"] = kTimelineSchemaVersion;
  j["strips"] = nlohmann::json::array();
  for (const auto& s : strips) {
    nlohmann::json o;
    o["scenario"] = s.scenario;
    o["fix"] = s.fix;
    o["variant"] = s.variant;
    o["window"] = s.window;
    o["range"] = s.range;
    o["duration_ns"] = s.duration_ns;
    o["lanes"] = s.lanes;
    o["syncs"] = s.syncs;
    o["bubble_ns"] = s.bubble_ns;
    // Compact rows: [lane index (-1: all GPU lanes), kind, start, end, label].
    nlohmann::json segs = nlohmann::json::array();
    for (const auto& g : s.segments) {
      auto it = std::find(s.lanes.begin(), s.lanes.end(), g.lane);
      const long lane = it == s.lanes.end() ? -1 : static_cast<long>(it - s.lanes.begin());
      segs.push_back({lane, g.kind, g.start, g.end, g.label});
    }
    o["segments"] = std::move(segs);
    j["strips"].push_back(std::move(o));
  }
  return j.dump();
}

std::vector<TimelineStrip> timelines_from_json(std::string_view text, std::string_view source) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(fmt::format("{}: not valid JSON at byte {}: {}", source, e.byte, e.what()));
  }
  auto need = [&](const nlohmann::json& o, const char* key, const std::string& path) -> const nlohmann::json& {
    if (!o.is_object() || !o.contains(key))
      throw InputError(fmt::format("{}: {}: missing field \"{}\"", source, path.empty() ? "/" : path, key));
    return o[key];
  };
  auto typed = [&](bool ok, const std::string& path, const char* what) {
    if (!ok) throw InputError(fmt::format("{}: {}: expected {}", source, path, what));
  };
  const auto& version = need(j, "schema_version", "");
  typed(version.is_number_integer(), "/schema_version", "an integer");
  if (version.get<int>() > kTimelineSchemaVersion)
    throw InputError(fmt::format("{}: schema_version {} is newer than this syncscope reads ({}): update syncscope",
                                 source, version.get<int>(), kTimelineSchemaVersion));
  const auto& arr = need(j, "strips", "");
  typed(arr.is_array(), "/strips", "an array");
  std::vector<TimelineStrip> out;
  for (std::size_t i = 0; i < arr.size(); ++i) {
    const std::string p = fmt::format("/strips/{}", i);
    const auto& o = arr[i];
    TimelineStrip s;
    auto str = [&](const char* key) {
      const auto& v = need(o, key, p);
      typed(v.is_string(), p + "/" + key, "a string");
      return v.get<std::string>();
    };
    auto integer = [&](const char* key) {
      const auto& v = need(o, key, p);
      typed(v.is_number_integer(), p + "/" + key, "an integer");
      return v.get<std::int64_t>();
    };
    s.scenario = str("scenario");
    s.fix = str("fix");
    s.variant = str("variant");
    s.window = str("window");
    if (o.contains("range")) s.range = str("range");
    s.duration_ns = integer("duration_ns");
    s.syncs = static_cast<std::uint64_t>(integer("syncs"));
    s.bubble_ns = integer("bubble_ns");
    const auto& lanes = need(o, "lanes", p);
    typed(lanes.is_array(), p + "/lanes", "an array of strings");
    for (std::size_t l = 0; l < lanes.size(); ++l) {
      typed(lanes[l].is_string(), fmt::format("{}/lanes/{}", p, l), "a string");
      s.lanes.push_back(lanes[l].get<std::string>());
    }
    const auto& segs = need(o, "segments", p);
    typed(segs.is_array(), p + "/segments", "an array");
    for (std::size_t g = 0; g < segs.size(); ++g) {
      const auto& r = segs[g];
      const std::string gp = fmt::format("{}/segments/{}", p, g);
      typed(r.is_array() && r.size() == 5 && r[0].is_number_integer() && r[1].is_string() &&
                r[2].is_number_integer() && r[3].is_number_integer() && r[4].is_string(),
            gp, "[lane, kind, start_ns, end_ns, label]");
      const auto lane = r[0].get<long>();
      typed(lane >= -1 && lane < static_cast<long>(s.lanes.size()), gp + "/0", "a lane index or -1");
      s.segments.push_back({lane < 0 ? "gpu" : s.lanes[static_cast<std::size_t>(lane)], r[1].get<std::string>(),
                            r[2].get<Ns>(), r[3].get<Ns>(), r[4].get<std::string>()});
    }
    out.push_back(std::move(s));
  }
  return out;
}

// ---- loading a results directory ----------------------------------------------------------

ReportRun load_report_run(const std::filesystem::path& dir) {
  ReportRun run;
  run.source = dir.string();
  run.results = read_results(dir);
  const auto tl = dir / "timelines.json";
  if (std::filesystem::exists(tl)) {
    run.timelines = timelines_from_json(read_file(tl), tl.string());
  } else {
    // Older or partial runs: rebuild the strips from the kept traces.
    std::map<std::string, bool> seen;
    for (const auto& v : run.results.variants) {
      if (v.trace_file.empty()) continue;
      const std::string key = v.scenario + "/" + v.fix + "/" + v.variant;
      if (seen[key]) continue;
      seen[key] = true;
      const auto path = dir / v.trace_file;
      if (!std::filesystem::exists(path)) continue;
      Trace t = read_trace(path);
      AnalysisOptions ao;
      TimelineOptions to;
      to.prefer_copies = v.fix == "offload";
      TimelineStrip s = extract_timeline(t, analyze(t, ao), to);
      s.scenario = v.scenario;
      s.fix = v.fix;
      s.variant = v.variant;
      run.timelines.push_back(std::move(s));
    }
  }
  const auto sc = dir / "sim_check.json";
  if (std::filesystem::exists(sc)) {
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(read_file(sc));
    } catch (const nlohmann::json::parse_error& e) {
      throw InputError(fmt::format("{}: not valid JSON at byte {}: {}", sc.string(), e.byte, e.what()));
    }
    if (!j.is_object() || !j.contains("checks") || !j["checks"].is_array())
      throw InputError(sc.string() + ": expected an object with a \"checks\" array");
    for (const auto& c : j["checks"]) {
      if (!c.is_object() || !c.contains("comparison") || !c["comparison"].contains("metrics")) continue;
      for (const auto& m : c["comparison"]["metrics"]) {
        ReportRun::SimCheckRow row;
        row.scenario = c.value("scenario", "");
        row.fix = c.value("fix", "");
        row.variant = c.value("variant", "");
        row.metric = m.value("metric", "");
        row.simulated = m.value("simulated", 0.0);
        row.measured = m.value("measured", 0.0);
        row.relative = m.value("relative", 0.0);
        run.sim_checks.push_back(row);
      }
    }
  }
  return run;
}

}  // namespace syncscope
