// What the writer emits for Perfetto (tracks nest, flows bind) and for PyTorch's tooling
// (Kineto's field names and layout).
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "full_trace.hpp"
#include "io_test_util.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/io/trace_io.hpp"
#include "text_util.hpp"

namespace syncscope {
namespace {

using nlohmann::json;

// Exact ns from the "ts"/"dur" text, which nlohmann would round through a double.
struct Slice {
  std::string track;
  Ns start = 0;
  Ns end = 0;
  std::string name;
};

std::vector<Slice> x_slices(const std::string& text) {
  // The writer's layout: {"ph":"X",["cat":..,]"name":..,"pid":..,"tid":..,"ts":..,"dur":..
  static const std::regex re(
      R"re(\{"ph":"X",(?:"cat":"(?:[^"\\]|\\.)*",)?"name":"((?:[^"\\]|\\.)*)","pid":(-?\d+|"(?:[^"\\]|\\.)*"),"tid":(-?\d+|"(?:[^"\\]|\\.)*"),"ts":(-?\d+(?:\.\d{3})?),"dur":(\d+(?:\.\d{3})?)[,}])re");
  std::vector<Slice> out;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator(); ++it) {
    const auto& m = *it;
    Slice s;
    s.name = m[1];
    s.track = std::string(m[2]) + "/" + std::string(m[3]);
    s.start = *io_detail::parse_us_as_ns(std::string(m[4]));
    s.end = s.start + *io_detail::parse_us_as_ns(std::string(m[5]));
    out.push_back(s);
  }
  return out;
}

// On every track, any two slices either nest or are disjoint (what Perfetto needs).
std::string nesting_violation(const std::vector<Slice>& slices) {
  std::map<std::string, std::vector<Slice>> by_track;
  for (const auto& s : slices) by_track[s.track].push_back(s);
  for (auto& [track, v] : by_track) {
    std::stable_sort(v.begin(), v.end(), [](const Slice& a, const Slice& b) {
      return a.start != b.start ? a.start < b.start : a.end > b.end;
    });
    std::vector<const Slice*> open;
    for (const auto& s : v) {
      while (!open.empty() && open.back()->end <= s.start) open.pop_back();
      if (!open.empty() && s.end > open.back()->end)
        return track + ": \"" + s.name + "\" straddles \"" + open.back()->name + "\"";
      open.push_back(&s);
    }
  }
  return "";
}

std::size_t count_x_events(const json& doc) {
  std::size_t n = 0;
  for (const auto& e : doc["traceEvents"])
    if (e["ph"] == "X") ++n;
  return n;
}

TEST(ChromeWriter, KinetoTopLevelFields) {
  const Trace t = test::make_full_trace();
  const std::string text = chrome_json_string(t);
  const json doc = json::parse(text);
  EXPECT_EQ(doc["schemaVersion"], 3);
  ASSERT_TRUE(doc["deviceProperties"].is_array());
  EXPECT_EQ(doc["deviceProperties"][0]["name"], "NVIDIA H200");
  EXPECT_EQ(doc["deviceProperties"][0]["numSms"], 132);
  EXPECT_EQ(doc["displayTimeUnit"], "ms");
  ASSERT_TRUE(doc["baseTimeNanoseconds"].is_number_integer());
  EXPECT_EQ(doc["baseTimeNanoseconds"].get<std::int64_t>(), test::kT0 - 3);  // the earliest record, before meta's base
  EXPECT_EQ(doc["traceName"], "full \"trace\"\n");
  EXPECT_EQ(doc["syncscope"]["schema_version"], kTraceSchemaVersion);
  EXPECT_EQ(doc["syncscope"]["base_time_ns"].get<std::int64_t>(), test::kT0 + 5);
  EXPECT_EQ(doc["syncscope"]["clock"], "monotonic");
  // Kineto's top-level provenance keeps its JSON type; reserved names stay in the block only.
  EXPECT_EQ(doc["host"], "gpu-01");
  EXPECT_EQ(doc["cupti_version"], 130001);
  EXPECT_EQ(doc["distributedInfo"]["rank"], 3);
  EXPECT_EQ(doc["flag"], true);
  EXPECT_EQ(doc["odd"], " 5");
  EXPECT_TRUE(doc["traceEvents"].is_array());
  EXPECT_EQ(doc["syncscope"]["extra"]["traceEvents"], "not at the top level");
  EXPECT_EQ(count_x_events(doc), t.api_calls.size() + t.kernels.size() + t.memcpys.size() + t.memsets.size() +
                                     t.syncs.size() + t.cuda_events.size() + t.ranges.size() + t.overheads.size() + 3);
}

