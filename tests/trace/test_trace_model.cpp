#include <gtest/gtest.h>

#include <memory>

#include "syncscope/trace/trace.hpp"

using namespace syncscope;

TEST(StringTable, InternsOnceAndKeepsIdZeroEmpty) {
  StringTable t;
  EXPECT_EQ(t.get(kNoString), "");
  auto a = t.intern("cudaStreamSynchronize");
  EXPECT_EQ(t.intern("cudaStreamSynchronize"), a);
  EXPECT_NE(t.intern("cudaLaunchKernel"), a);
  EXPECT_EQ(t.size(), 3u);
  EXPECT_EQ(t.find("cudaLaunchKernel").value(), a + 1);
  EXPECT_FALSE(t.find("nope").has_value());
}

TEST(StringTable, CopyOutlivesItsSource) {
  // The index holds views into the table's own storage: a copy must rebuild it, or lookups
  // in the copy read the source's (freed) strings.
  auto src = std::make_unique<StringTable>();
  for (int i = 0; i < 100; ++i) src->intern("kernel_" + std::to_string(i));
  StringTable copy = *src;
  StringTable assigned;
  assigned = *src;
  src.reset();
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(copy.find("kernel_" + std::to_string(i)).value(), static_cast<StringId>(i + 1));
    EXPECT_EQ(assigned.intern("kernel_" + std::to_string(i)), static_cast<StringId>(i + 1));
  }
  EXPECT_EQ(copy.size(), 101u);
}

TEST(Trace, FinalizeSortsAndComputesNesting) {
  Trace t;
  auto range = [&](const char* name, Ns s, Ns e, std::int64_t tid) {
    Range r;
    r.kind = RangeKind::UserAnnotation;
    r.name = t.intern(name);
    r.pid = 1;
    r.tid = tid;
    r.start = s;
    r.end = e;
    t.ranges.push_back(r);
  };
  range("layer_01", 50, 90, 7);
  range("step", 0, 100, 7);
  range("layer_00", 10, 50, 7);  // touches layer_01: siblings, not nested
  range("other_thread", 20, 30, 8);
  range("same_start_child", 0, 5, 7);
  t.finalize();
  ASSERT_EQ(t.ranges.size(), 5u);
  EXPECT_EQ(t.str(t.ranges[0].name), "step");  // longer first on equal start
  EXPECT_EQ(t.ranges[0].depth, 0);
  EXPECT_EQ(t.str(t.ranges[1].name), "same_start_child");
  EXPECT_EQ(t.ranges[1].depth, 1);
  for (const auto& r : t.ranges) {
    if (t.str(r.name) == "layer_00" || t.str(r.name) == "layer_01") {
      EXPECT_EQ(r.depth, 1);
    }
    if (t.str(r.name) == "other_thread") {
      EXPECT_EQ(r.depth, 0);
    }
  }
  auto [lo, hi] = t.time_span();
  EXPECT_EQ(lo, 0);
  EXPECT_EQ(hi, 100);
}

TEST(Trace, EnumSpellingsRoundTrip) {
  for (int i = 0; i <= 5; ++i)
    EXPECT_EQ(parse_copy_kind(kind_name(static_cast<CopyKind>(i))).value(), static_cast<CopyKind>(i));
  for (int i = 0; i <= 4; ++i)
    EXPECT_EQ(parse_sync_type(kind_name(static_cast<SyncType>(i))).value(), static_cast<SyncType>(i));
  for (int i = 0; i <= 5; ++i)
    EXPECT_EQ(parse_range_kind(kind_name(static_cast<RangeKind>(i))).value(), static_cast<RangeKind>(i));
  EXPECT_FALSE(parse_memory_kind("bogus").has_value());
  EXPECT_EQ(kind_name(MemoryKind::Pageable), "pageable");
}
