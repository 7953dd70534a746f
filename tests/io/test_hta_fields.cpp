// What Holistic Trace Analysis (HTA) reads, on what we write beyond a plain trace (issue 27):
// Kineto's forward->backward flows and track sort order kept through a conversion, and a
// simulated trace checked against the same pinned field set as test_writer.cpp's
// (EveryEventCarriesTheFieldsHolisticTraceAnalysisReads; the HTA source files it is pinned
// from are named there), with device properties taken from the GPU profile.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "../sim/item_loop_program.hpp"
#include "io_test_util.hpp"
#include "syncscope/io/trace_io.hpp"
#include "syncscope/model/gpu_profile.hpp"
#include "syncscope/sim/simulator.hpp"

namespace syncscope {
namespace {

using nlohmann::json;

// The field set of HTA's parser (see test_writer.cpp for where each comes from), plus: every
// "ts" is an integer or has at most three decimals (whole ns), never absent.
void expect_hta_field_set(const std::string& text) {
  const json doc = json::parse(text);
  ASSERT_TRUE(doc.contains("deviceProperties"));
  ASSERT_TRUE(doc.contains("distributedInfo"));
  static const std::regex ts_re(R"re("ts":(-?\d+(?:\.\d{1,3})?)[,}])re");
  std::size_t events = 0;
  for (const auto& e : doc.at("traceEvents")) {
    ++events;
    for (const char* k : {"ph", "ts", "pid", "tid"}) EXPECT_TRUE(e.contains(k)) << k << " missing: " << e.dump();
    if (e.contains("ts")) {
      const std::string dumped = e.dump();
      EXPECT_TRUE(std::regex_search(dumped, ts_re)) << "ts not whole ns: " << dumped;
    }
    if (e.value("ph", "") != "X") continue;
    for (const char* k : {"cat", "name", "dur"}) EXPECT_TRUE(e.contains(k)) << k << " missing: " << e.dump();
    const std::string cat = e.value("cat", "");
    static const json kNoArgs = json::object();
    const json& args = e.contains("args") ? e.at("args") : kNoArgs;
    if (cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset") {
      for (const char* k : {"correlation", "stream", "device"}) EXPECT_TRUE(args.contains(k)) << k << ": " << e.dump();
    }
    if (cat == "cuda_runtime" || cat == "cuda_driver") {
      for (const char* k : {"correlation", "cbid"}) EXPECT_TRUE(args.contains(k)) << k << ": " << e.dump();
    }
  }
  EXPECT_GT(events, 0u);
}

// A torch.profiler-style trace with an autograd forward->backward arrow and Kineto's
// sort-order and label metadata; convert keeps all of it, with integer ts on the metadata.
constexpr const char* kKinetoWithFlows = R"({
  "schemaVersion": 1, "deviceProperties": [], "distributedInfo": {"rank": 0},
  "baseTimeNanoseconds": 1700000000000000000,
  "traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 10, "tid": 11, "ts": 100, "dur": 20,
     "args": {"External id": 3, "Sequence number": 5, "Fwd thread id": 0}},
    {"ph": "X", "cat": "cpu_op", "name": "MmBackward0", "pid": 10, "tid": 12, "ts": 200, "dur": 30,
     "args": {"External id": 9, "Sequence number": 5, "Fwd thread id": 11}},
    {"ph": "s", "id": 5, "pid": 10, "tid": 11, "ts": 100, "cat": "fwdbwd", "name": "fwdbwd"},
    {"ph": "f", "id": 5, "pid": 10, "tid": 12, "ts": 200, "cat": "fwdbwd", "name": "fwdbwd", "bp": "e"},
    {"name": "process_name", "ph": "M", "ts": 0, "pid": 10, "tid": 0, "args": {"name": "python3"}},
    {"name": "process_labels", "ph": "M", "ts": 0, "pid": 10, "tid": 0, "args": {"labels": "CPU"}},
    {"name": "process_sort_index", "ph": "M", "ts": 0, "pid": 10, "tid": 0, "args": {"sort_index": 10}},
    {"name": "thread_name", "ph": "M", "ts": 0, "pid": 10, "tid": 12, "args": {"name": "autograd thread"}},
    {"name": "thread_sort_index", "ph": "M", "ts": 0, "pid": 10, "tid": 12, "args": {"sort_index": 12}}
  ]})";