// Whole microseconds are integers (Holistic Trace Analysis keeps "ts" an integer column only
// then, and warns about rounding otherwise); other times have exactly three decimals (ns).
TEST(ChromeWriter, TimestampsAreWholeMicrosecondsOrThreeDecimals) {
  const std::string text = chrome_json_string(test::make_full_trace());
  const std::regex ts(R"re("(ts|dur)":(-?[0-9.]+))re");
  std::size_t n = 0, whole = 0;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), ts); it != std::sregex_iterator(); ++it, ++n) {
    const std::string v = (*it)[2];
    EXPECT_TRUE(std::regex_match(v, std::regex(R"j(-?\d+(\.\d{3})?)j"))) << (*it)[0];
    EXPECT_EQ(v.find(".000"), std::string::npos) << (*it)[0];
    if (v.find('.') == std::string::npos) ++whole;
  }
  EXPECT_GT(n, 40u);
  EXPECT_GT(whole, 0u);
  EXPECT_LT(whole, n);
}

// Holistic Trace Analysis finds the rank with a regular expression that wants a space after
// the colon, and refuses traces without one: every trace we write has it (0 when unknown),
// and our block says whether it was known so reading back gives the same model.
TEST(ChromeWriter, DistributedInfoRankForHolisticTraceAnalysis) {
  const std::regex hta(R"re("distributedInfo": \{"rank": (\d+))re");
  Trace t;
  t.finalize();
  std::string text = chrome_json_string(t);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(text, m, hta)) << text.substr(0, 400);
  EXPECT_EQ(m[1], "0");
  EXPECT_FALSE(parse_chrome_json(text, "w.json").meta.rank.has_value());  // unknown stays unknown

  t.meta.rank = 5;
  t.meta.extra["distributedInfo"] = R"j({"backend": "nccl", "rank": 2, "world_size": 8})j";
  text = chrome_json_string(t);
  ASSERT_TRUE(std::regex_search(text, m, hta));
  EXPECT_EQ(m[1], "5");  // the model's rank wins over the text kept from the source
  const json doc = json::parse(text);
  EXPECT_EQ(doc["distributedInfo"]["world_size"], 8);
  EXPECT_EQ(doc["distributedInfo"]["backend"], "nccl");
  const Trace back = parse_chrome_json(text, "w.json");
  ASSERT_TRUE(back.meta.rank.has_value());
  EXPECT_EQ(*back.meta.rank, 5);
  EXPECT_EQ(back.meta.extra.at("distributedInfo"), t.meta.extra.at("distributedInfo"));

  // A Kineto trace's rank is read from distributedInfo.
  const Trace kineto =
      parse_chrome_json(R"j({"distributedInfo": {"backend": "nccl", "rank": 3, "world_size": 4}, "traceEvents": []})j",
                        "k.json");
  ASSERT_TRUE(kineto.meta.rank.has_value());
  EXPECT_EQ(*kineto.meta.rank, 3);
}

TEST(ChromeWriter, CopyCallsKeepTheirKindArgument) {
  Trace t;
  ApiCall a;
  a.name = t.intern("hipMemcpyWithStream");
  a.copy_kind = CopyKind::DtoH;
  a.start = 1000;
  a.end = 2000;
  t.api_calls.push_back(a);
  t.finalize();
  const json doc = json::parse(chrome_json_string(t));
  bool found = false;
  for (const auto& e : doc["traceEvents"])
    if (e["ph"] == "X" && e["name"] == "hipMemcpyWithStream") {
      found = true;
      EXPECT_EQ(e["args"]["kind"], 2);  // cudaMemcpyKind/hipMemcpyKind DeviceToHost
      EXPECT_EQ(e["ts"], 1);            // whole microseconds: an integer
      EXPECT_TRUE(e["ts"].is_number_integer());
    }
  EXPECT_TRUE(found);
  EXPECT_EQ(parse_chrome_json(doc.dump(), "w.json").api_calls.at(0).copy_kind, CopyKind::DtoH);
}

TEST(ChromeWriter, GpuEventsCarryKinetoArgs) {
  const json doc = json::parse(chrome_json_string(test::make_full_trace()));
  std::size_t kernels = 0;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] != "X") continue;
    const std::string cat = e["cat"];
    if (cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset" || cat == "cuda_sync") {
      for (const char* k : {"device", "stream", "correlation", "context"})
        EXPECT_TRUE(e["args"].contains(k)) << e.dump();
      EXPECT_EQ(e["pid"], e["args"]["device"]) << e.dump();
    }
    if (cat == "kernel") {
      ++kernels;
      EXPECT_EQ(e["args"]["grid"].size(), 3u);
      EXPECT_EQ(e["args"]["block"].size(), 3u);
      EXPECT_TRUE(e["args"].contains("registers per thread"));
      EXPECT_TRUE(e["args"].contains("shared memory"));
    }
    if (cat == "cuda_runtime" || cat == "cuda_driver") {
      EXPECT_TRUE(e["args"].contains("cbid"));
      EXPECT_TRUE(e["args"].contains("correlation"));
    }
    if (cat == "cuda_sync") {
      EXPECT_TRUE(e["args"].contains("cuda_sync_kind"));
    }
    if (cat == "gpu_memcpy") {
      const std::string name = e["name"];
      EXPECT_EQ(name.rfind("Memcpy ", 0), 0u);
    }
  }
  EXPECT_EQ(kernels, 3u);
}

