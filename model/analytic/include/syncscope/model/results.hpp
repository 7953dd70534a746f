// results.json: what `syncscope run` writes and `validate` / `report` read. One schema for
// measured and simulated runs (`mode` says which). The JSON spelling of every field is the
// snake_case name below; results.csv is the same data, one row per scenario x variant x
// metric. The per-variant fields are listed once (results.cpp's field table) for the JSON
// writer, the JSON reader and the CSV writer.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace syncscope::model {

// 2: "measured_speedup" became "observed_speedup": `mode` says whether a GPU measured it or
// the simulator produced it (schema 1 files are still read).
// 3: each variant's "sync_removals" (what removing each of its trace's worst sync causes
// would save, by replay; schema 1 and 2 files, which lack it, are still read).
inline constexpr int kResultsSchemaVersion = 3;

// A value with a confidence interval (lo <= value <= hi); n = samples behind it.
struct Estimate {
  double value = 0;
  double lo = 0;
  double hi = 0;
  int n = 0;
};

struct Environment {
  std::string gpu;                           // "NVIDIA H200" or the simulated profile's name
  std::string gpu_profile;                   // profile used by the model/simulator (name or file)
  std::string driver;                        // driver version ("" when simulated)
  std::string cuda;                          // CUDA runtime version
  std::string libtorch;                      // LibTorch version
  std::string host;                          // hostname / machine description
  std::string commit;                        // syncscope build commit
  std::string date_utc;                      // ISO 8601
  std::map<std::string, std::string> extra;  // clocks as read, CUPTI version, ...
};

// The network a variant trained: kernels/network.hpp's summary.
struct NetworkInfo {
  std::string model;                      // model name from the scenario
  std::int64_t parameters = 0;            // every element, adapters included
  std::int64_t trainable_parameters = 0;  // what AdamW updates
  bool tied_embeddings = false;
  std::string training;  // "full" | "lora" | "qlora"
  // The frozen base as its architecture defines it (every bias, sink and norm of
  // the config class, at the layers run; no adapters): at full depth, the count published
  // with the model. 0: not recorded (older results). `family`: the Hugging Face family whose
  // config defaults were applied ("qwen2", "gemma2", ...; "" when the scenario gave none).
  std::int64_t base_parameters = 0;
  std::string family{};
};

// One of a variant's worst sync causes (analyze's worst offenders, by blocked + bubble time)
// and the step time its trace saves when replayed without that cause's syncs
// (replay/replay.hpp, removal_savings; analyze's `removal_saving_ns`).
struct SyncRemoval {
  std::string cause;
  double syncs_per_step = 0;
  // Per step, median over the fully built steps, integer ns (files before 2026-12-02 wrote a
  // JSON double such as 1456000.0: read and rounded); none: not claimed.
  std::optional<std::int64_t> saving_ns;
};

// One scenario x fix x variant.
struct VariantResult {
  std::string scenario;
  std::string fix;      // a registered fix's name (FixSpec::name: "packing", "moe_routing", ...)
  std::string variant;  // e.g. "rebuild", "cached", "device"
  bool baseline = false;
  int layers = 0;
  Estimate step_time_ns;      // per training step
  double syncs_per_step = 0;  // sync points per step (median over steps)
  double sync_bubble_ns_per_step = 0;
  double sync_blocked_ns_per_step = 0;
  double h2d_overlap_fraction = 0;
  double d2h_overlap_fraction = 0;
  Estimate measured_speedup;   // JSON/CSV "observed_speedup": baseline step time / this step time (1 for the
                               // baseline), measured or simulated as `mode` says
  Estimate predicted_speedup;  // the analytical model's prediction
  double predicted_saving_ns = 0;
  double tolerance = 0.10;                         // from the scenario
  std::string trace_file;                          // relative to the results directory ("" when none kept)
  std::map<std::string, double> model_parameters;  // e.g. s_ns, c_ns, g_ns, q_ns
  // The forward pass alone (the "forward" range: from its start on the host to the
  // end of the last GPU work it launched), and baseline forward / this forward. n = 0: not
  // measured (older results).
  Estimate forward_time_ns;
  Estimate forward_speedup;
  std::optional<NetworkInfo> network;
  // JSON "sync_removals" (schema 3): the worst causes first; empty when the trace has no
  // sync point inside a step (or the results predate schema 3).
  std::vector<SyncRemoval> sync_removals;
};

struct RunResults {
  int schema_version = kResultsSchemaVersion;
  std::string mode;  // "measured" | "simulated"
  Environment env;
  std::vector<VariantResult> variants;
  std::vector<std::string> notes;  // e.g. why auto fell back to the simulator
};

std::string results_to_json(const RunResults& results);
std::string results_to_csv(const RunResults& results);
// Strict reader: names the file and the JSON path of a missing or mistyped field.
RunResults results_from_json(std::string_view json, std::string_view source_name);
RunResults read_results(const std::filesystem::path& path_or_dir);  // dir: DIR/results.json

}  // namespace syncscope::model
