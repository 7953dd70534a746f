// Runs of events parsed as one array (json_stream.hpp, EventRun; ChromeReader::handle_run) and
// records reserved from the input's size (record_blocks.hpp, ChunkedVec::reserve): both are
// speed only, so every read must give the same trace, or the same error message, as the
// event-by-event path. A read in 3-byte chunks never forms a run (no event fits in a chunk),
// which makes it the reference here.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "byte_source.hpp"
#include "chrome_reader.hpp"
#include "io_test_util.hpp"
#include "record_blocks.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/io/trace_io.hpp"
#include "trace_compare.hpp"

namespace syncscope {
namespace {

std::string read_error(std::string_view text, std::size_t chunk) {
  ReadOptions o;
  o.chunk_bytes = chunk;
  try {
    parse_chrome_json(text, "runs.json", o);
  } catch (const InputError& e) {
    return e.what();
  }
  return "<no error>";
}

Trace read(std::string_view text, std::size_t chunk) {
  ReadOptions o;
  o.chunk_bytes = chunk;
  return parse_chrome_json(text, "runs.json", o);
}

// A kernel event with a nested object in its args (so "}," occurs inside the event) and a
// name that holds "}," and "{" in a string.
std::string kernel(int i) {
  const std::string ts = std::to_string(10 * i);
  return R"({"ph": "X", "cat": "kernel", "name": "k},{)" + std::to_string(i) + R"(", "pid": 0, "tid": 7, "ts": )" + ts +
         R"(, "dur": 2, "args": {"device": 0, "stream": 7, "correlation": )" + std::to_string(i) +
         R"(, "extra": {"a": {"b": 1}, "c": [{"d": 2}, {"e": 3}]}, "grid": [1, 1, 1]}})";
}

std::string runtime(int i) {
  return R"({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": )" +
         std::to_string(10 * i) + R"(, "dur": 1, "args": {"correlation": )" + std::to_string(i) + "}}";
}

// n good events before and after `middle` (an event's text, or any other text put there).
std::string trace_around(std::string_view middle, int n) {
  std::string s = "{\"traceEvents\": [\n";
  for (int i = 0; i < n; ++i) s += "  " + runtime(i) + ",\n  " + kernel(i) + ",\n";
  s += "  ";
  s += middle;
  for (int i = n; i < 2 * n; ++i) s += ",\n  " + runtime(i) + ",\n  " + kernel(i);
  s += "\n]}";
  return s;
}

TEST(EventRuns, ErrorsInsideARunAreReportedAsEventByEvent) {
  // Each bad event sits after 100 good ones and before 100 more: inside a run in a whole read.
  const std::vector<std::string> bad_events = {
      R"({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": true, "dur": 1})",
      R"({"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 7, "ts": 1.2.3, "dur": 1})",
      R"({"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 7, "ts": 1e400, "dur": 1})",
      R"({"ph": "X", "cat": "cpu_op", "name": "a" "pid": 1, "tid": 7, "ts": 1, "dur": 1})",
      "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"bad \xC3\x28 utf8\", \"pid\": 1, \"tid\": 1, \"ts\": 1, "
      "\"dur\": 1}",
      R"({"ph": "X", "cat": "cpu_op", "name": "bad \q escape", "pid": 1, "tid": 1, "ts": 1, "dur": 1})",
      R"({"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 1, "args": {"x": [1, 2}})",
      R"({"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 1, "args": {"x": tru}})",
      R"({"cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 1})",
      R"([1, 2])",
  };
  // Bad text between events: a missing comma, two commas, the array closed early.
  const std::vector<std::string> bad_separators = {
      R"({"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 1} {"ph": "i"})",
      R"({"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 1},,)",
      R"({"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 1}])",
      R"({"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 1}, ])",
      R"({"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 1}]})",
      R"({"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 1}: 1)",
  };
  for (const auto* list : {&bad_events, &bad_separators}) {
    for (const std::string& b : *list) {
      // After 100 good events and before 100 more: inside a run in a whole read.
      const std::string text = trace_around(b, 50);
      const std::string whole = read_error(text, std::size_t{1} << 20);
      EXPECT_NE(whole, "<no error>") << b;
      EXPECT_EQ(whole, read_error(text, 3)) << "whole and event-by-event reads report differently for " << b;
      if (list == &bad_events) {
        EXPECT_NE(whole.find("traceEvents[100]"), std::string::npos) << whole;
      }
    }
  }
}

