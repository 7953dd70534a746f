// timelines.json and sim_check.json of a results directory, and loading a whole directory
// for `report`.
#include "syncscope/model/run_directory.hpp"
#include "syncscope/fixes/fix_spec.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <type_traits>

#include "syncscope/core/error.hpp"
#include "syncscope/core/file_io.hpp"
#include "syncscope/core/json_keys.hpp"
#include "syncscope/io/trace_io.hpp"

namespace syncscope::model {

// ---- timelines.json -------------------------------------------------------------------

namespace {

// The strip's step's critical path (analysis/critical_path.hpp), in the names and units of
// `analyze --format json`'s critical_path object, without its fractions and totals' counts.
nlohmann::json critical_path_to_json(const CriticalPath& c) {
  nlohmann::json top = nlohmann::json::array();
  for (const CriticalRun& r : c.top)
    top.push_back({{"kind", std::string(critical_kind_name(r.kind))},
                   {"where", r.where},
                   {"what", r.what},
                   {"start_ns", r.start_ns},
                   {"duration_ns", r.duration_ns}});
  return {{"length_ns", c.length_ns},   {"host_ns", c.host_ns},           {"gpu_ns", c.gpu_ns},
          {"launch_ns", c.launch_ns},   {"sync_wait_ns", c.sync_wait_ns}, {"other_ns", c.other_ns},
          {"sync_edges", c.sync_edges}, {"top", std::move(top)}};
}

}  // namespace

std::string timelines_to_json(const std::vector<TimelineStrip>& strips) {
  nlohmann::json j;
  j["schema_version"] = kTimelineSchemaVersion;
  j["strips"] = nlohmann::json::array();
  for (const auto& s : strips) {
    nlohmann::json o = {{"scenario", s.scenario}, {"fix", s.fix},     {"variant", s.variant},
                        {"window", s.window},     {"range", s.range}, {"duration_ns", s.duration_ns},
                        {"lanes", s.lanes},       {"syncs", s.syncs}, {"bubble_ns", s.bubble_ns}};
    // Compact rows: [lane index (-1: all GPU lanes), kind, start, end, label].
    nlohmann::json segs = nlohmann::json::array();
    for (const auto& g : s.segments) {
      auto it = std::find(s.lanes.begin(), s.lanes.end(), g.lane);
      const long lane = it == s.lanes.end() ? -1 : static_cast<long>(it - s.lanes.begin());
      segs.push_back({lane, g.kind, g.start, g.end, g.label});
    }
    o["segments"] = std::move(segs);
    if (s.step) {
      const StepBreakdown& b = *s.step;
      o["step"] = {{"step", b.step},
                   {"steps", b.steps},
                   {"device", b.device},
                   {"duration_ns", b.duration_ns},
                   {"compute_ns", b.compute_ns},
                   {"copy_ns", b.copy_ns},
                   {"sync_bubble_ns", b.sync_bubble_ns},
                   {"other_idle_ns", b.other_idle_ns},
                   {"host_blocked_ns", b.host_blocked_ns},
                   {"syncs", b.syncs}};
      const IdleBreakdown& i = b.idle;  // the step's idle attribution (analysis/idle.hpp)
      o["step"]["idle"] = {{"window_ns", i.window_ns},
                           {"busy_ns", i.busy_ns},
                           {"sync_bubble_ns", i.sync_bubble_ns},
                           {"host_wait_ns", i.host_wait_ns},
                           {"dependency_wait_ns", i.dependency_wait_ns},
                           {"other_ns", i.other_ns},
                           {"verdict", std::string(verdict_name(b.verdict))}};
    }
    if (s.critical_path) o["critical_path"] = critical_path_to_json(*s.critical_path);
    j["strips"].push_back(std::move(o));
  }
  return j.dump();
}

namespace {
// Bounds like every other reader's (a 3M-segment file made a 299 MB report). We
// write at most TimelineOptions::max_segments (1500) per strip plus the API rows, one strip
// per scenario, fix and variant: these are far above that and far below what exhausts memory.
constexpr std::size_t kMaxStrips = 4096;
constexpr std::size_t kMaxSegmentsPerStrip = 20000;
constexpr std::uint64_t kMaxTimelinesBytes = std::uint64_t{64} << 20;
constexpr std::size_t kMaxCriticalRuns = 64;  // we write kCriticalTopRuns (5)

std::optional<CriticalKind> critical_kind_of(const std::string& name) {
  for (auto k :
       {CriticalKind::Host, CriticalKind::Gpu, CriticalKind::Launch, CriticalKind::SyncWait, CriticalKind::Other})
    if (critical_kind_name(k) == name) return k;
  return std::nullopt;
}
}  // namespace

namespace {

// Bounds by physical sense (results.cpp says why): a time in a strip is 0 to a day, a count
// 0 to 1e9.
constexpr std::int64_t kStripDayNs = 86'400'000'000'000;
constexpr std::int64_t kStripMaxCount = 1'000'000'000;

// Typed access to timelines.json, every error naming the file and the JSON path.
struct TimelineReader {
  std::string_view source;

