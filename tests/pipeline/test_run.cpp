// The whole pipeline called directly: simulated runs, the fallback when the measured backend
// is missing, and the measured path through a stand-in backend (fake_backend.cpp).
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>

#include "pipeline_test_util.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/core/file_io.hpp"
#include "syncscope/pipeline/run.hpp"
#include "syncscope/pipeline/summary.hpp"
#include "test_paths.hpp"

namespace syncscope::pipeline {
namespace {

namespace fs = std::filesystem;

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

bool any_note(const model::RunResults& r, const std::string& part) {
  for (const auto& n : r.notes)
    if (contains(n, part)) return true;
  return false;
}

class PipelineRun : public ::testing::Test {
 protected:
  RunRequest request(const std::string& device, const std::string& out) {
    RunRequest r;
    r.scenarios = {test::write_scenario(dir_.path(), "tiny.yaml").string()};
    r.device = device;
    r.out = (dir_ / out).string();
    return r;
  }
  test::TempDir dir_;
};

TEST_F(PipelineRun, SimulatedRunPublishesLabelledResults) {
  RunRequest r = request("sim", "res");
  r.gpu_profile = "H200";
  const RunOutcome o = run(r);
  EXPECT_EQ(o.out, dir_ / "res");
  EXPECT_EQ(o.traces, 3u);  // packing=rebuild and offload=double are one step
  EXPECT_EQ(o.results.mode, "simulated");
  EXPECT_EQ(o.results.env.gpu, "H200");
  EXPECT_EQ(o.results.env.gpu_profile, "H200");
  EXPECT_EQ(o.results.env.extra.at("simulator"), "syncscope-sim");
  ASSERT_EQ(o.results.variants.size(), 4u);
  for (const auto& v : o.results.variants) {
    EXPECT_GT(v.step_time_ns.value, 0);
    EXPECT_EQ(v.step_time_ns.n, 2);
    EXPECT_TRUE(fs::exists(o.out / v.trace_file)) << v.trace_file;
  }
  EXPECT_EQ(o.results.variants[0].trace_file, o.results.variants[3].trace_file);
  for (const auto& v : o.results.variants) EXPECT_TRUE(v.network.has_value()) << v.fix << "=" << v.variant;
  // packing=cached is predicted from the baseline's trace; the tiny model's reloads are too
  // small for the offload evidence (>= 1 MiB copies), which the notes say.
  EXPECT_GT(o.results.variants[1].predicted_speedup.value, 1);
  EXPECT_EQ(o.results.variants[3].predicted_speedup.value, 0);
  EXPECT_TRUE(any_note(o.results, "tiny offload=double L=4: no prediction: ")) << o.results.notes.size();
  for (const char* f : {"results.json", "results.csv", "timelines.json", "report.html"})
    EXPECT_TRUE(fs::exists(o.out / f)) << f;
  EXPECT_FALSE(fs::exists(o.out / "sim_check.json"));
  EXPECT_EQ(model::read_results(o.out).variants.size(), 4u);
  // Each variant's worst sync causes and what removing them saves, by replaying its trace: the
  // rebuild baseline's per-layer rebuild reads come first and save step time; the cached
  // variant keeps one rebuild per step, fewer of the same syncs.
  const auto& rebuild = o.results.variants[0].sync_removals;
  const auto& cached = o.results.variants[1].sync_removals;
  ASSERT_FALSE(rebuild.empty());
  ASSERT_TRUE(rebuild.front().saving_ns.has_value());
  EXPECT_GT(*rebuild.front().saving_ns, 0);
  EXPECT_LE(rebuild.size(), kRunReplayCauses);
  ASSERT_FALSE(cached.empty());
  double rebuild_syncs = 0, cached_syncs = 0;
  for (const auto& c : rebuild) rebuild_syncs += c.syncs_per_step;
  for (const auto& c : cached) cached_syncs += c.syncs_per_step;
  EXPECT_GT(rebuild_syncs, cached_syncs);
  EXPECT_EQ(model::read_results(o.out).variants[0].sync_removals.size(), rebuild.size());
  {
    const std::string html = read_file(o.out / "report.html");
    EXPECT_TRUE(contains(html, "<table class=\"removals\">")) << "the report's If removed table";
    EXPECT_TRUE(contains(html, rebuild.front().cause));
  }
  EXPECT_EQ(o.validation.mode, "simulated");
  EXPECT_EQ(o.validation.compared, 1);
  for (const auto& e : fs::directory_iterator(dir_.path()))
    EXPECT_FALSE(contains(e.path().filename().string(), ".partial-")) << e.path();

  // The simulator is deterministic: the same inputs give the same numbers.
  RunRequest again = request("sim", "res");
  EXPECT_THROW(run(again), InputError);  // exists, no --force
  again.force = true;
  const RunOutcome o2 = run(again);
  for (std::size_t i = 0; i < o.results.variants.size(); ++i) {
    EXPECT_EQ(o2.results.variants[i].step_time_ns.value, o.results.variants[i].step_time_ns.value);
    EXPECT_EQ(o2.results.variants[i].predicted_speedup.value, o.results.variants[i].predicted_speedup.value);
  }
}

TEST_F(PipelineRun, AutoWithoutTheBackendFallsBackAndNamesTheFile) {
  RunRequest r = request("auto", "res");
  r.backend_library = "/nonexistent-syncscope/libsyncscope_backend.so";
  r.repeats = 1;
  const RunOutcome o = run(r);
  EXPECT_EQ(o.results.mode, "simulated");
  EXPECT_TRUE(any_note(o.results,
                       "no CUDA device (the measured backend libsyncscope_backend.so was not found (looked "
                       "for /nonexistent-syncscope/libsyncscope_backend.so"))
      << o.results.notes.front();
  EXPECT_TRUE(any_note(o.results, "running the simulator with GPU profile H200"));

  RunRequest cuda = request("cuda", "res-cuda");
  cuda.backend_library = r.backend_library;
  try {
    run(cuda);
    FAIL() << "--device cuda ran without a backend";
  } catch (const InputError&) {
    FAIL() << "a missing backend is not bad input";
  } catch (const Error& e) {
    EXPECT_TRUE(contains(e.what(),
                         "--device cuda is unavailable: the measured backend libsyncscope_backend.so was "
                         "not found (looked for /nonexistent-syncscope/libsyncscope_backend.so"))
        << e.what();
  }
  EXPECT_FALSE(fs::exists(dir_ / "res-cuda"));
}

TEST_F(PipelineRun, BadDeviceIsInputError) {
  RunRequest r = request("tpu", "res");
  EXPECT_THROW(run(r), InputError);
  EXPECT_FALSE(fs::exists(dir_ / "res"));
}

TEST_F(PipelineRun, MeasuredThroughTheBackendIsLabelledAndCheckedAgainstTheSimulator) {
  RunRequest sim = request("sim", "sim");
  const RunOutcome simulated = run(sim);
  RunRequest r = request("auto", "measured");
  r.backend_library = SYNCSCOPE_TEST_FAKE_BACKEND;
  const RunOutcome o = run(r);
  EXPECT_EQ(o.results.mode, "measured");
  EXPECT_EQ(o.results.env.gpu, "Fake NVIDIA H200 (test backend)");
  EXPECT_EQ(o.results.env.gpu_profile, "H200");  // matched to the device's name
  EXPECT_TRUE(any_note(o.results, "predictions use the shipped GPU profile H200"));
  EXPECT_EQ(o.results.env.driver, "fake-driver");
  EXPECT_EQ(o.results.env.cuda, "fake-cuda");
  EXPECT_EQ(o.results.env.libtorch, "fake-torch");
  EXPECT_EQ(o.results.env.extra.at("tracer.fake_backend"), "1");
  // The stand-in's "measurement" is the H200 simulation with every timestamp doubled and
  // one extra zero-length sync per step (fake_backend.cpp): twice the simulated step time
  // (exact: doubling integers, and the median of doubled values is the doubled median) and
  // one more sync point per step.
  ASSERT_EQ(o.results.variants.size(), simulated.results.variants.size());
  for (std::size_t i = 0; i < o.results.variants.size(); ++i) {
    EXPECT_EQ(o.results.variants[i].step_time_ns.value, 2 * simulated.results.variants[i].step_time_ns.value) << i;
    EXPECT_EQ(o.results.variants[i].syncs_per_step, simulated.results.variants[i].syncs_per_step + 1) << i;
  }
  // Each measured trace was checked against its simulation, and the comparison finds
  // exactly those differences (difference = simulated - measured; relative = difference /
  // measured for times and counts, the difference itself for fractions; sim/compare.hpp):
  // every time per step is half the measured one (relative -1/2), the sync count one lower,
  // the overlap fractions, kernel and copy counts unchanged.
  const auto checks = nlohmann::json::parse(read_file(o.out / "sim_check.json"));
  EXPECT_EQ(checks["mode"], "measured");
  ASSERT_EQ(checks["checks"].size(), 4u);
  for (const auto& c : checks["checks"]) {
    SCOPED_TRACE(c.dump());
    EXPECT_EQ(c["comparison"]["gpu_profile"], "H200");
    std::map<std::string, nlohmann::json> m;
    for (const auto& x : c["comparison"]["metrics"]) m[x["metric"].get<std::string>()] = x;
    ASSERT_EQ(m.size(), 9u);
    for (const char* ns :
         {"step_time_ns", "gpu_busy_ns_per_step", "sync_blocked_ns_per_step", "sync_bubble_ns_per_step"}) {
      const double simulated_ns = m[ns]["simulated"].get<double>();
      EXPECT_EQ(m[ns]["measured"].get<double>(), 2 * simulated_ns) << ns;
      EXPECT_EQ(m[ns]["relative"].get<double>(), simulated_ns == 0 ? 0.0 : -0.5) << ns;
    }
    EXPECT_GT(m["step_time_ns"]["simulated"].get<double>(), 0);
    EXPECT_GT(m["sync_bubble_ns_per_step"]["simulated"].get<double>(), 0);  // so -1/2 was computed
    const double syncs = m["syncs_per_step"]["simulated"].get<double>();
    EXPECT_GE(syncs, 1);  // at least the loss read
    EXPECT_EQ(m["syncs_per_step"]["measured"].get<double>(), syncs + 1);
    EXPECT_EQ(m["syncs_per_step"]["difference"].get<double>(), -1);
    EXPECT_DOUBLE_EQ(m["syncs_per_step"]["relative"].get<double>(), -1 / (syncs + 1));
    for (const char* same : {"h2d_overlap_fraction", "d2h_overlap_fraction", "kernels_per_step", "memcpys_per_step"}) {
      EXPECT_EQ(m[same]["difference"].get<double>(), 0) << same;
      EXPECT_EQ(m[same]["relative"].get<double>(), 0) << same;
    }
    // The largest |relative| is the halved times' 1/2 (the count's 1/(syncs+1) is at most that).
    EXPECT_EQ(c["comparison"]["max_abs_relative"].get<double>(), 0.5);
  }
}

TEST_F(PipelineRun, BackendWithoutADeviceFallsBackWithItsReason) {
  ::setenv("SYNCSCOPE_FAKE_BACKEND_NO_DEVICE", "1", 1);
  RunRequest r = request("auto", "res");
  r.backend_library = SYNCSCOPE_TEST_FAKE_BACKEND;
  r.repeats = 1;
  const RunOutcome o = run(r);
  RunRequest cuda = request("cuda", "res-cuda");
  cuda.backend_library = SYNCSCOPE_TEST_FAKE_BACKEND;
  EXPECT_THROW(run(cuda), Error);
  ::unsetenv("SYNCSCOPE_FAKE_BACKEND_NO_DEVICE");
  EXPECT_EQ(o.results.mode, "simulated");
  EXPECT_TRUE(any_note(o.results, "no CUDA device (fake backend: no device (SYNCSCOPE_FAKE_BACKEND_NO_DEVICE=1))"));
}

TEST_F(PipelineRun, ComparingWithAnotherRunWritesSimCheck) {
  RunRequest first = request("sim", "a");
  first.repeats = 1;
  run(first);
  RunRequest r = request("sim", "b");
  r.repeats = 1;
  r.gpu_profile = "B200";
  r.compare_measured = (dir_ / "a").string();
  const RunOutcome o = run(r);
  EXPECT_TRUE(any_note(o.results, "that run is simulated, not measured"));
  const auto checks = nlohmann::json::parse(read_file(o.out / "sim_check.json"));
  EXPECT_EQ(checks["mode"], "simulated");
  EXPECT_EQ(checks["checks"].size(), 4u);
  EXPECT_EQ(checks["checks"][0]["comparison"]["gpu_profile"], "B200");
  RunRequest measured = request("auto", "c");
  measured.backend_library = SYNCSCOPE_TEST_FAKE_BACKEND;
  measured.compare_measured = (dir_ / "a").string();
  EXPECT_THROW(run(measured), InputError);  // needs the simulator
}

TEST_F(PipelineRun, LayerSweepIsFitted) {
  std::string text = test::tiny_scenario();
  text += "  layer_sweep: [2, 3, 4]\n";
  RunRequest r;
  r.scenarios = {test::write_scenario(dir_.path(), "sweep.yaml", text).string()};
  r.device = "sim";
  r.out = (dir_ / "sweep").string();
  r.repeats = 1;
  const RunOutcome o = run(r);
  EXPECT_EQ(o.results.variants.size(), 12u);
  int fitted = 0;
  for (const auto& v : o.results.variants) {
    if (!v.model_parameters.count("fit_per_layer_saving_ns")) continue;
    ++fitted;
    const double slope = v.model_parameters.at("fit_per_layer_saving_ns");
    const double intercept = v.model_parameters.at("fit_intercept_difference_ns");
    if (v.variant == "cached") {
      // By hand: with Unsloth's checkpointing every layer rebuilds the metadata in the
      // forward and again in its recompute, 2L rebuilds per step; the cache builds once.
      // With s the time one rebuild costs, the saving is (2L - 1) s = 2s L - s: the fitted
      // per-layer saving (slope) is 2s and the intercept difference a_base - a_fix is -s,
      // i.e. minus half the slope. (The fit sees T_base - T_fix as b L + a; a plain
      // "(L-1) s" would give an intercept of minus the slope instead.)
      EXPECT_GT(slope, 0);
      EXPECT_NEAR(intercept, -slope / 2, 1.0) << "slope " << slope;  // ns: the fit's rounding
    } else {
      // offload=double against single: tiny's layer inputs are 512 tokens x 256 hidden x at
      // most 4 bytes = 512 KiB, under the 2 MiB below which Unsloth's checkpointer keeps an
      // input on the device (kernels/README.md): nothing reloads, so double buffering saves
      // nothing at any depth: slope and intercept 0.
      EXPECT_EQ(v.variant, "double");
      EXPECT_NEAR(slope, 0, 1.0);
      EXPECT_NEAR(intercept, 0, 1.0);
    }
  }
  EXPECT_EQ(fitted, 6);  // cached and double at three depths
  EXPECT_TRUE(fs::exists(o.out / "traces/tiny__packing-cached__L3.json.gz"));
}

}  // namespace
}  // namespace syncscope::pipeline
