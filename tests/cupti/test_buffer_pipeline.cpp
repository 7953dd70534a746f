// The buffer hand-off between CUPTI's threads and the decoder, driven from several threads
// the way CUPTI drives it (request from any thread, complete from its worker or a flushing
// thread). No CUPTI call: run under ThreadSanitizer with the `tsan` preset.
//
// Fake "records": a buffer's first 8 bytes hold how many records it carries, so the
// decode and count functions can check that every record reaches exactly one of them.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <set>
#include <thread>
#include <vector>

#include "buffer_pipeline.hpp"

namespace syncscope::cupti_detail {
namespace {

std::uint64_t records_in(const std::uint8_t* data, std::size_t valid) {
  if (valid < 8) return 0;
  std::uint64_t n = 0;
  std::memcpy(&n, data, 8);
  return n;
}

void fill(std::uint8_t* data, std::uint64_t n) { std::memcpy(data, &n, 8); }

struct Sink {
  // Touched only by the decoder thread, read after drain(): no lock, TSan checks the claim.
  std::uint64_t decoded = 0;
  std::uint64_t buffers = 0;
};

PipelineOptions small(std::size_t buffers_in_cap, std::size_t reserve) {
  PipelineOptions o;
  o.buffer_bytes = 4096;
  o.cap_bytes = buffers_in_cap * 4096;
  o.reserve_buffers = reserve;
  return o;
}

TEST(BufferPipeline, HandsOutAlignedBuffersAndDecodesCompletedOnes) {
  Sink sink;
  BufferPipeline p(
      small(4, 1),
      [&](const std::uint8_t* d, std::size_t v) {
        ++sink.buffers;
        sink.decoded += records_in(d, v);
        return records_in(d, v);
      },
      records_in);
  std::uint8_t* buf = nullptr;
  std::size_t size = 0;
  p.request(&buf, &size);
  ASSERT_NE(buf, nullptr);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(buf) % 8, 0u);
  EXPECT_EQ(size, 4096u);
  fill(buf, 3);
  p.complete(buf, 16);
  p.drain();
  EXPECT_EQ(sink.decoded, 3u);
  EXPECT_EQ(sink.buffers, 1u);
  // The decoded buffer is reused rather than a new one allocated.
  std::uint8_t* again = nullptr;
  p.request(&again, &size);
  EXPECT_EQ(again, buf);
  p.complete(again, 0);  // an empty buffer is recycled without decoding
  p.drain();
  const PipelineStats s = p.stats();
  EXPECT_EQ(s.buffers_requested, 2u);
  EXPECT_EQ(s.buffers_completed, 2u);
  EXPECT_EQ(s.records_decoded, 3u);
  EXPECT_EQ(sink.buffers, 1u);
  EXPECT_EQ(s.buffers_allocated, 2u);  // one pool buffer + the reserve
}

TEST(BufferPipeline, SizesAreRoundedToEightBytes) {
  PipelineOptions o;
  o.buffer_bytes = 1001;
  o.cap_bytes = 1 << 20;
  o.reserve_buffers = 0;
  BufferPipeline p(o, records_in, records_in);
  std::uint8_t* buf = nullptr;
  std::size_t size = 0;
  p.request(&buf, &size);
  EXPECT_EQ(size, 1008u);
  p.complete(buf, 0);
}

TEST(BufferPipeline, PastTheCapBuffersComeFromTheReserveThenAnywayAndAreCounted) {
  Sink sink;
  BufferPipeline p(
      small(2, 1),
      [&](const std::uint8_t* d, std::size_t v) {
        sink.decoded += records_in(d, v);
        return records_in(d, v);
      },
      records_in);
  std::vector<std::uint8_t*> held(4, nullptr);
  std::size_t size = 0;
  for (auto& b : held) {
    p.request(&b, &size);
    ASSERT_NE(b, nullptr) << "never a null buffer: CUPTI before 12.9 crashes on one";
  }
  EXPECT_EQ(std::set<std::uint8_t*>(held.begin(), held.end()).size(), 4u);
  PipelineStats s = p.stats();
  EXPECT_EQ(s.over_cap_handouts, 2u);  // the reserve, then one allocated past the cap
  for (std::size_t i = 0; i < held.size(); ++i) {
    fill(held[i], 10 + i);
    p.complete(held[i], 64);
  }
  p.drain();
  s = p.stats();
  EXPECT_EQ(sink.decoded, 10u + 11u);   // the two buffers within the cap
  EXPECT_EQ(s.lost_to_cap, 12u + 13u);  // counted, not decoded
  EXPECT_EQ(s.records_decoded, 21u);
  EXPECT_EQ(s.peak_bytes, 4u * 4096u);
  // The reserve is back for the next overflow; the past-cap buffer was freed.
  std::uint8_t* a = nullptr;
  std::uint8_t* b = nullptr;
  std::uint8_t* c = nullptr;
  p.request(&a, &size);
  p.request(&b, &size);
  p.request(&c, &size);
  EXPECT_EQ(p.stats().buffers_allocated, 4u);
  p.complete(a, 0);
  p.complete(b, 0);
  p.complete(c, 0);
  p.drain();
}

TEST(BufferPipeline, RecordByteLimitCountsTheRestAsLost) {
  PipelineOptions o = small(8, 0);
  o.max_record_bytes = 100;
  BufferPipeline p(o, records_in, records_in);
  std::size_t size = 0;
  for (int i = 0; i < 3; ++i) {
    std::uint8_t* b = nullptr;
    p.request(&b, &size);
    fill(b, 5);
    p.complete(b, 64);  // 64 + 64 > 100: the second and third are over the limit
    p.drain();
  }
  const PipelineStats s = p.stats();
  EXPECT_EQ(s.records_decoded, 5u);
  EXPECT_EQ(s.lost_to_cap, 10u);
  EXPECT_EQ(s.bytes_decoded, 64u);
}

TEST(BufferPipeline, UnknownBuffersAreIgnored) {
  BufferPipeline p(small(2, 0), records_in, records_in);
  alignas(8) std::uint8_t foreign[64] = {};
  fill(foreign, 99);
  p.complete(foreign, 64);
  p.drain();
  EXPECT_EQ(p.stats().unknown_buffers, 1u);
  EXPECT_EQ(p.stats().records_decoded, 0u);
}

TEST(BufferPipeline, ResetSessionSwitchesTheDecoder) {
  Sink first, second;
  BufferPipeline p(
      small(4, 0),
      [&](const std::uint8_t* d, std::size_t v) {
        first.decoded += records_in(d, v);
        return records_in(d, v);
      },
      records_in);
  std::uint8_t* b = nullptr;
  std::size_t size = 0;
  p.request(&b, &size);
  fill(b, 4);
  p.complete(b, 8);
  p.reset_session(
      [&](const std::uint8_t* d, std::size_t v) {
        second.decoded += records_in(d, v);
        return records_in(d, v);
      },
      0);
  EXPECT_EQ(first.decoded, 4u) << "reset_session waits for what was queued before it";
  EXPECT_EQ(p.stats().records_decoded, 0u);
  p.request(&b, &size);
  fill(b, 6);
  p.complete(b, 8);
  p.drain();
  EXPECT_EQ(second.decoded, 6u);
  EXPECT_EQ(first.decoded, 4u);
}

TEST(BufferPipeline, OutstandingBuffersAreFreedWithThePipeline) {
  // Under ASan this would report a leak if buffers CUPTI still held were forgotten.
  auto p = std::make_unique<BufferPipeline>(small(4, 1), records_in, records_in);
  std::uint8_t* b = nullptr;
  std::size_t size = 0;
  p->request(&b, &size);
  p->trim();
  p.reset();
  SUCCEED();
}

// CUPTI's side from several threads at once: request, fill, complete, with drains and
// stats reads from yet another thread. Every record must be decoded or counted once.
TEST(BufferPipeline, ConcurrentRequestCompleteAndDecode) {
  constexpr int kThreads = 4;
  constexpr int kRounds = 300;
  Sink sink;
  std::atomic<std::uint64_t> produced{0};
  BufferPipeline p(
      small(6, 2),
      [&](const std::uint8_t* d, std::size_t v) {
        ++sink.buffers;
        sink.decoded += records_in(d, v);
        return records_in(d, v);
      },
      records_in);
  std::atomic<bool> done{false};
  std::thread watcher([&] {
    while (!done.load()) {
      (void)p.stats();
      p.drain();
      std::this_thread::yield();
    }
  });
  std::vector<std::thread> producers;
  for (int t = 0; t < kThreads; ++t) {
    producers.emplace_back([&, t] {
      std::vector<std::uint8_t*> mine;
      for (int r = 0; r < kRounds; ++r) {
        std::uint8_t* b = nullptr;
        std::size_t size = 0;
        p.request(&b, &size);
        ASSERT_NE(b, nullptr);
        const std::uint64_t n = 1 + static_cast<std::uint64_t>((t * 7 + r) % 5);
        fill(b, n);
        b[size - 1] = static_cast<std::uint8_t>(r);  // CUPTI writes the whole buffer
        produced += n;
        mine.push_back(b);
        // Hold a few buffers at once, like CUPTI's per-thread buffers, then hand them back.
        if (mine.size() == 3 || r == kRounds - 1) {
          for (auto* m : mine) p.complete(m, 64);
          mine.clear();
        }
      }
    });
  }
  for (auto& th : producers) th.join();
  p.drain();
  done = true;
  watcher.join();
  const PipelineStats s = p.stats();
  EXPECT_EQ(s.buffers_requested, static_cast<std::uint64_t>(kThreads * kRounds));
  EXPECT_EQ(s.buffers_completed, s.buffers_requested);
  EXPECT_EQ(s.buffers_decoded, s.buffers_requested);
  EXPECT_EQ(sink.decoded, s.records_decoded);
  EXPECT_EQ(s.records_decoded + s.lost_to_cap, produced.load());
  // Allocations: at most the cap's 6 pool buffers and the 2 reserve ones, plus one per
  // hand-out past the cap (made only while the decoder lagged behind).
  EXPECT_LE(s.buffers_allocated, 6u + 2u + s.over_cap_handouts);
  EXPECT_EQ(s.unknown_buffers, 0u);
}

}  // namespace
}  // namespace syncscope::cupti_detail