  const nlohmann::json& need(const nlohmann::json& o, const char* key, const std::string& path) const {
    if (!o.is_object() || !o.contains(key))
      throw InputError(fmt::format("{}: {}: missing field \"{}\"", source, path.empty() ? "/" : path, key));
    return o[key];
  }
  void typed(bool ok, const std::string& path, const char* what) const {
    if (!ok) throw InputError(fmt::format("{}: {}: expected {}", source, path, what));
  }
  std::string str(const nlohmann::json& obj, const char* key, const std::string& path) const {
    const auto& v = need(obj, key, path);
    typed(v.is_string(), path + "/" + key, "a string");
    return v.get<std::string>();
  }
  std::int64_t integer(const nlohmann::json& obj, const char* key, const std::string& path) const {
    const auto& v = need(obj, key, path);
    typed(v.is_number_integer(), path + "/" + key, "an integer");
    return v.get<std::int64_t>();
  }
  // An integer in [0, hi]: a time (hi a day) or a count (hi 1e9).
  std::int64_t bounded(const nlohmann::json& obj, const char* key, const std::string& path, std::int64_t hi) const {
    const std::int64_t v = integer(obj, key, path);
    typed(v >= 0 && v <= hi, path + "/" + key,
          hi == kStripDayNs ? "a non-negative integer: a time in ns, at most a day (86400 s)"
                            : "a non-negative integer: a count, at most 1e9");
    return v;
  }
  std::int64_t time(const nlohmann::json& obj, const char* key, const std::string& path) const {
    return bounded(obj, key, path, kStripDayNs);
  }
  std::int64_t count(const nlohmann::json& obj, const char* key, const std::string& path) const {
    return bounded(obj, key, path, kStripMaxCount);
  }

  void segments(const nlohmann::json& o, const std::string& p, TimelineStrip& s) const {
    const auto& lanes = need(o, "lanes", p);
    typed(lanes.is_array(), p + "/lanes", "an array of strings");
    for (std::size_t l = 0; l < lanes.size(); ++l) {
      typed(lanes[l].is_string(), fmt::format("{}/lanes/{}", p, l), "a string");
      s.lanes.push_back(lanes[l].get<std::string>());
    }
    const auto& segs = need(o, "segments", p);
    typed(segs.is_array(), p + "/segments", "an array");
    if (segs.size() > kMaxSegmentsPerStrip)
      throw InputError(
          fmt::format("{}: {}/segments: {} segments, more than the {} a strip may hold (a run writes "
                      "about 1500); is it the file a run wrote?",
                      source, p, segs.size(), kMaxSegmentsPerStrip));
    for (std::size_t g = 0; g < segs.size(); ++g) {
      const auto& r = segs[g];
      const std::string gp = fmt::format("{}/segments/{}", p, g);
      typed(r.is_array() && r.size() == 5 && r[0].is_number_integer() && r[1].is_string() && r[2].is_number_integer() &&
                r[3].is_number_integer() && r[4].is_string(),
            gp, "[lane, kind, start_ns, end_ns, label]");
      const auto lane = r[0].get<long>();
      typed(lane >= -1 && lane < static_cast<long>(s.lanes.size()), gp + "/0", "a lane index or -1");
      s.segments.push_back({lane < 0 ? "gpu" : s.lanes[static_cast<std::size_t>(lane)], r[1].get<std::string>(),
                            r[2].get<Ns>(), r[3].get<Ns>(), r[4].get<std::string>()});
    }
  }