TEST(EventRuns, CutsInsideStringsAndNestedObjectsReadTheSame) {
  // "}," inside names and nested args in every event: wherever a chunk ends, the run's cut
  // (the last "}," before it) may fall inside a string or an event; the trace must not change.
  const std::string text = trace_around(kernel(1000), 40);
  const Trace reference = read(text, 3);
  ASSERT_EQ(reference.kernels.size(), 81u);
  ASSERT_EQ(reference.api_calls.size(), 80u);
  for (std::size_t chunk = 64; chunk < 2500; chunk += 29) {
    const Trace t = read(text, chunk);
    const std::string d = test::diff_traces(reference, t);
    ASSERT_TRUE(d.empty()) << "chunk " << chunk << ": " << d;
  }
  EXPECT_TRUE(test::diff_traces(reference, read(text, std::size_t{1} << 20)).empty());
}

TEST(EventRuns, ATraceWithoutCommaBracePairsStillReads) {
  // Compact JSON ("},{" with no space) and a single event: runs or not, the same trace.
  std::string text = "{\"traceEvents\":[";
  for (int i = 0; i < 300; ++i) text += (i ? "," : "") + runtime(i);
  text += "]}";
  const Trace reference = read(text, 3);
  EXPECT_EQ(reference.api_calls.size(), 300u);
  EXPECT_TRUE(test::diff_traces(reference, read(text, std::size_t{1} << 20)).empty());
  const std::string one = "{\"traceEvents\": [" + kernel(1) + "]}";
  EXPECT_TRUE(test::diff_traces(read(one, 3), read(one, std::size_t{1} << 20)).empty());
}

// A source with a given size hint (0: unknown), for the reservation from the input's size.
class HintSource final : public io_detail::ByteSource {
 public:
  HintSource(std::string_view data, std::uint64_t hint) : mem_(data), hint_(hint) {}
  std::size_t read(char* dst, std::size_t max) override { return mem_.read(dst, max); }
  std::uint64_t size_hint() const override { return hint_; }

 private:
  io_detail::MemorySource mem_;
  std::uint64_t hint_;
};

