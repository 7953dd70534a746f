#include <gtest/gtest.h>

#include "io_test_util.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/io/trace_io.hpp"
#include "trace_compare.hpp"

namespace syncscope {
namespace {

using test::torch_fixture;
using test::trace_fixture;

constexpr Ns kBase = 1'700'000'000'000'000'000;  // baseTimeNanoseconds of kineto_all_categories.json
constexpr Ns at(Ns ns_after_base) { return kBase + ns_after_base; }

// The real torch.profiler trace recorded on an H200 (tests/fixtures/torch/README.md). The
// expected counts were taken from the file with python3's json module:
// X events by cat: cpu_op 288, cuda_runtime 170, kernel 120, user_annotation 27, cuda_sync 26,
// cuda_driver 24, gpu_memcpy 24, gpu_user_annotation 24, overhead 1, Trace 1; 2 "i" events;
// M events: 17 process_name + 4 thread_name (plus labels and sort indexes).
TEST(ChromeReader, RealTorchProfilerTraceLoadsUnchanged) {
  const Trace t = read_trace(torch_fixture());
  EXPECT_EQ(t.kernels.size(), 120u);
  EXPECT_EQ(t.memcpys.size(), 24u);
  EXPECT_EQ(t.memsets.size(), 0u);
  EXPECT_EQ(t.syncs.size(), 26u);
  EXPECT_EQ(t.api_calls.size(), 170u + 24u);
  std::size_t runtime = 0, driver = 0, stream_syncs = 0;
  for (const auto& a : t.api_calls) {
    (a.kind == ApiKind::Runtime ? runtime : driver)++;
    if (t.str(a.name) == "cudaStreamSynchronize") ++stream_syncs;
  }
  EXPECT_EQ(runtime, 170u);
  EXPECT_EQ(driver, 24u);
  EXPECT_EQ(stream_syncs, 24u);
  std::size_t cpu_ops = 0, annotations = 0, gpu_annotations = 0;
  for (const auto& r : t.ranges) {
    if (r.kind == RangeKind::CpuOp) ++cpu_ops;
    if (r.kind == RangeKind::UserAnnotation) ++annotations;
    if (r.kind == RangeKind::GpuUserAnnotation) ++gpu_annotations;
  }
  EXPECT_EQ(cpu_ops, 288u);
  EXPECT_EQ(annotations, 27u);
  EXPECT_EQ(gpu_annotations, 24u);
  EXPECT_EQ(t.overheads.size(), 1u);
  EXPECT_EQ(t.others.size(), 3u);  // the "Trace" span and two instant events
  EXPECT_EQ(t.track_names.size(), 21u);
  for (const auto& m : t.memcpys) {
    EXPECT_EQ(m.kind, CopyKind::DtoH);  // "Memcpy DtoH (Device -> Pinned)"
    EXPECT_EQ(m.src_kind, MemoryKind::Device);
    EXPECT_EQ(m.dst_kind, MemoryKind::Pinned);
    EXPECT_EQ(m.bytes, 4u);
  }
  std::size_t context_syncs = 0;
  for (const auto& s : t.syncs)
    if (s.type == SyncType::ContextSync) {
      ++context_syncs;
      EXPECT_EQ(s.stream, -1);
    } else {
      EXPECT_EQ(s.type, SyncType::StreamSync);
      EXPECT_EQ(s.stream, 7);
    }
  EXPECT_EQ(context_syncs, 2u);

  // Exact times: baseTimeNanoseconds 1790857026000000000 + ts 5140410409010.564 us.
  const auto& k0 = t.kernels.front();
  EXPECT_EQ(k0.start, 1795997436409010564);
  EXPECT_EQ(k0.end - k0.start, 7712);
  EXPECT_EQ(k0.device, 0);
  EXPECT_EQ(k0.context, 1u);
  EXPECT_EQ(k0.stream, 7);
  EXPECT_EQ(k0.correlation, 15u);
  EXPECT_EQ(k0.external_id, 4u);
  EXPECT_EQ(k0.registers_per_thread, 76);
  EXPECT_EQ(k0.shared_memory_bytes, 20480);
  EXPECT_EQ(k0.grid[0], 8);
  EXPECT_EQ(k0.grid[1], 2);
  EXPECT_EQ(k0.grid[2], 8);
  EXPECT_EQ(k0.block[0], 128);
  const auto& a0 = t.api_calls.front();
  EXPECT_EQ(t.str(a0.name), "cudaDeviceGetAttribute");
  EXPECT_EQ(a0.start, 1795997436408937759);
  EXPECT_EQ(a0.end - a0.start, 3127);
  EXPECT_EQ(a0.cbid, 200);
  EXPECT_EQ(a0.pid, 915);
  EXPECT_EQ(a0.tid, 915);
  const auto span = t.time_span();
  // time_span() covers the modelled records: train_step#0 starts first (the profiler's own,
  // earlier "Trace" span is an OtherEvent), and nothing ends after the last X event.
  EXPECT_EQ(span.first, 1795997436405693753);
  EXPECT_LE(span.second, 1795997436415203352);

  EXPECT_EQ(t.meta.source_tool, "torch.profiler");
  EXPECT_EQ(t.meta.source_schema_version, 1);
  EXPECT_EQ(t.meta.base_time_ns, 1790857026000000000);
  EXPECT_EQ(t.meta.clock, ClockBase::UnixEpoch);
  EXPECT_EQ(t.meta.trace_name, "/root/out/probe/item_loop_l8.json");
  EXPECT_EQ(t.meta.source_version, "CUPTI 130001, CUDA driver 13000, CUDA runtime 13000");
  EXPECT_EQ(t.meta.extra.at("trace_id"), "8D57ED0CD5E24727B64F7BFC0812595A");
  EXPECT_EQ(t.meta.unknown_categories.at("Trace"), 1u);
  EXPECT_EQ(t.meta.unknown_categories.at("(none)"), 2u);
  ASSERT_EQ(t.devices.size(), 1u);
  EXPECT_EQ(t.devices[0].name, "NVIDIA H200");
  EXPECT_EQ(t.devices[0].total_memory_bytes, 150109880320u);
  EXPECT_EQ(t.devices[0].compute_major, 9);
  EXPECT_EQ(t.devices[0].sm_count, 132);
  EXPECT_EQ(t.devices[0].shared_mem_per_block_optin, 232448);
  // Ranges get their nesting depth: train_step#0 encloses layer_00.
  std::size_t layer00 = 0;
  for (const auto& r : t.ranges) {
    if (t.str(r.name) == "layer_00" && r.kind == RangeKind::UserAnnotation) {
      EXPECT_EQ(r.depth, 1);
      ++layer00;
    }
  }
  EXPECT_EQ(layer00, 3u);
}

TEST(ChromeReader, EveryCategoryMapsOntoTheModel) {
  const Trace t = read_trace(trace_fixture("kineto_all_categories.json"));
  ASSERT_EQ(t.ranges.size(), 4u);
  EXPECT_EQ(t.ranges[0].kind, RangeKind::UserAnnotation);
  EXPECT_EQ(t.str(t.ranges[0].name), "ProfilerStep#0");
  EXPECT_EQ(t.ranges[0].start, at(1'000'000));
  EXPECT_EQ(t.ranges[0].end, at(1'500'000));
  EXPECT_EQ(t.ranges[0].external_id, 1u);
  EXPECT_EQ(t.ranges[0].depth, 0);
  EXPECT_EQ(t.ranges[1].kind, RangeKind::PythonFunction);
  EXPECT_EQ(t.ranges[1].depth, 1);
  EXPECT_EQ(t.ranges[2].kind, RangeKind::CpuOp);
  EXPECT_EQ(t.str(t.ranges[2].name), "aten::mm");
  EXPECT_EQ(t.ranges[2].pid, 100);
  EXPECT_EQ(t.ranges[2].tid, 101);
  EXPECT_EQ(t.ranges[2].depth, 2);
  EXPECT_EQ(t.ranges[3].kind, RangeKind::GpuUserAnnotation);
  EXPECT_EQ(t.ranges[3].device, 0);
  EXPECT_EQ(t.ranges[3].stream, 7);
  EXPECT_EQ(t.ranges[3].pid, -1);
  EXPECT_EQ(t.ranges[3].start, at(1'029'999));
  EXPECT_EQ(t.ranges[3].end, at(1'130'001));
  EXPECT_EQ(t.ranges[3].depth, 0);

  ASSERT_EQ(t.api_calls.size(), 6u);
  const auto& launch = t.api_calls[0];
  EXPECT_EQ(launch.kind, ApiKind::Runtime);
  EXPECT_EQ(t.str(launch.name), "cudaLaunchKernel");
  EXPECT_EQ(launch.cbid, 211);
  EXPECT_EQ(launch.correlation, 10u);
  EXPECT_EQ(launch.external_id, 2u);
  EXPECT_EQ(launch.start, at(1'020'000));
  EXPECT_EQ(launch.end, at(1'025'500));
  EXPECT_EQ(t.str(t.api_calls[1].name), "cudaMemcpyAsync");  // its keys come in reverse order
  EXPECT_EQ(t.api_calls[1].pid, 100);
  EXPECT_EQ(t.api_calls[1].external_id, 3u);
  EXPECT_EQ(t.api_calls[2].kind, ApiKind::Driver);
  EXPECT_EQ(t.str(t.api_calls[2].name), "cuLaunchKernel");
  EXPECT_EQ(t.api_calls[2].cbid, 307);

  ASSERT_EQ(t.kernels.size(), 2u);
  const auto& k = t.kernels[0];
  EXPECT_EQ(t.str(k.name), "void gemm<\"q\">(float*) \xC3\xA9\t");  // JSON escapes decoded
  EXPECT_EQ(k.start, at(1'030'125));
  EXPECT_EQ(k.end, at(1'050'125));
  EXPECT_EQ(k.device, 0);
  EXPECT_EQ(k.stream, 7);
  EXPECT_EQ(k.correlation, 10u);
  EXPECT_EQ(k.registers_per_thread, 64);
  EXPECT_EQ(k.shared_memory_bytes, 1024);
  EXPECT_EQ(k.grid[0], 4);
  EXPECT_EQ(k.grid[1], 2);
  EXPECT_EQ(k.block[0], 128);

  ASSERT_EQ(t.memcpys.size(), 3u);
  EXPECT_EQ(t.memcpys[0].kind, CopyKind::HtoD);
  EXPECT_EQ(t.memcpys[0].src_kind, MemoryKind::Pinned);
  EXPECT_EQ(t.memcpys[0].dst_kind, MemoryKind::Device);
  EXPECT_EQ(t.memcpys[0].bytes, 4096u);
  EXPECT_EQ(t.memcpys[0].stream, 8);
  EXPECT_EQ(t.memcpys[1].kind, CopyKind::DtoH);
  EXPECT_EQ(t.memcpys[1].dst_kind, MemoryKind::Pageable);
  EXPECT_EQ(t.memcpys[1].start, at(1'070'500));  // "ts": "1070.500" (string form)
  EXPECT_EQ(t.memcpys[1].end, at(1'071'500));
  EXPECT_EQ(t.memcpys[2].kind, CopyKind::PtoP);
  EXPECT_EQ(t.memcpys[2].device, 0);  // inDevice
  EXPECT_EQ(t.memcpys[2].peer_device, 1);
  EXPECT_EQ(t.memcpys[2].context, 1u);
  EXPECT_EQ(t.memcpys[2].bytes, 1048576u);

  ASSERT_EQ(t.memsets.size(), 1u);
  EXPECT_EQ(t.memsets[0].memory_kind, MemoryKind::Device);
  EXPECT_EQ(t.memsets[0].bytes, 256u);
  EXPECT_EQ(t.memsets[0].end - t.memsets[0].start, 750);

  ASSERT_EQ(t.syncs.size(), 4u);
  EXPECT_EQ(t.syncs[0].type, SyncType::StreamSync);
  EXPECT_EQ(t.syncs[0].stream, 7);
  EXPECT_EQ(t.syncs[0].correlation, 16u);
  EXPECT_EQ(t.syncs[0].wait_on_event_record_correlation, -1);
  EXPECT_EQ(t.syncs[1].type, SyncType::StreamWaitEvent);
  EXPECT_EQ(t.syncs[1].wait_on_stream, 8);
  EXPECT_EQ(t.syncs[1].wait_on_event_record_correlation, 17);
  EXPECT_EQ(t.syncs[1].event_id, 42u);
  EXPECT_EQ(t.syncs[2].type, SyncType::EventSync);
  EXPECT_EQ(t.syncs[2].stream, -1);
  EXPECT_EQ(t.syncs[3].type, SyncType::ContextSync);
  EXPECT_EQ(t.syncs[3].stream, -1);
  EXPECT_EQ(t.syncs[3].external_id, 20u);

  ASSERT_EQ(t.cuda_events.size(), 1u);
  EXPECT_EQ(t.cuda_events[0].timestamp, at(1'161'000));
  EXPECT_EQ(t.cuda_events[0].event_id, 42u);
  EXPECT_EQ(t.cuda_events[0].stream, 8);
  EXPECT_EQ(t.cuda_events[0].correlation, 17u);

  ASSERT_EQ(t.overheads.size(), 1u);
  EXPECT_EQ(t.str(t.overheads[0].name), "Activity Buffer Request");
  EXPECT_EQ(t.overheads[0].pid, -1);

  // The forward->backward arrow ("fwdbwd") is kept with its id; launch arrows ("ac2g") are not
  // stored (they follow from correlation ids).
  std::vector<OtherEvent> others;
  std::size_t flows = 0;
  for (const auto& o : t.others) {
    if (o.phase == 's' || o.phase == 'f' || o.phase == 't') {
      ++flows;
      EXPECT_EQ(t.str(o.category), "fwdbwd");
      EXPECT_EQ(t.str(o.flow_id), "99");
      continue;
    }
    others.push_back(o);
  }
  EXPECT_EQ(flows, 1u);
  ASSERT_EQ(others.size(), 4u);
  EXPECT_EQ(t.str(others[0].category), "Trace");
  EXPECT_EQ(others[0].phase, 'X');
  EXPECT_EQ(t.str(others[0].pid), "Spans");
  EXPECT_EQ(t.str(others[0].tid), "PyTorch Profiler");
  EXPECT_EQ(others[0].duration, 600'000);
  EXPECT_EQ(others[1].phase, 'i');
  EXPECT_EQ(t.str(others[1].pid), "Traces");
  EXPECT_EQ(t.str(others[2].category), "xpu_runtime");
  EXPECT_EQ(t.str(others[2].pid), "100");
  EXPECT_EQ(t.str(others[3].name), "Record Window End");
  EXPECT_EQ(t.str(others[3].pid), "");

  ASSERT_EQ(t.track_names.size(), 5u);
  EXPECT_EQ(t.track_names[0].pid, "100");
  EXPECT_EQ(t.track_names[0].tid, "");
  EXPECT_EQ(t.track_names[0].name, "python3");
  EXPECT_EQ(t.track_names[1].tid, "101");
  EXPECT_EQ(t.track_names[3].name, "stream 7 ");
  EXPECT_EQ(t.track_names[4].pid, "Spans");

  EXPECT_EQ(t.meta.source_tool, "torch.profiler");
  EXPECT_EQ(t.meta.source_version, "CUPTI 130001, CUDA driver 13000, CUDA runtime 13000");
  EXPECT_EQ(t.meta.base_time_ns, kBase);
  EXPECT_EQ(t.meta.clock, ClockBase::UnixEpoch);
  EXPECT_EQ(t.meta.trace_name, "synthetic/kineto_all_categories.json");
  const std::map<std::string, std::uint64_t> unknown = {{"(none)", 2}, {"Trace", 1}, {"xpu_runtime", 1}};
  EXPECT_EQ(t.meta.unknown_categories, unknown);
  EXPECT_EQ(t.meta.extra.at("trace_id"), "ABC123");
  EXPECT_EQ(t.meta.extra.at("cuda_driver_version"), "13000");
  EXPECT_EQ(t.meta.extra.at("distributedInfo"), R"({"backend": "nccl", "rank": 0, "world_size": 1})");
  EXPECT_EQ(t.meta.extra.count("displayTimeUnit"), 0u);
  ASSERT_EQ(t.devices.size(), 1u);
  EXPECT_EQ(t.devices[0].regs_per_sm, 65536);
  EXPECT_EQ(t.devices[0].shared_mem_per_sm, 233472);
}

TEST(ChromeReader, OldTracesWithAbsoluteMicrosecondsAndStringIds) {
  const Trace t = read_trace(trace_fixture("legacy_absolute_us.json"));
  ASSERT_EQ(t.ranges.size(), 1u);
  EXPECT_EQ(t.ranges[0].start, 1700000000123456000);
  EXPECT_EQ(t.ranges[0].end, 1700000000123468000);
  EXPECT_EQ(t.ranges[0].pid, 4242);  // "pid": "4242"
  EXPECT_EQ(t.ranges[0].tid, 4243);
  ASSERT_EQ(t.api_calls.size(), 1u);
  EXPECT_EQ(t.api_calls[0].start, 1700000000123460500);
  EXPECT_EQ(t.api_calls[0].end - t.api_calls[0].start, 15000);  // "dur": 1.5e1
  ASSERT_EQ(t.kernels.size(), 1u);
  EXPECT_EQ(t.kernels[0].start, 1700000000123480789);  // 19 significant digits, exact
  EXPECT_EQ(t.kernels[0].end, 1700000000123483039);
  EXPECT_EQ(t.meta.base_time_ns, 0);
  EXPECT_EQ(t.meta.clock, ClockBase::Unknown);
  EXPECT_EQ(t.meta.source_tool, "torch.profiler");
}

TEST(ChromeReader, BaseTimeAfterTraceEventsStillRebases) {
  const Trace t = read_trace(trace_fixture("base_after_events.json"));
  ASSERT_EQ(t.kernels.size(), 1u);
  EXPECT_EQ(t.kernels[0].start, 1'000'000'000'000 + 2'500);
  EXPECT_EQ(t.kernels[0].end, 1'000'000'000'000 + 3'750);
  ASSERT_EQ(t.ranges.size(), 1u);
  EXPECT_EQ(t.ranges[0].start, 1'000'000'000'000);
  EXPECT_EQ(t.meta.base_time_ns, 1'000'000'000'000);
  EXPECT_EQ(t.meta.clock, ClockBase::UnixEpoch);
  EXPECT_EQ(t.meta.trace_name, "base after events");
}

TEST(ChromeReader, JsonArrayFormatAndBeginEndEvents) {
  const Trace t = read_trace(trace_fixture("chrome_array.json"));
  EXPECT_EQ(t.ranges.size(), 1u);
  EXPECT_EQ(t.kernels.size(), 1u);
  ASSERT_EQ(t.others.size(), 2u);
  EXPECT_EQ(t.others[0].phase, 'B');
  EXPECT_EQ(t.others[1].phase, 'E');
  EXPECT_EQ(t.others[1].start, 25'000);
  EXPECT_EQ(t.meta.unknown_categories.at("(none)"), 2u);
}

TEST(ChromeReader, NegativeRelativeTimesAreFineWhenTheBaseMakesThemPositive) {
  const Trace t = parse_chrome_json(
      R"({"baseTimeNanoseconds": 5000, "traceEvents": [{"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":-2.5,"dur":1}]})",
      "neg.json");
  ASSERT_EQ(t.ranges.size(), 1u);
  EXPECT_EQ(t.ranges[0].start, 2500);
}

// Keys and strings without a backslash are read in place, the others through simdjson's
// unescaping: both spellings of the same event must give the same record.
TEST(ChromeReader, EscapedKeysAndStringsReadLikePlainOnes) {
  const Trace plain = parse_chrome_json(
      R"({"traceEvents": [{"ph":"X","cat":"kernel","name":"gemm \"q\"","pid":0,"tid":"stream 7","ts":1.5,"dur":2,)"
      R"("args":{"device":0,"stream":7,"correlation":3,"grid":[1,2,3]}}]})",
      "plain.json");
  const Trace escaped = parse_chrome_json(
      R"({"traceEvents": [{"\u0070h":"\u0058","c\u0061t":"kern\u0065l","n\u0061me":"gemm \"q\"","pid":0,)"
      R"("t\u0069d":"stream\u00207","\u0074s":"1.5","dur":2,)"
      R"("\u0061rgs":{"d\u0065vice":0,"str\u0065am":"7","correl\u0061tion":3,"gr\u0069d":[1,2,3]}}]})",
      "escaped.json");
  ASSERT_EQ(plain.kernels.size(), 1u);
  ASSERT_EQ(escaped.kernels.size(), 1u);
  EXPECT_EQ(plain.str(plain.kernels[0].name), "gemm \"q\"");
  EXPECT_EQ(escaped.str(escaped.kernels[0].name), "gemm \"q\"");
  for (const Trace* t : {&plain, &escaped}) {
    const Kernel& k = t->kernels[0];
    EXPECT_EQ(k.start, 1500);
    EXPECT_EQ(k.end, 3500);
    EXPECT_EQ(k.stream, 7);
    EXPECT_EQ(k.correlation, 3u);
    EXPECT_EQ(k.grid[2], 3);
    EXPECT_TRUE(t->meta.read_warnings.empty());
  }
}

TEST(ChromeReader, GzipIsRecognizedByContentNotName) {
  test::TempDir dir;
  const std::string text = test::slurp(trace_fixture("kineto_all_categories.json"));
  test::spit_gz(dir / "compressed.json", text);  // gzip data under a .json name
  test::spit(dir / "plain.json.gz", text);       // plain JSON under a .gz name
  const Trace plain = read_trace(trace_fixture("kineto_all_categories.json"));
  EXPECT_EQ(test::diff_traces(plain, read_trace(dir / "compressed.json")), "");
  EXPECT_EQ(test::diff_traces(plain, read_trace(dir / "plain.json.gz")), "");
}

TEST(ChromeReader, MultiMemberGzip) {
  test::TempDir dir;
  const std::string text = test::slurp(trace_fixture("kineto_all_categories.json"));
  const std::size_t half = text.size() / 2;
  test::spit_gz(dir / "a.gz", text.substr(0, half));
  test::spit_gz(dir / "b.gz", text.substr(half));
  test::spit(dir / "joined.json.gz", test::slurp(dir / "a.gz") + test::slurp(dir / "b.gz"));  // cat a.gz b.gz
  EXPECT_EQ(test::diff_traces(read_trace(trace_fixture("kineto_all_categories.json")),
                              read_trace(dir / "joined.json.gz")),
            "");
}

// Every token of the input split across read boundaries: the scanner must carry strings,
// escapes, numbers and nesting over chunk edges.
TEST(ChromeReader, TinyChunksGiveTheSameTrace) {
  for (const char* name : {"kineto_all_categories.json", "legacy_absolute_us.json", "chrome_array.json"}) {
    const std::string text = test::slurp(trace_fixture(name));
    const Trace whole = parse_chrome_json(text, name);
    for (std::size_t chunk : {1, 2, 3, 4, 5, 6, 7, 13, 64, 4096}) {
      ReadOptions o;
      o.chunk_bytes = chunk;
      EXPECT_EQ(test::diff_traces(whole, parse_chrome_json(text, name, o)), "") << name << " chunk " << chunk;
    }
  }
  // The same through gzip inflation with tiny input and output steps.
  ReadOptions o;
  o.chunk_bytes = 3;
  EXPECT_EQ(test::diff_traces(read_trace(torch_fixture()), read_trace(torch_fixture(), o)), "");
}

}  // namespace
}  // namespace syncscope
