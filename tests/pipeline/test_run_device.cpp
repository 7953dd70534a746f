// The measured path for real (label `device`): the pipeline loads this build's measured
// backend, runs a reduced tiny scenario on the GPU under the CUPTI tracer, labels it
// measured and checks the simulator against it. Without a CUDA device it reports skipped.
#include <gtest/gtest.h>

#include <iostream>

#include "pipeline_test_util.hpp"
#include "syncscope/pipeline/backend.hpp"
#include "syncscope/pipeline/run.hpp"
#include "test_paths.hpp"

namespace syncscope::pipeline {
namespace {

namespace fs = std::filesystem;

TEST(PipelineDevice, MeasuredRunThroughTheBackend) {
  const BackendLoad load = load_measured_backend(SYNCSCOPE_TEST_REAL_BACKEND);
  ASSERT_TRUE(load.backend) << load.error;
  std::string why;
  if (!load.backend->device_available(&why)) {
    std::cout << "skipped: no CUDA device (" << why << ")\n";
    GTEST_SKIP() << why;
  }
  test::TempDir dir;
  RunRequest r;
  r.scenarios = {test::write_scenario(dir.path(), "tiny.yaml").string()};
  r.device = "cuda";
  r.out = (dir / "res").string();
  r.backend_library = SYNCSCOPE_TEST_REAL_BACKEND;
  r.layers = 2;
  r.repeats = 3;
  r.warmup = 1;
  const RunOutcome o = run(r);
  EXPECT_EQ(o.results.mode, "measured");
  EXPECT_EQ(o.results.env.gpu.find("simulated"), std::string::npos) << o.results.env.gpu;
  EXPECT_FALSE(o.results.env.driver.empty());
  EXPECT_FALSE(o.results.env.libtorch.empty());
  ASSERT_EQ(o.results.variants.size(), 4u);
  for (const auto& v : o.results.variants) {
    EXPECT_GT(v.step_time_ns.value, 0) << v.variant;
    EXPECT_EQ(v.step_time_ns.n, 3) << v.variant;
    EXPECT_TRUE(fs::exists(o.out / v.trace_file)) << v.trace_file;
  }
  // rebuild reads the packing metadata back in every layer, cached once per batch.
  EXPECT_GT(o.results.variants[0].syncs_per_step, o.results.variants[1].syncs_per_step);
  EXPECT_TRUE(fs::exists(o.out / "sim_check.json"));
}

}  // namespace
}  // namespace syncscope::pipeline
