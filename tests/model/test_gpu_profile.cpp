#include <gtest/gtest.h>

#include <algorithm>

#include "syncscope/core/error.hpp"
#include "syncscope/core/file_io.hpp"
#include "syncscope/model/gpu_profile.hpp"
#include "test_paths.hpp"

using syncscope::InputError;
using syncscope::model::GpuProfile;
namespace model = syncscope::model;

namespace {

std::string error_of(const std::string& path) {
  try {
    syncscope::model::load_gpu_profile(path);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

const char* kMinimal = R"(name: "Test"
description: "a test GPU"
sync_round_trip_ns: 26000
launch_overhead_ns: 5000
launch_latency_ns: 9000
h2d_pinned_bytes_per_s: 55.7e9
d2h_pinned_bytes_per_s: 55.7e9
dram_bytes_per_s: 4.8e12
bf16_flops_per_s: 989.4e12
sm_count: 132
memory_bytes: 141e9
sources:
  sync_round_trip_ns: "docs/sources.md#latency-leads"
  launch_overhead_ns: "docs/sources.md#latency-leads"
  launch_latency_ns: "docs/sources.md#latency-leads"
  h2d_pinned_bytes_per_s: "docs/sources.md#latency-leads"
  d2h_pinned_bytes_per_s: "assumed: symmetric"
  dram_bytes_per_s: "datasheet"
  bf16_flops_per_s: "datasheet"
  sm_count: "datasheet"
  memory_bytes: "datasheet"
)";

}  // namespace

TEST(GpuProfile, ShippedProfilesLoadWithSources) {
  auto names = syncscope::model::shipped_gpu_profiles();
  for (const char* want : {"B200", "GB10", "H100", "H200", "RTX5090"})
    EXPECT_NE(std::find(names.begin(), names.end(), want), names.end()) << want;
  for (const auto& n : names) {
    SCOPED_TRACE(n);
    model::GpuProfile p = syncscope::model::load_gpu_profile(n);
    EXPECT_EQ(p.name, n);
    EXPECT_FALSE(p.measured);
    EXPECT_GT(p.bf16_flops_per_s, 0);
    EXPECT_GT(p.h2d_pinned_bytes_per_s, 0);
    EXPECT_TRUE(p.sources.count("dram_bytes_per_s"));
    EXPECT_TRUE(p.sources.count("copy_compute_slowdown"));
  }
  EXPECT_TRUE(syncscope::model::load_gpu_profile("gb10").unified_memory);  // names are case-insensitive
  EXPECT_FALSE(syncscope::model::load_gpu_profile("H200").unified_memory);
  EXPECT_EQ(syncscope::model::load_gpu_profile("H200").sm_count, 132);
  EXPECT_NEAR(syncscope::model::load_gpu_profile("B200").h2d_pinned_bytes_per_s, 55.7e9, 1);
}

TEST(GpuProfile, UnknownNameListsShipped) {
  std::string e = error_of("NoSuchGPU");
  EXPECT_NE(e.find("NoSuchGPU"), std::string::npos);
  EXPECT_NE(e.find("H200"), std::string::npos);
}

TEST(GpuProfile, StrictLoaderNamesFileAndField) {
  syncscope::test::TempDir dir;
  auto write = [&](const std::string& name, const std::string& text) {
    auto p = dir / name;
    syncscope::write_file_atomic(p, text);
    return p.string();
  };
  EXPECT_EQ(syncscope::model::load_gpu_profile(write("ok.yaml", kMinimal)).sm_count, 132);

  std::string unknown = std::string(kMinimal) + "tensor_cores: 528\n";
  std::string e = error_of(write("unknown.yaml", unknown));
  EXPECT_NE(e.find("unknown.yaml"), std::string::npos) << e;
  EXPECT_NE(e.find("tensor_cores"), std::string::npos) << e;

  std::string missing = kMinimal;
  missing.erase(missing.find("dram_bytes_per_s: 4.8e12\n"), std::string("dram_bytes_per_s: 4.8e12\n").size());
  e = error_of(write("missing.yaml", missing));
  EXPECT_NE(e.find("missing.yaml"), std::string::npos) << e;
  EXPECT_NE(e.find("'dram_bytes_per_s'"), std::string::npos) << e;

  std::string bad_type = kMinimal;
  bad_type.replace(bad_type.find("sm_count: 132"), 13, "sm_count: many");
  e = error_of(write("type.yaml", bad_type));
  EXPECT_NE(e.find("sm_count"), std::string::npos) << e;
  EXPECT_NE(e.find("type.yaml:"), std::string::npos) << e;  // with line:column

  std::string zero = kMinimal;
  zero.replace(zero.find("launch_latency_ns: 9000"), 23, "launch_latency_ns: 0");
  e = error_of(write("zero.yaml", zero));
  EXPECT_NE(e.find("launch_latency_ns"), std::string::npos) << e;

  std::string nosource = std::string(kMinimal);
  nosource.insert(nosource.find("sources:"), "fp32_flops_per_s: 67e12\n");
  e = error_of(write("nosource.yaml", nosource));
  EXPECT_NE(e.find("fp32_flops_per_s"), std::string::npos) << e;
  EXPECT_NE(e.find("sources"), std::string::npos) << e;

  e = error_of(write("notyaml.yaml", "name: [unclosed\n"));
  EXPECT_NE(e.find("notyaml.yaml"), std::string::npos) << e;
}

TEST(GpuProfile, YamlRoundTrip) {
  GpuProfile p = syncscope::model::load_gpu_profile("B200");
  syncscope::test::TempDir dir;
  auto path = dir / "b200-copy.yaml";
  syncscope::write_file_atomic(path, syncscope::model::gpu_profile_to_yaml(p));
  GpuProfile q = syncscope::model::load_gpu_profile(path.string());
  EXPECT_EQ(q.name, p.name);
  EXPECT_EQ(q.description, p.description);
  EXPECT_DOUBLE_EQ(q.dram_bytes_per_s, p.dram_bytes_per_s);
  EXPECT_DOUBLE_EQ(q.copy_compute_slowdown, p.copy_compute_slowdown);
  EXPECT_EQ(q.sm_count, p.sm_count);
  EXPECT_EQ(q.unified_memory, p.unified_memory);
  EXPECT_EQ(q.sources, p.sources);
}