TEST(EventRuns, ReservingFromTheSizeHintNeverChangesTheTrace) {
  // Over 4 MiB (where the reader estimates), kernels only in the second half: one kind
  // reserved from the first 4 MiB, one that first appears after the estimate.
  std::string text = "{\"traceEvents\": [\n";
  int i = 0;
  while (text.size() < (std::size_t{5} << 20)) text += "  " + runtime(i++) + ",\n";
  for (int k = 0; k < 3000; ++k) text += "  " + kernel(i + k) + ",\n";
  text += "  " + runtime(i) + "\n]}";
  HintSource unknown(text, 0);
  const Trace reference = io_detail::read_chrome_json(unknown, "hint", std::size_t{1} << 20);
  ASSERT_EQ(reference.kernels.size(), 3000u);
  for (const std::uint64_t hint :
       {std::uint64_t{1}, std::uint64_t{5} << 20, static_cast<std::uint64_t>(text.size()), std::uint64_t{1} << 40}) {
    HintSource src(text, hint);
    const Trace t = io_detail::read_chrome_json(src, "hint", std::size_t{1} << 20);
    const std::string d = test::diff_traces(reference, t);
    EXPECT_TRUE(d.empty()) << "hint " << hint << ": " << d;
  }
  // From files: a regular file's size, and a .json.gz's estimate taken while the read-ahead
  // thread inflates (ByteSource::size_hint is called from the parser's thread).
  const auto dir = std::filesystem::temp_directory_path() / ("syncscope-runs-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  test::spit(dir / "t.json", text);
  test::spit_gz(dir / "t.json.gz", text);
  for (const char* name : {"t.json", "t.json.gz"}) {
    const Trace t = read_trace(dir / name);
    const std::string d = test::diff_traces(reference, t);
    EXPECT_TRUE(d.empty()) << name << ": " << d;
  }
  std::filesystem::remove_all(dir);
}

TEST(EventRuns, ChunkedVecKeepsOrderAcrossTheReservationAndTheBlocks) {
  io_detail::ChunkedVec<std::uint64_t> v;
  std::uint64_t next = 0;
  for (; next < 1000; ++next) v.push(next);           // into blocks
  ASSERT_TRUE(v.reserve(5000));                       // blocks moved into the reservation
  EXPECT_FALSE(v.reserve(9000));                      // once only
  for (; next < 5000 + 600000; ++next) v.push(next);  // fills it, then spills into blocks again
  EXPECT_EQ(v.size(), next);
  std::uint64_t expect = 0;
  bool ordered = true;
  v.for_each([&](std::uint64_t& x) { ordered = ordered && x == expect++; });
  EXPECT_TRUE(ordered);
  std::vector<std::uint64_t> out;
  v.move_into(out);
  ASSERT_EQ(out.size(), next);
  for (std::uint64_t k = 0; k < next; ++k) ASSERT_EQ(out[k], k);
  EXPECT_EQ(v.size(), 0u);

  io_detail::ChunkedVec<std::uint64_t> fits;  // everything in the reservation: handed over
  ASSERT_TRUE(fits.reserve(100));
  for (std::uint64_t k = 0; k < 100; ++k) fits.push(k);
  std::vector<std::uint64_t> got;
  fits.move_into(got);
  ASSERT_EQ(got.size(), 100u);
  EXPECT_EQ(got.back(), 99u);
  EXPECT_GE(got.capacity(), 100u);
}

TEST(EventRuns, SizeHints) {
  const std::string data(1000, 'x');
  io_detail::MemorySource mem(data);
  EXPECT_EQ(mem.size_hint(), 1000u);

  std::FILE* f = std::tmpfile();  // a regular file: its size
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(std::fwrite(data.data(), 1, data.size(), f), data.size());
  ASSERT_EQ(std::fflush(f), 0);
  {
    io_detail::FdSource file_source(fileno(f), "file", false);
    EXPECT_EQ(file_source.size_hint(), 1000u);
  }
  std::fclose(f);

  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  {
    io_detail::FdSource pipe_source(fds[0], "pipe", true);  // a pipe: no size
    EXPECT_EQ(pipe_source.size_hint(), 0u);
  }
  ::close(fds[1]);

  // gzip: the compressed size scaled by how much the bytes read so far grew; exact once all is read.
  std::string text;
  std::uint32_t x = 7;
  while (text.size() < 400000) {
    x = x * 1103515245u + 12345u;
    text += std::to_string(x >> 8) + (x % 3 == 0 ? "\n" : " ");
  }
  const auto gz_path = std::filesystem::temp_directory_path() / ("syncscope-hint-" + std::to_string(getpid()) + ".gz");
  test::spit_gz(gz_path, text);
  const std::string gz = test::slurp(gz_path);
  std::filesystem::remove(gz_path);
  io_detail::GzipSource inflate(std::make_unique<io_detail::MemorySource>(gz), "hint.gz", 1 << 16);
  EXPECT_EQ(inflate.size_hint(), 0u);  // nothing read yet
  std::string buf(1 << 16, '\0');
  std::size_t total = 0;
  for (std::size_t n; (n = inflate.read(buf.data(), buf.size())) > 0;) total += n;
  EXPECT_EQ(total, text.size());
  EXPECT_EQ(inflate.size_hint(), text.size());
}

}  // namespace
}  // namespace syncscope