  StepBreakdown step(const nlohmann::json& st, const std::string& sp) const {
    typed(st.is_object(), sp, "an object");
    StepBreakdown b;
    b.step = str(st, "step", sp);
    b.steps = static_cast<std::uint64_t>(count(st, "steps", sp));
    const std::int64_t device = integer(st, "device", sp);
    typed(device >= -1 && device <= 1'000'000, sp + "/device", "a device id (-1: none)");
    b.device = static_cast<std::int32_t>(device);
    b.duration_ns = time(st, "duration_ns", sp);
    b.compute_ns = time(st, "compute_ns", sp);
    b.copy_ns = time(st, "copy_ns", sp);
    b.sync_bubble_ns = time(st, "sync_bubble_ns", sp);
    b.other_idle_ns = time(st, "other_idle_ns", sp);
    b.host_blocked_ns = time(st, "host_blocked_ns", sp);
    b.syncs = static_cast<std::uint64_t>(count(st, "syncs", sp));
    if (st.contains("idle")) {  // optional: older timelines have no idle attribution
      const auto& id = st["idle"];
      const std::string ip = sp + "/idle";
      typed(id.is_object(), ip, "an object");
      b.idle.window_ns = time(id, "window_ns", ip);
      b.idle.busy_ns = time(id, "busy_ns", ip);
      b.idle.sync_bubble_ns = time(id, "sync_bubble_ns", ip);
      b.idle.host_wait_ns = time(id, "host_wait_ns", ip);
      b.idle.dependency_wait_ns = time(id, "dependency_wait_ns", ip);
      b.idle.other_ns = time(id, "other_ns", ip);
      b.verdict = verdict_of(b.idle);
    }
    return b;
  }

  CriticalPath critical_path(const nlohmann::json& c, const std::string& cp) const {
    typed(c.is_object(), cp, "an object");
    CriticalPath path;
    path.length_ns = time(c, "length_ns", cp);
    path.host_ns = time(c, "host_ns", cp);
    path.gpu_ns = time(c, "gpu_ns", cp);
    path.launch_ns = time(c, "launch_ns", cp);
    path.sync_wait_ns = time(c, "sync_wait_ns", cp);
    path.other_ns = time(c, "other_ns", cp);
    path.sync_edges = static_cast<std::uint64_t>(count(c, "sync_edges", cp));
    // The shares cut the path's time line: anything else is not a file we wrote. Taken off
    // the length one by one, so hostile values cannot overflow the sum.
    Ns left = path.length_ns;
    bool sums = true;
    for (Ns part : {path.host_ns, path.gpu_ns, path.launch_ns, path.sync_wait_ns, path.other_ns}) {
      sums = sums && part <= left;
      if (sums) left -= part;
    }
    typed(sums && left == 0, cp, "host_ns + gpu_ns + launch_ns + sync_wait_ns + other_ns == length_ns");
    const auto& top = need(c, "top", cp);
    typed(top.is_array() && top.size() <= kMaxCriticalRuns, cp + "/top",
          fmt::format("an array of at most {} runs", kMaxCriticalRuns).c_str());
    for (std::size_t r = 0; r < top.size(); ++r) {
      const std::string rp = fmt::format("{}/top/{}", cp, r);
      CriticalRun run;
      const auto kind = critical_kind_of(str(top[r], "kind", rp));
      typed(kind.has_value(), rp + "/kind", "one of host, gpu, launch, sync_wait, other");
      run.kind = *kind;
      run.where = str(top[r], "where", rp);
      run.what = str(top[r], "what", rp);
      run.start_ns = time(top[r], "start_ns", rp);
      run.duration_ns = time(top[r], "duration_ns", rp);
      path.top.push_back(std::move(run));
    }
    return path;
  }

