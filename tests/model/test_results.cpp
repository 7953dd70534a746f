#include <gtest/gtest.h>

#include "syncscope/core/csv.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/core/file_io.hpp"
#include "syncscope/model/forward_time.hpp"
#include "syncscope/model/results.hpp"
#include "test_paths.hpp"

using namespace syncscope;

namespace {

model::RunResults sample_results() {
  model::RunResults r;
  r.mode = "simulated";
  r.env.gpu = "H200 (simulated)";
  r.env.gpu_profile = "H200";
  r.env.commit = "abc";
  r.env.extra["cupti"] = "13.0.1";
  model::VariantResult v;
  v.scenario = "qwen3-0.6b";
  v.fix = "packing";
  v.variant = "cached";
  v.layers = 28;
  v.step_time_ns = {1.8e9, 1.7e9, 1.9e9, 5};
  v.measured_speedup = {1.17, 1.15, 1.19, 5};
  v.predicted_speedup = {1.2, 1.18, 1.22, 0};
  v.predicted_saving_ns = 3.7e8;
  v.syncs_per_step = 56;
  v.tolerance = 0.1;
  v.trace_file = "traces/qwen3-0.6b-cached.json.gz";
  v.model_parameters["s_ns"] = 13.7e6;
  r.variants.push_back(v);
  v.variant = "rebuild, \"quoted\"";  // exercises CSV quoting
  v.baseline = true;
  r.variants.push_back(v);
  r.notes.push_back("auto fell back to the simulator: no GPU");
  return r;
}

std::string results_error(const std::string& json) {
  try {
    model::results_from_json(json, "results.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(Results, JsonRoundTrip) {
  model::RunResults r = sample_results();
  std::string j = model::results_to_json(r);
  model::RunResults q = model::results_from_json(j, "mem");
  EXPECT_EQ(q.schema_version, model::kResultsSchemaVersion);
  EXPECT_EQ(q.mode, "simulated");
  EXPECT_EQ(q.env.extra.at("cupti"), "13.0.1");
  ASSERT_EQ(q.variants.size(), 2u);
  EXPECT_EQ(q.variants[0].layers, 28);
  EXPECT_DOUBLE_EQ(q.variants[0].step_time_ns.lo, 1.7e9);
  EXPECT_EQ(q.variants[0].measured_speedup.n, 5);
  EXPECT_DOUBLE_EQ(q.variants[0].model_parameters.at("s_ns"), 13.7e6);
  EXPECT_TRUE(q.variants[1].baseline);
  EXPECT_EQ(q.notes, r.notes);
  EXPECT_EQ(model::results_to_json(q), j);  // stable
}

TEST(Results, CsvHasOneRowPerMetric) {
  auto rows = csv_parse(model::results_to_csv(sample_results()));
  ASSERT_GT(rows.size(), 1u);
  EXPECT_EQ(rows[0][0], "schema_version");
  EXPECT_EQ(rows[0][7], "metric");
  // 10 fixed metrics + 1 parameter per variant, 2 variants, plus the header.
  EXPECT_EQ(rows.size(), 1u + 2 * 11);
  bool saw_param = false, saw_quoted = false;
  for (const auto& row : rows) {
    ASSERT_EQ(row.size(), 13u);  // the 13th: model
    saw_param = saw_param || row[7] == "param:s_ns";
    saw_quoted = saw_quoted || row[4] == "rebuild, \"quoted\"";
  }
  EXPECT_TRUE(saw_param);
  EXPECT_TRUE(saw_quoted);
}

TEST(Results, StrictReaderNamesTheJsonPath) {
  std::string good = model::results_to_json(sample_results());
  auto replace = [&](const std::string& from, const std::string& to) {
    std::string s = good;
    auto p = s.find(from);
    EXPECT_NE(p, std::string::npos) << from;
    if (p != std::string::npos) s.replace(p, from.size(), to);
    return s;
  };
  std::string e = results_error(replace("\"layers\": 28", "\"layers\": \"28\""));
  EXPECT_NE(e.find("results.json"), std::string::npos) << e;
  EXPECT_NE(e.find("$.variants[0].layers"), std::string::npos) << e;

  e = results_error(replace("\"layers\": 28", "\"layerz\": 28"));
  EXPECT_NE(e.find("$.variants[0].layerz"), std::string::npos) << e;
  EXPECT_NE(e.find("unknown field"), std::string::npos) << e;

  e = results_error(replace("\"mode\": \"simulated\"", "\"mode\": \"guessed\""));
  EXPECT_NE(e.find("$.mode"), std::string::npos) << e;

  e = results_error(replace("\"value\": 1800000000.0", "\"val\": 1800000000.0"));
  EXPECT_NE(e.find("$.variants[0].step_time_ns"), std::string::npos) << e;

  e = results_error(replace("\"lo\": 1700000000.0", "\"lo\": 1900000001.0"));
  EXPECT_NE(e.find("must contain the value"), std::string::npos) << e;

  e = results_error(replace("\"schema_version\": 3", "\"schema_version\": 4"));
  EXPECT_NE(e.find("$.schema_version"), std::string::npos) << e;

  e = results_error("{\"schema_version\": 1, \"mode\": ");
  EXPECT_NE(e.find("not valid JSON"), std::string::npos) << e;

  e = results_error("{\"schema_version\": 1, \"mode\": \"measured\", \"env\": {}}");
  EXPECT_NE(e.find("$.variants"), std::string::npos) << e;
}

// Schema 2 names the speedup by the mode ("observed_speedup"); schema 1 files, which called
// it "measured_speedup" in every mode, are still read.
TEST(Results, SchemaOneMeasuredSpeedupIsReadAsObserved) {
  const std::string v2 = model::results_to_json(sample_results());
  EXPECT_NE(v2.find("\"observed_speedup\""), std::string::npos);
  EXPECT_EQ(v2.find("measured_speedup"), std::string::npos);
  std::string v1 = v2;
  v1.replace(v1.find("\"schema_version\": 3"), 19, "\"schema_version\": 1");
  for (auto p = v1.find("\"observed_speedup\""); p != std::string::npos; p = v1.find("\"observed_speedup\""))
    v1.replace(p, 18, "\"measured_speedup\"");
  const model::RunResults a = model::results_from_json(v2, "v2.json"), b = model::results_from_json(v1, "v1.json");
  ASSERT_EQ(a.variants.size(), b.variants.size());
  for (std::size_t i = 0; i < a.variants.size(); ++i)
    EXPECT_EQ(a.variants[i].measured_speedup.value, b.variants[i].measured_speedup.value);
  EXPECT_EQ(b.schema_version, model::kResultsSchemaVersion);
}

// Schema 3: each variant's worst sync causes with the step time their removal saves (by
// replay), in JSON (null when no saving is claimed) and CSV; schema 2 files, without them, are
// still read.
TEST(Results, SyncRemovalsRoundTripAndSchemaTwoIsRead) {
  model::RunResults r = sample_results();
  r.variants[0].sync_removals = {{"aten::item", 16, 1'250'000}, {"aten::nonzero", 2, std::nullopt}};
  const std::string j = model::results_to_json(r);
  EXPECT_NE(j.find("\"removal_saving_ns\": null"), std::string::npos) << j;
  EXPECT_NE(j.find("\"removal_saving_ns\": 1250000\n"), std::string::npos) << "integer ns, not 1250000.0: " << j;
  const model::RunResults q = model::results_from_json(j, "mem");
  ASSERT_EQ(q.variants[0].sync_removals.size(), 2u);
  EXPECT_EQ(q.variants[0].sync_removals[0].cause, "aten::item");
  EXPECT_DOUBLE_EQ(q.variants[0].sync_removals[0].syncs_per_step, 16);
  ASSERT_TRUE(q.variants[0].sync_removals[0].saving_ns.has_value());
  EXPECT_EQ(*q.variants[0].sync_removals[0].saving_ns, 1'250'000);
  EXPECT_FALSE(q.variants[0].sync_removals[1].saving_ns.has_value());
  EXPECT_TRUE(q.variants[1].sync_removals.empty());
  EXPECT_EQ(model::results_to_json(q), j);

  const auto rows = csv_parse(model::results_to_csv(r));
  bool saving = false, count = false, unclaimed = false;
  for (const auto& row : rows) {
    saving |= row[7] == "removal_saving_ns:aten::item" && row[8] == "1250000";
    count |= row[7] == "syncs_per_step:aten::item" && row[8] == "16";
    unclaimed |= row[7] == "removal_saving_ns:aten::nonzero" && row[8].empty();
  }
  EXPECT_TRUE(saving && count && unclaimed);

  // A schema 2 file: no sync_removals anywhere.
  std::string v2 = model::results_to_json(sample_results());
  v2.replace(v2.find("\"schema_version\": 3"), 19, "\"schema_version\": 2");
  for (auto p = v2.find(",\n      \"sync_removals\": []"); p != std::string::npos;
       p = v2.find(",\n      \"sync_removals\": []"))
    v2.erase(p, std::string(",\n      \"sync_removals\": []").size());
  ASSERT_EQ(v2.find("sync_removals"), std::string::npos) << v2;
  const model::RunResults old = model::results_from_json(v2, "v2.json");
  EXPECT_EQ(old.schema_version, model::kResultsSchemaVersion);
  EXPECT_TRUE(old.variants[0].sync_removals.empty());

  std::string bad = j;
  bad.replace(bad.find("\"syncs_per_step\": 16.0"), 22, "\"syncs_per_step\": -1.0");
  const std::string e = results_error(bad);
  EXPECT_NE(e.find("$.variants[0].sync_removals[0].syncs_per_step"), std::string::npos) << e;
}

// Files written before removal_saving_ns was integer ns hold a JSON double (1456000.0): still
// read, as the integer it stands for, and written back as an integer.
TEST(Results, RemovalSavingWrittenAsADoubleIsStillRead) {
  model::RunResults r = sample_results();
  r.variants[0].sync_removals = {{"aten::item", 16, 1'456'000}};
  const std::string now = model::results_to_json(r);
  std::string old = now;
  const std::string integer = "\"removal_saving_ns\": 1456000\n";
  ASSERT_NE(old.find(integer), std::string::npos) << old;
  old.replace(old.find(integer), integer.size(), "\"removal_saving_ns\": 1456000.0\n");
  const model::RunResults q = model::results_from_json(old, "old.json");
  ASSERT_EQ(q.variants[0].sync_removals.size(), 1u);
  ASSERT_TRUE(q.variants[0].sync_removals[0].saving_ns.has_value());
  EXPECT_EQ(*q.variants[0].sync_removals[0].saving_ns, 1'456'000);
  EXPECT_EQ(model::results_to_json(q), now);
  // A fraction of a ns is rounded; a number no int64 holds is refused, naming the field.
  old.replace(old.find("1456000.0"), 9, "1456000.6");
  EXPECT_EQ(*model::results_from_json(old, "old.json").variants[0].sync_removals[0].saving_ns, 1'456'001);
  old.replace(old.find("1456000.6"), 9, "1.0e300");
  const std::string e = results_error(old);
  EXPECT_NE(e.find("$.variants[0].sync_removals[0].removal_saving_ns"), std::string::npos) << e;
}

TEST(Results, ReadFromRunDirectory) {
  test::TempDir dir;
  write_file_atomic(dir / "results.json", model::results_to_json(sample_results()));
  EXPECT_EQ(model::read_results(dir.path()).variants.size(), 2u);
  test::TempDir empty;
  EXPECT_THROW(model::read_results(empty.path()), InputError);
}

// The forward pass and the network as built, in JSON and CSV from one field list.
TEST(Results, ForwardTimesAndNetworkRoundTripInJsonAndCsv) {
  model::RunResults r = sample_results();
  auto& v = r.variants[0];
  v.forward_time_ns = {6.0e8, 5.9e8, 6.1e8, 5};
  v.forward_speedup = {1.43, 1.41, 1.45, 5};
  v.network = model::NetworkInfo{"Qwen3-0.6B", 596049920 + 10092544, 10092544, true, "qlora"};
  const std::string j = model::results_to_json(r);
  const model::RunResults q = model::results_from_json(j, "results.json");
  EXPECT_DOUBLE_EQ(q.variants[0].forward_time_ns.value, 6.0e8);
  EXPECT_DOUBLE_EQ(q.variants[0].forward_speedup.hi, 1.45);
  ASSERT_TRUE(q.variants[0].network);
  EXPECT_EQ(q.variants[0].network->parameters, 596049920 + 10092544);
  EXPECT_EQ(q.variants[0].network->trainable_parameters, 10092544);
  EXPECT_TRUE(q.variants[0].network->tied_embeddings);
  EXPECT_EQ(q.variants[0].network->training, "qlora");
  EXPECT_FALSE(q.variants[1].network);  // absent stays absent
  EXPECT_EQ(q.variants[1].forward_time_ns.n, 0);
  EXPECT_EQ(model::results_to_json(q), j);
  // Older results (no forward, no network) still read: the sample_results's JSON has neither field.
  EXPECT_EQ(model::results_to_json(sample_results()).find("forward_time_ns"), std::string::npos);
  // CSV: the forward pass with its interval, the network as metric rows.
  const auto rows = csv_parse(model::results_to_csv(r));
  bool fwd = false, fsp = false, params = false, training = false;
  for (const auto& row : rows) {
    if (row[2] != "qwen3-0.6b" || row[4] != "cached") continue;
    if (row[7] == "forward_time_ns") fwd = row[8] == "600000000" && row[9] == "590000000" && row[11] == "5";
    if (row[7] == "forward_speedup") fsp = row[8] == "1.43";
    if (row[7] == "network.parameters") params = row[8] == "606142464";
    if (row[7] == "network.training") training = row[8] == "qlora";
  }
  EXPECT_TRUE(fwd);
  EXPECT_TRUE(fsp);
  EXPECT_TRUE(params);
  EXPECT_TRUE(training);
  // The network block is checked like every other field.
  std::string bad = j;
  bad.replace(bad.find("\"qlora\""), 7, "\"int4\"");
  EXPECT_THROW(model::results_from_json(bad, "results.json"), InputError);
  bad = j;
  bad.replace(bad.find("\"trainable_parameters\": 10092544"), 32, "\"trainable_parameters\": 999999999999");
  EXPECT_THROW(model::results_from_json(bad, "results.json"), InputError);
}

TEST(ForwardTime, FromTheForwardRangeToTheEndOfTheGpuWorkItLaunched) {
  Trace t;
  auto range = [&](const char* name, Ns start, Ns end) {
    Range r;
    r.kind = RangeKind::NvtxPushPop;
    r.name = t.strings.intern(name);
    r.pid = 1;
    r.tid = 1;
    r.start = start;
    r.end = end;
    t.ranges.push_back(r);
  };
  auto launch = [&](Ns at, std::uint64_t corr, Ns gpu_end) {
    ApiCall a;
    a.name = t.strings.intern("cudaLaunchKernel");
    a.pid = 1;
    a.tid = 1;
    a.start = at;
    a.end = at + 5;
    a.correlation = corr;
    t.api_calls.push_back(a);
    Kernel k;
    k.name = t.strings.intern("k");
    k.start = gpu_end - 50;
    k.end = gpu_end;
    k.correlation = corr;
    t.kernels.push_back(k);
  };
  // Step 0: the host issues the forward in 100 ns; its last kernel ends at 400.
  range("forward", 0, 100);
  launch(10, 1, 300);
  launch(90, 2, 400);
  launch(150, 3, 900);  // backward's: not the forward's
  // Step 1: a sync inside the forward: the host range already covers the GPU work.
  range("forward", 1000, 1600);
  launch(1010, 4, 1500);
  range("backward", 1600, 1700);
  const model::Estimate e = model::forward_time_estimate(t);
  EXPECT_EQ(e.n, 2);
  EXPECT_DOUBLE_EQ(e.lo, 400);
  EXPECT_DOUBLE_EQ(e.hi, 600);
  EXPECT_DOUBLE_EQ(e.value, 500);
  EXPECT_EQ(model::forward_time_estimate(Trace{}).n, 0);
}
