// Generous where we do not need a value, exact where we do: an argument of a type
// the reader does not read is kept out of the record and counted once per (category, field);
// an event whose category cannot be placed without it is skipped and counted; ids, streams and
// pointers written as text read as integers; a key given twice is counted. None of these
// fails the trace.
#include <gtest/gtest.h>

#include "io_test_util.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/io/trace_io.hpp"

namespace syncscope {
namespace {

Trace parse(std::string_view events, std::size_t chunk = std::size_t{1} << 20) {
  ReadOptions o;
  o.chunk_bytes = chunk;
  return parse_chrome_json("{\"traceEvents\": [" + std::string(events) + "]}", "t.json", o);
}

const ReadWarning* find_warning(const Trace& t, ReadWarning::Kind kind, std::string_view field) {
  for (const auto& w : t.meta.read_warnings)
    if (w.kind == kind && w.field == field) return &w;
  return nullptr;
}

// torch.compile: Inductor's Triton launch range is a cpu_op with "grid": "grid(100,)" and a
// raw stream number; a cpu_op reads neither, so nothing is said about them.
TEST(Generous, ArgumentsACategoryDoesNotReadAreNotLookedAt) {
  const Trace t = parse(R"j(
    {"ph":"X","cat":"cpu_op","name":"triton_poi_fused_add_0","pid":1,"tid":1,"ts":1,"dur":2,
     "args":{"External id":5,"kernel_backend":"triton","grid":"grid(100,)","stream":94371840,"num_warps":4}},
    {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":1,"dur":1,"args":{"device":"cuda:0","bytes":"4 MB"}})j");
  ASSERT_EQ(t.ranges.size(), 2u);
  EXPECT_EQ(t.ranges[0].external_id, 5u);
  EXPECT_TRUE(t.meta.read_warnings.empty()) << describe(t.meta.read_warnings.front());
}

TEST(Generous, ABadValueARecordReadsIsKeptOutAndCountedOncePerField) {
  // Three kernels whose grid is text: each kept (grid 0), one warning counting 3 with the
  // first value; the block of the second is an array of 2: its own warning.
  const Trace t = parse(R"j(
    {"ph":"X","cat":"kernel","name":"a","pid":0,"tid":7,"ts":1,"dur":1,"args":{"grid":"grid(100,)","block":[128,1,1]}},
    {"ph":"X","cat":"kernel","name":"b","pid":0,"tid":7,"ts":2,"dur":1,"args":{"grid":"grid(8,)","block":[1,2]}},
    {"ph":"X","cat":"kernel","name":"c","pid":0,"tid":7,"ts":3,"dur":1,"args":{"grid":{"x":1},"correlation":-3}})j");
  ASSERT_EQ(t.kernels.size(), 3u);
  EXPECT_EQ(t.kernels[0].grid[0], 0);
  EXPECT_EQ(t.kernels[0].block[0], 128);
  EXPECT_EQ(t.kernels[1].block[0], 0);  // a bad array leaves the record untouched
  EXPECT_EQ(t.kernels[2].correlation, 0u);
  const ReadWarning* grid = find_warning(t, ReadWarning::Kind::ArgumentType, "args.grid");
  ASSERT_NE(grid, nullptr);
  EXPECT_EQ(grid->count, 3u);
  EXPECT_EQ(grid->category, "kernel");
  EXPECT_EQ(grid->first_event, 0u);
  EXPECT_EQ(grid->example, "\"grid(100,)\"");
  EXPECT_EQ(grid->expected, "an array of 3 integers");
  const ReadWarning* block = find_warning(t, ReadWarning::Kind::ArgumentType, "args.block");
  ASSERT_NE(block, nullptr);
  EXPECT_EQ(block->count, 1u);
  EXPECT_EQ(block->example, "an array of 2 integers");
  const ReadWarning* corr = find_warning(t, ReadWarning::Kind::ArgumentType, "args.correlation");
  ASSERT_NE(corr, nullptr);
  EXPECT_EQ(corr->first_event, 2u);
  EXPECT_EQ(corr->example, "-3");
  EXPECT_EQ(t.meta.read_warnings.size(), 3u);
  const std::string line = describe(*grid);
  EXPECT_NE(line.find("3 \"kernel\" events"), std::string::npos) << line;
  EXPECT_NE(line.find("traceEvents[0]"), std::string::npos) << line;
  EXPECT_NE(line.find("kept as text, not used"), std::string::npos) << line;
}

TEST(Generous, IdsStreamsAndPointersWrittenAsTextReadAsIntegers) {
  const Trace t = parse(R"j(
    {"ph":"X","cat":"cuda_runtime","name":"hipMemcpyWithStream","pid":9,"tid":9,"ts":1,"dur":5,
     "args":{"stream":"0x0","correlation":"0x10","External id":"7","kind":"1","size":"4096","dst":"0x7f1a2c000000"}},
    {"ph":"X","cat":"kernel","name":"k","pid":0,"tid":0,"ts":2,"dur":1,
     "args":{"device":"0","stream":"0x1f","correlation":"17","context":"0X2"}})j");
  ASSERT_EQ(t.api_calls.size(), 1u);
  EXPECT_EQ(t.api_calls[0].correlation, 16u);
  EXPECT_EQ(t.api_calls[0].external_id, 7u);
  EXPECT_EQ(t.api_calls[0].copy_kind, CopyKind::HtoD);  // hipMemcpyKind 1
  ASSERT_EQ(t.kernels.size(), 1u);
  EXPECT_EQ(t.kernels[0].device, 0);
  EXPECT_EQ(t.kernels[0].stream, 31);
  EXPECT_EQ(t.kernels[0].correlation, 17u);
  EXPECT_EQ(t.kernels[0].context, 2u);
  EXPECT_TRUE(t.meta.read_warnings.empty());
}

// A kernel, copy or memset cannot be placed without its device and stream: skipped, counted.
TEST(Generous, EventsWithoutAValueTheirCategoryNeedsAreSkippedAndCounted) {
  const Trace t = parse(R"j(
    {"ph":"X","cat":"kernel","name":"a","pid":0,"tid":7,"ts":1,"dur":1,"args":{"device":"cuda:0"}},
    {"ph":"X","cat":"kernel","name":"b","pid":0,"tid":7,"ts":2,"dur":1,"args":{"device":4294967296}},
    {"ph":"X","cat":"gpu_memcpy","name":"Memcpy HtoD (Pinned -> Device)","pid":0,"tid":7,"ts":3,"dur":1,"args":{"stream":[7]}},
    {"ph":"X","cat":"kernel","name":"c","pid":0,"tid":7,"ts":4,"dur":1,"args":{"device":0,"stream":7}})j");
  ASSERT_EQ(t.kernels.size(), 1u);
  EXPECT_EQ(t.str(t.kernels[0].name), "c");
  EXPECT_TRUE(t.memcpys.empty());
  const ReadWarning* dev = find_warning(t, ReadWarning::Kind::SkippedEvent, "args.device");
  ASSERT_NE(dev, nullptr);
  EXPECT_EQ(dev->count, 2u);
  EXPECT_EQ(dev->example, "\"cuda:0\"");
  EXPECT_EQ(dev->expected, "a 32-bit integer");
  const ReadWarning* stream = find_warning(t, ReadWarning::Kind::SkippedEvent, "args.stream");
  ASSERT_NE(stream, nullptr);
  EXPECT_EQ(stream->category, "gpu_memcpy");
  EXPECT_EQ(stream->first_event, 2u);
  EXPECT_NE(describe(*dev).find("skipped"), std::string::npos);
}

TEST(Generous, EventFieldsOfOtherTypesAreCounted) {
  const Trace t = parse(R"j(
    {"ph":"X","cat":"cpu_op","name":"a","pid":true,"tid":1.5,"ts":1,"dur":1},
    {"ph":"X","cat":"cpu_op","name":"b","pid":1,"tid":1,"ts":1,"dur":1,"args":[1]})j");
  ASSERT_EQ(t.ranges.size(), 2u);
  EXPECT_EQ(t.ranges[0].pid, -1);
  EXPECT_EQ(t.ranges[0].tid, -1);
  ASSERT_NE(find_warning(t, ReadWarning::Kind::ArgumentType, "pid"), nullptr);
  EXPECT_EQ(find_warning(t, ReadWarning::Kind::ArgumentType, "tid")->example, "1.5");
  EXPECT_EQ(find_warning(t, ReadWarning::Kind::ArgumentType, "args")->example, "an array");
}

// Issue 39: the first value is kept (a planted second "dur" made GPU busy 1e9 s), the event counted.
TEST(Generous, KeysGivenTwiceAreCountedAndTheFirstValueIsKept) {
  const std::string events = R"j(
    {"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1,"dur":1,"dur":2,"args":{"device":0}},
    {"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":5,"dur":1,"args":{"correlation":3,"correlation":4}},
    {"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":9,"dur":1,"zz":1,"args":{"x":1,"x":[2]},"zz":2},
    {"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":9,"dur":1,"args":{"External id":1,"External id":2}})j";
  for (std::size_t chunk : {std::size_t{1} << 20, std::size_t{3}}) {
    const Trace t = parse(events, chunk);
    ASSERT_EQ(t.kernels.size(), 4u);
    EXPECT_EQ(t.kernels[0].end - t.kernels[0].start, 1000);
    EXPECT_EQ(t.kernels[1].correlation, 3u);
    const ReadWarning* dur = find_warning(t, ReadWarning::Kind::DuplicateKey, "dur");
    ASSERT_NE(dur, nullptr);
    EXPECT_EQ(dur->count, 1u);
    ASSERT_NE(find_warning(t, ReadWarning::Kind::DuplicateKey, "args.correlation"), nullptr);
    EXPECT_EQ(find_warning(t, ReadWarning::Kind::DuplicateKey, "args.correlation")->first_event, 1u);
    ASSERT_NE(find_warning(t, ReadWarning::Kind::DuplicateKey, "args.x"), nullptr);  // first duplicate of event 2
    ASSERT_NE(find_warning(t, ReadWarning::Kind::DuplicateKey, "args.External id"), nullptr);
    EXPECT_NE(describe(*dur).find("the first value was kept"), std::string::npos) << describe(*dur);
    EXPECT_NE(describe(*dur).find("(first: traceEvents[0] at offset "), std::string::npos) << describe(*dur);
  }
}

TEST(Generous, StructuralDamageStillFailsWithItsLocation) {
  for (const char* bad : {
           R"j({"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":"soon","dur":1})j",
           R"j({"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1,"dur":1,"args":{"grid":"a\q"}})j",
           R"j({"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1,"dur":1,"args":{"device":1e999}})j",
           R"j({"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1,"dur":1,"args":{"stream":[1,}})j",
       }) {
    try {
      parse(bad);
      ADD_FAILURE() << "no error: " << bad;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("traceEvents[0]"), std::string::npos) << e.what();
    }
  }
}

// A PyTorch execution trace is JSON but not a Chrome trace: the clear message it gets today.
TEST(Generous, AnExecutionTraceIsNotATrace) {
  const std::string et = R"j({"schema": "1.0.4", "pid": 4410, "time": "2024-06-01 10:00:00", "start_ts": 1,
    "nodes": [{"id": 1, "name": "[pytorch|profiler|execution_trace|process]", "ctrl_deps": 0, "inputs": {}}],
    "finish_ts": 2})j";
  try {
    parse_chrome_json(et, "et.json");
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("et.json: no \"traceEvents\" array: not a Chrome trace"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace syncscope
