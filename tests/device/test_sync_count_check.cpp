// The sync-count comparison gpu-check records (sync_count_check.hpp): joins a measured run
// with its step program's run by scenario, fix, variant and depth; a difference is reported,
// never rounded away; golden printers.
#include <gtest/gtest.h>

#include "sync_count_check.hpp"

namespace syncscope::gpucheck {
namespace {

model::VariantResult variant(const char* fix, const char* name, int layers, double syncs) {
  model::VariantResult v;
  v.scenario = "qwen3-0.6b";
  v.fix = fix;
  v.variant = name;
  v.layers = layers;
  v.syncs_per_step = syncs;
  return v;
}

model::RunResults run(const char* mode, std::vector<model::VariantResult> variants) {
  model::RunResults r;
  r.mode = mode;
  r.variants = std::move(variants);
  return r;
}

TEST(SyncCountCheck, EqualCountsMatchAndADifferenceIsReported) {
  const model::RunResults measured =
      run("measured", {variant("packing", "rebuild", 28, 85), variant("packing", "cached", 28, 4),
                       variant("packing", "device", 28, 2)});
  const model::RunResults program =
      run("simulated", {variant("packing", "device", 28, 1), variant("packing", "rebuild", 28, 85),
                        variant("packing", "cached", 28, 4)});
  const SyncCountComparison c = compare_sync_counts(measured, "m", program, "p");
  ASSERT_EQ(c.rows.size(), 3u);
  EXPECT_EQ(c.rows[0].variant, "rebuild");  // the measured run's order
  EXPECT_TRUE(c.rows[0].match);
  EXPECT_TRUE(c.rows[1].match);
  EXPECT_FALSE(c.rows[2].match);
  EXPECT_EQ(c.rows[2].measured, 2);
  EXPECT_EQ(c.rows[2].program, 1);
  EXPECT_EQ(c.matched, 2);
  EXPECT_EQ(c.mismatched, 1);
  EXPECT_FALSE(c.all_match());
}

TEST(SyncCountCheck, VariantsWithoutAProgramRunAreListedAndFailTheCheck) {
  const model::RunResults measured =
      run("measured", {variant("packing", "rebuild", 28, 85), variant("packing", "rebuild", 16, 45)});
  const model::RunResults program = run("simulated", {variant("packing", "rebuild", 28, 85)});
  const SyncCountComparison c = compare_sync_counts(measured, "m", program, "p");
  EXPECT_EQ(c.matched, 1);
  ASSERT_EQ(c.without_program.size(), 1u);
  EXPECT_EQ(c.without_program[0], "qwen3-0.6b/packing=rebuild L=16");
  EXPECT_FALSE(c.all_match());
  EXPECT_FALSE(compare_sync_counts(run("measured", {}), "m", program, "p").all_match()) << "nothing compared";
}

TEST(SyncCountCheck, GoldenPrinters) {
  const model::RunResults measured =
      run("measured", {variant("packing", "rebuild", 28, 85), variant("packing", "device", 28, 2)});
  const model::RunResults program =
      run("simulated", {variant("packing", "rebuild", 28, 85), variant("packing", "device", 28, 1)});
  const SyncCountComparison c = compare_sync_counts(measured, "run/qwen3-0.6b", program, "program/qwen3-0.6b");
  EXPECT_EQ(sync_counts_to_text(c),
            "syncs per step: measured run (run/qwen3-0.6b) vs step program (simulated run program/qwen3-0.6b)\n"
            "scenario             fix          variant   layers   measured    program  verdict\n"
            "qwen3-0.6b           packing      rebuild       28       85.0       85.0  match\n"
            "qwen3-0.6b           packing      device        28        2.0        1.0  DIFFERS\n"
            "1 match, 1 differ\n");
  EXPECT_EQ(sync_counts_to_json(c),
            R"({
  "all_match": false,
  "matched": 1,
  "measured": {
    "mode": "measured",
    "source": "run/qwen3-0.6b"
  },
  "mismatched": 1,
  "program": {
    "mode": "simulated",
    "source": "program/qwen3-0.6b"
  },
  "rows": [
    {
      "fix": "packing",
      "layers": 28,
      "match": true,
      "measured_syncs_per_step": 85.0,
      "program_syncs_per_step": 85.0,
      "scenario": "qwen3-0.6b",
      "variant": "rebuild"
    },
    {
      "fix": "packing",
      "layers": 28,
      "match": false,
      "measured_syncs_per_step": 2.0,
      "program_syncs_per_step": 1.0,
      "scenario": "qwen3-0.6b",
      "variant": "device"
    }
  ],
  "schema_version": 1,
  "without_program": []
}
)");
}

}  // namespace
}  // namespace syncscope::gpucheck
