// Identity replay of traces (replay/replay.hpp): per trace, the median and max |step-time
// error| of the replay against the recorded steps, the graph's size, its round trip and
// what it could not build; plus the wall time of building and replaying the graph.
//
//   syncscope_bench_replay [--step-range GLOB] [--worst N] [--processes] TRACE[@GLOB]...
//
// --processes: a trace holding several processes with GPU work (one Nsight Systems report of a
// torchrun job) is split into one trace per process (trace/split_processes.hpp), each replayed
// on its own (its collectives' peers anchored, as a single rank's are); a row per process.
// TRACE@GLOB gives one trace its own step glob (default: --step-range, else ProfilerStep#*).
// --worst N lists each trace's N steps of largest |error| (name, start, measured, replayed),
// to find what a step the replay misses holds.
#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "syncscope/core/error.hpp"
#include "syncscope/core/version.hpp"
#include "syncscope/fixes/shipped.hpp"
#include "syncscope/io/trace_io.hpp"
#include "syncscope/replay/replay.hpp"
#include "syncscope/trace/split_processes.hpp"

namespace {

using namespace syncscope;

// One trace's row, its graph's problems and its `worst` steps.
void bench_one(const Trace& t, const std::string& name, const std::string& g, std::size_t worst) {
  const auto t0 = std::chrono::steady_clock::now();
  replay::ReplayOptions o;
  o.step_glob = g;
  const replay::ReplayGraph graph = replay::build_replay_graph(t, o);
  const replay::ReplayTimes times = replay::run_replay(graph);
  const auto steps = replay::replay_steps(graph, times);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::vector<double> err, dur;
  std::uint64_t unbuilt = 0;
  for (const auto& s : steps) {
    if (s.measured_ns > 0) err.push_back(std::fabs(s.error()));
    dur.push_back(static_cast<double>(s.measured_ns));
    unbuilt += s.unbuilt;
  }
  std::sort(err.begin(), err.end());
  std::sort(dur.begin(), dur.end());
  const double med = err.empty() ? 0 : err[err.size() / 2];
  const double mx = err.empty() ? 0 : err.back();
  std::printf("| %s | %zu%s | %.3f ms | %.2f%% | %.2f%% | %zu | %.1f us | %llu | %.3f s |\n", name.c_str(),
              steps.size(), graph.problems.no_steps ? " (whole trace)" : "",
              dur.empty() ? 0.0 : dur[dur.size() / 2] / 1e6, med * 100, mx * 100, graph.nodes.size(),
              static_cast<double>(graph.round_trip_ns) / 1e3, static_cast<unsigned long long>(unbuilt), wall);
  for (const auto& w : graph.problems.describe(g)) std::printf("  %s: %s\n", name.c_str(), w.c_str());
  std::vector<std::size_t> order(steps.size());
  for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    return std::fabs(steps[x].error()) > std::fabs(steps[y].error());
  });
  for (std::size_t k = 0; k < std::min(worst, order.size()); ++k) {
    const auto& s = steps[order[k]];
    std::printf("  %s: step %zu \"%s\": measured %.3f ms, replayed %.3f ms, error %+.2f%%\n", name.c_str(), order[k],
                s.name.c_str(), static_cast<double>(s.measured_ns) / 1e6, static_cast<double>(s.replayed_ns) / 1e6,
                s.error() * 100);
  }
}

}  // namespace

int main(int argc, char** argv) {
  using namespace syncscope;
  fixes::register_shipped_fixes();  // predict --trace's detectors (shipped.hpp)
  std::string glob = "ProfilerStep#*";
  std::vector<std::string> inputs;
  std::size_t worst = 0;
  bool split = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--step-range" && i + 1 < argc) glob = argv[++i];
    else if (a == "--processes") split = true;
    else if (a == "--worst" && i + 1 < argc) {
      const std::string v = argv[++i];
      const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), worst);
      if (ec != std::errc() || end != v.data() + v.size()) {
        std::fprintf(stderr, "syncscope_bench_replay: --worst takes a whole number, got \"%s\"\n", v.c_str());
        return 2;
      }
    } else inputs.push_back(a);
  }
  if (inputs.empty()) {
    std::fprintf(stderr,
                 "usage: syncscope_bench_replay [--step-range GLOB] [--worst N] [--processes] TRACE[@GLOB]...\n");
    return 2;
  }
  std::printf("syncscope_bench_replay, commit %s\n", build_commit());
  std::printf(
      "| trace | steps | median step | median abs error | max abs error | nodes | round trip | unbuilt | "
      "build+replay |\n|---|---|---|---|---|---|---|---|---|\n");
  int rc = 0;
  for (const std::string& in : inputs) {
    std::string path = in, g = glob;
    if (auto at = in.rfind('@'); at != std::string::npos && at > 0) {
      path = in.substr(0, at);
      g = in.substr(at + 1);
    }
    try {
      const Trace t = read_trace(path);
      const std::string name = path.substr(path.find_last_of('/') + 1);
      if (!split) {
        bench_one(t, name, g, worst);
        continue;
      }
      const ProcessSplit parts = split_processes(t);
      for (const auto& w : parts.warnings) std::printf("  %s: %s\n", name.c_str(), w.c_str());
      if (parts.processes.size() < 2) bench_one(t, name, g, worst);
      else
        for (const ProcessTrace& p : parts.processes)
          bench_one(p.trace, name + " pid " + std::to_string(p.pid) + " (rank " + std::to_string(p.rank) + ")", g,
                    worst);
    } catch (const Error& e) {
      std::fprintf(stderr, "%s: %s\n", in.c_str(), e.what());
      rc = 1;
    }
  }
  return rc;
}