TEST(ChromeWriter, EveryTrackNestsForPerfetto) {
  for (const Trace& t : {test::make_full_trace(), read_trace(test::torch_fixture()),
                         read_trace(test::trace_fixture("kineto_all_categories.json"))}) {
    const std::string text = chrome_json_string(t);
    const auto slices = x_slices(text);
    EXPECT_EQ(slices.size(), count_x_events(json::parse(text)));  // the regex saw every slice
    EXPECT_EQ(nesting_violation(slices), "");
  }
  // The same check catches straddling slices when they are not moved (it can fail).
  EXPECT_NE(nesting_violation({{"a", 0, 10, "p"}, {"a", 5, 15, "q"}}), "");
}

TEST(ChromeWriter, OverlappingSlicesMoveToNamedLanes) {
  const Trace t = test::make_full_trace();
  const json doc = json::parse(chrome_json_string(t));
  // "straddles" (python_function) partially overlaps aten::mm on thread 4243.
  bool moved = false;
  std::set<std::string> lane_names;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] == "X" && e["name"] == "straddles") {
      EXPECT_NE(e["tid"], 4243);
      EXPECT_EQ(e["args"]["syncscope"]["track_tid"], 4243);
      moved = true;
    }
    if (e["ph"] == "M" && e["name"] == "thread_name") lane_names.insert(e["args"]["name"].get<std::string>());
  }
  EXPECT_TRUE(moved);
  EXPECT_TRUE(lane_names.count("main thread (overlap 1)")) << json(lane_names).dump();
  EXPECT_TRUE(lane_names.count("copy stream (overlap 1)")) << json(lane_names).dump();  // the memcpy over the kernel
}

TEST(ChromeWriter, GpuTracksAreNamedWhenTheTraceDoesNot) {
  const json doc = json::parse(chrome_json_string(test::make_full_trace()));
  std::map<std::string, std::string> names;  // "pid/tid" -> name
  for (const auto& e : doc["traceEvents"])
    if (e["ph"] == "M" && (e["name"] == "process_name" || e["name"] == "thread_name"))
      names[e["pid"].dump() + "/" + (e["name"] == "process_name" ? "" : e["tid"].dump())] = e["args"]["name"];
  EXPECT_EQ(names["1/"], "GPU 1");
  EXPECT_EQ(names["1/14"], "stream 14");
  EXPECT_EQ(names["1/13"], "copy stream");  // the trace's own name wins
  EXPECT_EQ(names["4242/"], "python3");
}

TEST(ChromeWriter, LaunchToGpuFlowArrows) {
  const Trace t = test::make_full_trace();
  const json doc = json::parse(chrome_json_string(t));
  std::map<std::uint64_t, json> starts, ends;
  for (const auto& e : doc["traceEvents"]) {
    if (e.value("cat", "") != "ac2g") continue;  // the trace's own fwdbwd arrow is kept as it was
    if (e["ph"] == "s") {
      EXPECT_TRUE(starts.emplace(e["id"].get<std::uint64_t>(), e).second) << "duplicate s";
    }
    if (e["ph"] == "f") {
      EXPECT_TRUE(ends.emplace(e["id"].get<std::uint64_t>(), e).second) << "duplicate f";
    }
  }
  // Correlations 11 (kernel), 12 (driver launch -> kernel), 13 (memcpy), 14 (memset), 15 (sync).
  EXPECT_EQ(starts.size(), 5u);
  EXPECT_EQ(ends.size(), 5u);
  const auto& s = starts.at(11);
  const auto& f = ends.at(11);
  EXPECT_EQ(s["cat"], "ac2g");
  EXPECT_EQ(s["pid"], 4242);
  EXPECT_EQ(s["tid"], 4243);
  EXPECT_EQ(f["bp"], "e");
  EXPECT_EQ(f["pid"], 1);
  EXPECT_EQ(f["tid"], 13);
  // ts: at the launch's start and at the kernel's start (relative to baseTimeNanoseconds).
  const Ns base = doc["baseTimeNanoseconds"].get<std::int64_t>();
  const std::string text = chrome_json_string(t);
  const std::string s_text = R"j("ph":"s","id":11,"pid":4242,"tid":4243,"ts":)j";
  const auto at = text.find(s_text);
  ASSERT_NE(at, std::string::npos);
  const auto ts = io_detail::parse_us_as_ns(
      text.substr(at + s_text.size(), text.find(',', at + s_text.size()) - at - s_text.size()));
  EXPECT_EQ(*ts + base, test::kT0 + 1000);
  // The memcpy sits on an overlap lane of stream 13: its arrow must end there.
  EXPECT_NE(ends.at(13)["tid"], 13);
}

