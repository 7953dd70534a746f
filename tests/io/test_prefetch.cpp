// The read-ahead thread (prefetch_source.hpp): the same bytes in the same order
// whatever the read sizes, errors handed over after the bytes read before them and naming
// the file and offset, and no hang when the reader stops early, even on a pipe whose
// writer never closes.
#include "prefetch_source.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

#include "io_test_util.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/io/trace_io.hpp"
#include "trace_compare.hpp"

namespace syncscope {
namespace {

using io_detail::ByteSource;
using io_detail::MemorySource;
using io_detail::PrefetchSource;

std::string pattern(std::size_t n) {
  std::string s(n, '\0');
  std::uint32_t x = 12345;
  for (auto& c : s) {
    x = x * 1103515245u + 12345u;
    c = static_cast<char>(x >> 24);
  }
  return s;
}

std::string drain(ByteSource& src, std::size_t step) {
  std::string out, buf(step, '\0');
  for (std::size_t n; (n = src.read(buf.data(), step)) > 0;) out.append(buf.data(), n);
  return out;
}

TEST(Prefetch, SameBytesWhateverTheReadSizes) {
  const std::string data = pattern((std::size_t{3} << 20) + 12345);  // several 64 KiB blocks and a tail
  for (const std::size_t step : {std::size_t{1} << 20, std::size_t{65536}, std::size_t{4097}, std::size_t{7}}) {
    PrefetchSource src(std::make_unique<MemorySource>(data), 1, 2, false);  // block clamped to 64 KiB
    EXPECT_TRUE(src.threaded());
    EXPECT_EQ(drain(src, step), data) << "read size " << step;
    EXPECT_EQ(src.read(nullptr, 0), 0u);
  }
}

// Hands out `good` bytes, then throws as a corrupt gzip member does.
class FailingSource final : public ByteSource {
 public:
  explicit FailingSource(std::string good) : good_(std::move(good)) {}
  std::size_t read(char* dst, std::size_t max) override {
    if (good_.empty()) throw InputError("t.json.gz: corrupt gzip data (invalid block type) near compressed byte 4242");
    const std::size_t n = std::min(max, good_.size());
    std::copy_n(good_.data(), n, dst);
    good_.erase(0, n);
    return n;
  }
  std::string_view offset_unit() const override { return "decompressed byte"; }

 private:
  std::string good_;
};

TEST(Prefetch, ErrorsComeAfterTheBytesBeforeThemAndStay) {
  const std::string good = pattern(200000);
  PrefetchSource src(std::make_unique<FailingSource>(good), 65536, 3, false);
  EXPECT_EQ(src.offset_unit(), "decompressed byte");
  std::string got, buf(1000, '\0');
  try {
    for (;;) {
      const std::size_t n = src.read(buf.data(), buf.size());
      ASSERT_GT(n, 0u) << "the end reported instead of the error";
      got.append(buf.data(), n);
    }
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "t.json.gz: corrupt gzip data (invalid block type) near compressed byte 4242");
  }
  EXPECT_EQ(got, good);
  EXPECT_THROW(src.read(buf.data(), buf.size()), InputError);  // again, never the end
}

TEST(Prefetch, StoppingEarlyReturns) {
  const std::string data = pattern(std::size_t{8} << 20);
  for (int i = 0; i < 20; ++i) {
    PrefetchSource src(std::make_unique<MemorySource>(data), 65536, 4, false);
    char c = 0;
    if (i % 2 == 1) {
      ASSERT_EQ(src.read(&c, 1), 1u);
    }
    EXPECT_EQ(c, i % 2 == 1 ? data[0] : 0);
  }  // each destructor stops and joins a producer that is waiting for a free block
}

TEST(Prefetch, PipeWhoseWriterNeverClosesDoesNotHangTheReader) {
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  ASSERT_EQ(::write(p[1], "{\"traceEvents\": [", 17), 17);
  {
    // The parser gives up on its own schedule (here: after the first bytes); the writer is
    // still open, so the producer sits in read(): closing the source must not wait for it.
    auto in = io_detail::open_input("/dev/fd/" + std::to_string(p[0]), 1 << 20);
    char buf[17];
    std::size_t got = 0;
    while (got < sizeof buf) got += in.source->read(buf + got, sizeof buf - got);
    EXPECT_EQ(std::string(buf, got), "{\"traceEvents\": [");
  }
  ::close(p[1]);  // the detached producer now sees the end and finishes
  ::close(p[0]);
}

TEST(Prefetch, GzipFromAFileAndAPipeReadsAsThePlainFile) {
  test::TempDir dir;
  const std::string text = test::slurp(test::trace_fixture("kineto_all_categories.json"));
  test::spit_gz(dir / "t.json.gz", text);
  const Trace plain = read_trace(test::trace_fixture("kineto_all_categories.json"));
  EXPECT_EQ(test::diff_traces(read_trace(dir / "t.json.gz"), plain), "");
  ReadOptions tiny;
  tiny.chunk_bytes = 7;  // the parser's chunks far smaller than the read-ahead blocks
  EXPECT_EQ(test::diff_traces(read_trace(dir / "t.json.gz", tiny), plain), "");
}

TEST(Prefetch, CorruptGzipNamesTheFileAndTheCompressedOffset) {
  test::TempDir dir;
  const std::string text = test::slurp(test::trace_fixture("kineto_all_categories.json"));
  test::spit_gz(dir / "t.json.gz", text);
  std::string gz = test::slurp(dir / "t.json.gz");
  ASSERT_GT(gz.size(), 200u);
  for (std::size_t i = 100; i < 140; ++i) gz[i] = static_cast<char>(gz[i] ^ 0x5a);
  test::spit(dir / "bad.json.gz", gz);
  try {
    (void)read_trace(dir / "bad.json.gz");
    FAIL() << "a corrupt member read without error";
  } catch (const InputError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find((dir / "bad.json.gz").string()), std::string::npos) << m;
    // Either zlib sees the damage (the compressed offset) or the JSON reader sees garbage
    // (the decompressed offset): both name where.
    EXPECT_TRUE(m.find("compressed byte") != std::string::npos) << m;
  }
}

}  // namespace
}  // namespace syncscope