  TimelineStrip strip(const nlohmann::json& o, const std::string& p) const {
    TimelineStrip s;
    s.scenario = str(o, "scenario", p);
    s.fix = str(o, "fix", p);
    s.variant = str(o, "variant", p);
    s.window = str(o, "window", p);
    if (o.contains("range")) s.range = str(o, "range", p);
    s.duration_ns = time(o, "duration_ns", p);
    s.syncs = static_cast<std::uint64_t>(count(o, "syncs", p));
    s.bubble_ns = time(o, "bubble_ns", p);
    segments(o, p, s);
    if (o.contains("step")) s.step = step(o["step"], p + "/step");  // schema 2
    // optional: older timelines have none
    if (o.contains("critical_path")) s.critical_path = critical_path(o["critical_path"], p + "/critical_path");
    return s;
  }
};

}  // namespace

std::vector<TimelineStrip> timelines_from_json(std::string_view text, std::string_view source) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(fmt::format("{}: not valid JSON at byte {}: {}", source, e.byte, e.what()));
  } catch (const nlohmann::json::exception& e) {  // out_of_range 406: a number beyond a double ("1e400")
    throw InputError(fmt::format("{}: not valid JSON: {}", source, e.what()));
  }
  refuse_duplicate_keys(text, source);
  const TimelineReader rd{source};
  const auto& version = rd.need(j, "schema_version", "");
  rd.typed(version.is_number_integer(), "/schema_version", "an integer");
  if (version.get<int>() > kTimelineSchemaVersion)
    throw InputError(fmt::format("{}: schema_version {} is newer than this syncscope reads ({}): update syncscope",
                                 source, version.get<int>(), kTimelineSchemaVersion));
  const auto& arr = rd.need(j, "strips", "");
  rd.typed(arr.is_array(), "/strips", "an array");
  if (arr.size() > kMaxStrips)
    throw InputError(
        fmt::format("{}: /strips: {} strips, more than the {} syncscope writes at most; is it the file a "
                    "run wrote?",
                    source, arr.size(), kMaxStrips));
  std::vector<TimelineStrip> out;
  for (std::size_t i = 0; i < arr.size(); ++i) out.push_back(rd.strip(arr[i], fmt::format("/strips/{}", i)));
  return out;
}

// ---- loading a results directory ----------------------------------------------------------

namespace {

namespace fs = std::filesystem;

// The file `name` of run directory `dir` (a name from results.json, or one of our own file
// names): refused unless it stays inside `dir`, by its spelling and after following
// symbolic links, so `report` never reads (and embeds) a file the run does not hold.
// `what` says where the name came from, for the message.
fs::path inside_run(const fs::path& dir, const std::string& name, const std::string& what) {
  const fs::path rel(name);
  const std::string why =
      fmt::format(": report reads only files inside the run directories it is given ({})", dir.string());
  if (rel.has_root_path()) throw InputError(fmt::format("{} \"{}\" is an absolute path{}", what, name, why));
  const fs::path norm = rel.lexically_normal();
  if (norm.empty() || *norm.begin() == "..")
    throw InputError(fmt::format("{} \"{}\" leads outside the run directory{}", what, name, why));
  std::error_code ec;
  const fs::path root = fs::canonical(dir, ec);
  if (ec) throw InputError(fmt::format("{}: cannot resolve the run directory: {}", dir.string(), ec.message()));
  const fs::path full = fs::weakly_canonical(root / norm, ec);
  if (ec) throw InputError(fmt::format("{} \"{}\": cannot resolve: {}", what, name, ec.message()));
  if (std::mismatch(root.begin(), root.end(), full.begin(), full.end()).first != root.end())
    throw InputError(fmt::format("{} \"{}\" resolves through a symbolic link to {}, outside the run directory{}", what,
                                 name, full.string(), why));
  if (fs::exists(full, ec) && !fs::is_regular_file(full, ec))
    throw InputError(fmt::format("{} \"{}\" is not a regular file{}", what, name, why));
  return dir / norm;
}

// A field of a sim_check.json entry: absent is the default, present must have the type.
template <typename T>
T field(const nlohmann::json& o, const char* key, T fallback, const std::string& path) {
  if (!o.contains(key)) return fallback;
  const auto& v = o[key];
  const bool ok = std::is_same_v<T, std::string> ? v.is_string() : v.is_number();
  if (!ok)
    throw InputError(
        fmt::format("{}/{}: expected {}", path, key, std::is_same_v<T, std::string> ? "a string" : "a number"));
  return v.get<T>();
}

std::vector<ReportRun::SimCheckRow> read_sim_checks(const fs::path& sc) {
  nlohmann::json j;
  try {
    const std::string text = read_regular_file(sc, kMaxTimelinesBytes);
    j = nlohmann::json::parse(text);
    refuse_duplicate_keys(text, sc.string());
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(fmt::format("{}: not valid JSON at byte {}: {}", sc.string(), e.byte, e.what()));
  } catch (const nlohmann::json::exception& e) {  // out_of_range 406: a number beyond a double ("1e400")
    throw InputError(fmt::format("{}: not valid JSON: {}", sc.string(), e.what()));
  }
  if (!j.is_object() || !j.contains("checks") || !j["checks"].is_array())
    throw InputError(sc.string() + ": expected an object with a \"checks\" array");
  std::vector<ReportRun::SimCheckRow> rows;
  const auto& checks = j["checks"];
  for (std::size_t i = 0; i < checks.size(); ++i) {
    const auto& c = checks[i];
    if (!c.is_object() || !c.contains("comparison") || !c["comparison"].is_object() ||
        !c["comparison"].contains("metrics") || !c["comparison"]["metrics"].is_array())
      continue;
    const std::string cp = fmt::format("{}: /checks/{}", sc.string(), i);
    const auto& metrics = c["comparison"]["metrics"];
    for (std::size_t k = 0; k < metrics.size(); ++k) {
      const auto& m = metrics[k];
      const std::string mp = fmt::format("{}/comparison/metrics/{}", cp, k);
      if (!m.is_object()) throw InputError(mp + ": expected an object");
      ReportRun::SimCheckRow row;
      row.scenario = field<std::string>(c, "scenario", "", cp);
      row.fix = field<std::string>(c, "fix", "", cp);
      row.variant = field<std::string>(c, "variant", "", cp);
      row.metric = field<std::string>(m, "metric", "", mp);
      row.simulated = field<double>(m, "simulated", 0.0, mp);
      row.measured = field<double>(m, "measured", 0.0, mp);
      row.relative = field<double>(m, "relative", 0.0, mp);
      rows.push_back(row);
    }
  }
  return rows;
}

}  // namespace