TEST(ChromeWriter, WriteTraceIsAtomicAndRefusesToOverwrite) {
  const Trace t = test::make_full_trace();
  test::TempDir dir;
  write_trace(t, dir / "a.json");
  const std::string first = test::slurp(dir / "a.json");
  EXPECT_THROW(write_trace(t, dir / "a.json"), InputError);
  EXPECT_EQ(test::slurp(dir / "a.json"), first);
  WriteOptions o;
  o.overwrite = true;
  write_trace(Trace{}, dir / "a.json", o);
  EXPECT_NE(test::slurp(dir / "a.json"), first);
  write_trace(t, dir / "b.json.gz");
  const std::string gz = test::slurp(dir / "b.json.gz");
  ASSERT_GE(gz.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(gz[0]), 0x1f);
  EXPECT_EQ(static_cast<unsigned char>(gz[1]), 0x8b);
  EXPECT_THROW(write_trace(t, dir / "c.sstrace", WriteOptions{TraceFormat::Auto, false}), InputError);
  EXPECT_FALSE(std::filesystem::exists(dir / "c.sstrace"));
  EXPECT_THROW(write_trace(t, dir / "nodir" / "d.json"), InputError);
}

}  // namespace
}  // namespace syncscope

namespace syncscope {
namespace {

// The field set Holistic Trace Analysis's parser reads, pinned from its source (no Python in
// the test; re-read these files when HTA changes):
// - hta/common/trace_parser.py (_parse_trace_dataframe_json, _compress_df): a DataFrame of
//   traceEvents; a float64 "ts" column (any event without ts, or any fractional value)
//   makes it round every timestamp to whole microseconds; rows without "dur" or "cat" are
//   dropped; "ph", "name", "pid", "tid" are read as columns.
// - hta/configs/default_event_args.py: the args it keeps, of which it joins on
//   "correlation" (runtime call <-> GPU activity), "External id", "stream", "device", "cbid",
//   and for cuda_sync "wait_on_stream" and "wait_on_cuda_event_record_corr_id".
// - hta/common/trace_parser.py (parse_metadata_ijson) and the rank regex: top-level
//   "deviceProperties" and "distributedInfo" with "rank" (checked above).
TEST(ChromeWriter, EveryEventCarriesTheFieldsHolisticTraceAnalysisReads) {
  const json doc = json::parse(chrome_json_string(test::make_full_trace()));
  ASSERT_TRUE(doc.contains("deviceProperties"));
  ASSERT_TRUE(doc.contains("distributedInfo"));
  std::size_t metadata = 0;
  for (const auto& e : doc["traceEvents"]) {
    for (const char* k : {"ph", "ts", "pid", "tid"}) EXPECT_TRUE(e.contains(k)) << k << " missing: " << e.dump();
    // value()/find(), not const operator[]: a missing key must fail the test, not assert (Debug) or
    // read past the object (Release).
    const std::string ph = e.value("ph", "");
    if (ph == "M") ++metadata;
    if (ph != "X") continue;
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
  EXPECT_GT(metadata, 0u);
}

// A trace whose times are whole microseconds is written with integer ts and dur on every
// event, metadata included, so HTA's ts column stays int64 and nothing is rounded.
TEST(ChromeWriter, WholeMicrosecondTracesHaveOnlyIntegerTimestamps) {
  Trace t;
  t.meta.base_time_ns = 1'000'000'000;
  t.track_names.push_back({"100", "", "python"});
  ApiCall a;
  a.name = t.intern("cudaLaunchKernel");
  a.pid = 100;
  a.tid = 1;
  a.start = 1'000'002'000;
  a.end = 1'000'007'000;
  a.correlation = 5;
  t.api_calls.push_back(a);
  Kernel k;
  k.name = t.intern("gemm");
  k.device = 0;
  k.stream = 7;
  k.start = 1'000'010'000;
  k.end = 1'000'030'000;
  k.correlation = 5;
  t.kernels.push_back(k);
  t.finalize();
  const json doc = json::parse(chrome_json_string(t));
  std::size_t checked = 0;
  for (const auto& e : doc["traceEvents"]) {
    ASSERT_TRUE(e.contains("ts")) << e.dump();
    EXPECT_TRUE(e["ts"].is_number_integer()) << e.dump();
    if (e.contains("dur")) {
      EXPECT_TRUE(e["dur"].is_number_integer()) << e.dump();
    }
    ++checked;
  }
  EXPECT_GE(checked, 5u);  // 2 slices, the flow's 2 ends, track names
}

}  // namespace
}  // namespace syncscope