TEST(HtaFields, ConvertKeepsForwardBackwardFlowsAndSortOrder) {
  test::TempDir dir;
  test::spit(dir / "in.json", kKinetoWithFlows);
  const Trace t = read_trace(dir / "in.json");
  ASSERT_EQ(t.track_order.size(), 3u);
  const std::string out = chrome_json_string(t);
  const json doc = json::parse(out);
  int starts = 0, finishes = 0, process_order = 0, thread_order = 0, labels = 0;
  for (const auto& e : doc.at("traceEvents")) {
    const std::string ph = e.value("ph", ""), name = e.value("name", "");
    if (e.value("cat", "") == "fwdbwd") {
      EXPECT_EQ(e.at("id"), 5) << e.dump();
      if (ph == "s") {
        ++starts;
        EXPECT_EQ(e.at("tid"), 11);
        EXPECT_FALSE(e.contains("bp")) << e.dump();
      }
      if (ph == "f") {
        ++finishes;
        EXPECT_EQ(e.at("tid"), 12);
        EXPECT_EQ(e.at("bp"), "e") << e.dump();
      }
    }
    if (ph != "M") continue;
    EXPECT_TRUE(e.at("ts").is_number_integer()) << e.dump();
    if (name == "process_sort_index") {
      ++process_order;
      EXPECT_EQ(e.at("args").at("sort_index"), 10);
    } else if (name == "thread_sort_index") {
      ++thread_order;
      EXPECT_EQ(e.at("tid"), 12);
      EXPECT_EQ(e.at("args").at("sort_index"), 12);
    } else if (name == "process_labels") {
      ++labels;
      EXPECT_EQ(e.at("args").at("labels"), "CPU");
    }
  }
  EXPECT_EQ(starts, 1);
  EXPECT_EQ(finishes, 1);
  EXPECT_EQ(process_order, 1);
  EXPECT_EQ(thread_order, 1);
  EXPECT_EQ(labels, 1);
  expect_hta_field_set(out);
  // And again: what we wrote reads back to the same flows and order.
  test::spit(dir / "out.json", out);
  const Trace back = read_trace(dir / "out.json");
  ASSERT_EQ(back.track_order.size(), 3u);
  std::size_t flows = 0;
  for (const auto& o : back.others)
    if (o.flow_id != kNoString) ++flows;
  EXPECT_EQ(flows, 2u);
}

sim::SimOptions four_steps() {
  sim::SimOptions o;
  o.steps = 4;
  return o;
}

// A simulated trace: the same field set, and device properties from the H200 profile
// ("... (Hopper, sm_90)", 132 SMs) instead of zeros.
TEST(HtaFields, SimulatedTracesCarryTheFieldSetAndDeviceProperties) {
  const Trace t = sim::simulate(simtest::item_loop_program(8), model::load_gpu_profile("H200"), four_steps());
  const std::string out = chrome_json_string(t);
  expect_hta_field_set(out);
  const json doc = json::parse(out);
  ASSERT_EQ(doc.at("deviceProperties").size(), 1u);
  const json& d = doc.at("deviceProperties").at(0);
  EXPECT_NE(d.at("name").get<std::string>().find("H200"), std::string::npos) << d.dump();
  EXPECT_EQ(d.at("computeMajor"), 9);
  EXPECT_EQ(d.at("computeMinor"), 0);
  EXPECT_EQ(d.at("numSms"), 132);
  EXPECT_EQ(d.at("warpSize"), 32);
  EXPECT_EQ(d.at("maxThreadsPerBlock"), 1024);
  EXPECT_GT(d.at("totalGlobalMem").get<std::uint64_t>(), 100'000'000'000u);
}

// HTA builds each host thread's call stack assuming its slices nest; one that straddles
// another gives its critical path negative-weight edges. Our writer moves a straddling slice
// to an extra lane (tid + 100000000 * lane, named "(overlap N)"), so a simulated trace whose
// host slices all nest has no event on such a lane.
TEST(HtaFields, SimulatedHostSlicesNestOnTheirThread) {
  for (const char* profile : {"H200", "GB10"}) {
    const Trace t = sim::simulate(simtest::item_loop_program(8), model::load_gpu_profile(profile), four_steps());
    const json doc = json::parse(chrome_json_string(t));
    std::size_t host = 0;
    for (const auto& e : doc.at("traceEvents")) {
      if (e.value("ph", "") != "X") continue;
      const std::string cat = e.value("cat", "");
      if (cat != "cpu_op" && cat != "cuda_runtime" && cat != "user_annotation" && cat != "cuda_driver") continue;
      ++host;
      ASSERT_TRUE(e.at("tid").is_number_integer()) << e.dump();
      EXPECT_LT(e.at("tid").get<std::int64_t>(), 100'000'000) << profile << ": straddles: " << e.dump();
    }
    EXPECT_GT(host, 0u) << profile;
  }
}

// Each shipped profile's description names its sm_XY: the compute capability comes out of it.
TEST(HtaFields, ComputeCapabilityFromEveryShippedProfile) {
  const std::pair<const char*, std::pair<int, int>> expected[] = {
      {"H100", {9, 0}}, {"H200", {9, 0}}, {"B200", {10, 0}}, {"GB10", {12, 1}}, {"RTX5090", {12, 0}}};
  for (const auto& [name, cc] : expected) {
    const Trace t = sim::simulate(simtest::item_loop_program(1), model::load_gpu_profile(name), four_steps());
    ASSERT_EQ(t.devices.size(), 1u) << name;
    EXPECT_EQ(t.devices[0].compute_major, cc.first) << name;
    EXPECT_EQ(t.devices[0].compute_minor, cc.second) << name;
  }
}

}  // namespace
}  // namespace syncscope