ReportRun load_report_run(const fs::path& dir, AddCriticalPaths add_critical_paths) {
  ReportRun run;
  run.source = dir.string();
  const fs::path results_file = inside_run(dir, "results.json", dir.string() + ":");
  run.results = read_results(dir);
  // Every trace named is checked, read or not: a results.json naming a file elsewhere is
  // not a run directory `report` accepts.
  std::vector<fs::path> traces(run.results.variants.size());
  for (std::size_t i = 0; i < traces.size(); ++i) {
    const auto& v = run.results.variants[i];
    if (v.trace_file.empty()) continue;
    traces[i] = inside_run(dir, v.trace_file, fmt::format("{}: /variants/{}/trace_file", results_file.string(), i));
  }
  const auto tl = inside_run(dir, "timelines.json", dir.string() + ":");
  if (fs::exists(tl)) {
    run.timelines = timelines_from_json(read_regular_file(tl, kMaxTimelinesBytes), tl.string());
  } else {
    // Older or partial runs: rebuild the strips from the kept traces.
    std::map<std::string, bool> seen;
    for (std::size_t i = 0; i < traces.size(); ++i) {
      const auto& v = run.results.variants[i];
      if (traces[i].empty()) continue;
      const std::string key = v.scenario + "/" + v.fix + "/" + v.variant;
      if (seen[key]) continue;
      seen[key] = true;
      if (!fs::exists(traces[i])) continue;
      Trace t = read_trace(traces[i]);
      AnalysisOptions ao;
      TimelineOptions to;
      const auto fix = fixes::find_fix(v.fix);
      to.prefer_copies = fix && fixes::fix_spec(*fix).timeline_shows_copies;
      AnalysisResult a = analyze(t, ao);
      TimelineStrip s = extract_timeline(t, a, to);
      // The step's critical path, as a run computes it (pipeline/src/summary.cpp).
      if (add_critical_paths && s.step && !a.steps.empty()) {
        add_critical_paths(t, a);
        const WindowStats& w = a.steps[a.steps.size() / 2];
        if (w.name == s.step->step) s.critical_path = w.critical_path;
      }
      s.scenario = v.scenario;
      s.fix = v.fix;
      s.variant = v.variant;
      run.timelines.push_back(std::move(s));
    }
  }
  const auto sc = inside_run(dir, "sim_check.json", dir.string() + ":");
  if (fs::exists(sc)) run.sim_checks = read_sim_checks(sc);
  return run;
}

}  // namespace syncscope::model
