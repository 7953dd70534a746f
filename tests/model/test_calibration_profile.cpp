// The non-CUDA half of `syncscope calibrate`: a measurement becomes a profile the strict
// loader accepts (the microbenchmarks themselves need a GPU).
#include <gtest/gtest.h>

#include "syncscope/core/error.hpp"
#include "syncscope/core/file_io.hpp"
#include "syncscope/model/calibration_profile.hpp"
#include "test_paths.hpp"

namespace {

// Plausible numbers for the shape of the data only; no GPU measured them.
syncscope::model::CalibrationMeasurements sample() {
  syncscope::model::CalibrationMeasurements m;
  m.gpu_name = "Test GPU";
  m.driver_version = "580.159.04";
  m.cuda_runtime = "13.0";
  m.cuda_driver_api = "13.0";
  m.compute_major = 9;
  m.sm_count = 132;
  m.memory_bytes = 150754820096.0;
  m.sync_round_trip_ns = 20000;
  m.launch_overhead_ns = 2500;
  m.launch_latency_ns = 6000;
  m.h2d_pinned_bytes_per_s = 5.0e10;
  m.d2h_pinned_bytes_per_s = 5.1e10;
  m.h2d_pageable_bytes_per_s = 1.2e10;
  m.d2h_pageable_bytes_per_s = 1.1e10;
  m.dram_bytes_per_s = 4.0e12;
  m.bf16_flops_per_s = 7.0e14;
  m.fp32_flops_per_s = 5.0e13;
  m.copy_compute_slowdown = 0.02;
  m.method["sync_round_trip_ns"] = "test method";
  return m;
}

}  // namespace

TEST(CalibrationProfile, WritesALoadableMeasuredProfile) {
  auto p = syncscope::model::profile_from_calibration(sample(), "h200-lab", "2026-11-30T12:00:00Z");
  EXPECT_TRUE(p.measured);
  EXPECT_NE(p.measured_on.find("2026-11-30T12:00:00Z"), std::string::npos);
  EXPECT_NE(p.measured_on.find("Test GPU"), std::string::npos);
  EXPECT_NE(p.measured_on.find("580.159.04"), std::string::npos);
  EXPECT_EQ(p.sources.at("sync_round_trip_ns"), "measured: test method");
  syncscope::test::TempDir dir;
  auto path = dir / "lab.yaml";
  syncscope::write_file_atomic(path, syncscope::model::gpu_profile_to_yaml(p));
  auto q = syncscope::model::load_gpu_profile(path.string());
  EXPECT_TRUE(q.measured);
  EXPECT_EQ(q.name, "h200-lab");
  EXPECT_EQ(q.measured_on, p.measured_on);
  EXPECT_DOUBLE_EQ(q.h2d_pageable_bytes_per_s, 1.2e10);
  EXPECT_DOUBLE_EQ(q.copy_compute_slowdown, 0.02);
  EXPECT_EQ(q.sm_count, 132);
  // write_file_atomic refuses to replace it silently.
  EXPECT_ANY_THROW(syncscope::write_file_atomic(path, "x"));
}

TEST(CalibrationProfile, RefusesHoles) {
  auto m = sample();
  m.bf16_flops_per_s = 0;
  try {
    syncscope::model::profile_from_calibration(m, "x", "today");
    FAIL() << "expected InputError";
  } catch (const syncscope::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("bf16_flops_per_s"), std::string::npos);
  }
  EXPECT_THROW(syncscope::model::profile_from_calibration(sample(), "", "today"), syncscope::InputError);
}

TEST(CalibrationProfile, DriverVersionFromProc) {
  const std::string text =
      "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Thu Oct  2 16:53:18 UTC 2025\n"
      "GCC version:  gcc version 13.3.0\n";
  EXPECT_EQ(syncscope::model::parse_nvidia_driver_version(text), "580.159.04");
  EXPECT_EQ(syncscope::model::parse_nvidia_driver_version("nothing here"), "");
}
