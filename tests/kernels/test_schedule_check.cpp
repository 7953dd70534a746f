// The schedule checker on hand-built programs: each ordering mechanism CUDA offers (stream
// order, events, host syncs, blocking copies, the legacy default stream's implicit sync)
// makes a hazard go away, and its absence makes it show.
#include <gtest/gtest.h>

#include "syncscope/core/error.hpp"
#include "syncscope/program/program.hpp"

namespace syncscope::program {
namespace {

using K = BufferViolation::Kind;

Op kernel(int stream, int buffer, Access access) {
  Op op;
  op.kind = OpKind::Kernel;
  op.name = access == Access::Read ? "reader" : "writer";
  op.stream = stream;
  op.buffer = buffer;
  op.access = access;
  return op;
}
Op ev(OpKind kind, int stream, int event) {
  Op op;
  op.kind = kind;
  op.stream = stream;
  op.event = event;
  return op;
}
Op sync(OpKind kind, int stream = 0) {
  Op op;
  op.kind = kind;
  op.stream = stream;
  return op;
}

Program two_streams(bool second_non_blocking = true) {
  Program p;
  p.streams = {{"main", false}, {"copy", second_non_blocking}};
  p.num_events = 2;
  p.num_buffers = 1;
  p.buffer_names = {"buf"};
  return p;
}

TEST(ScheduleChecker, SameStreamIsOrdered) {
  Program p = two_streams();
  p.ops = {kernel(0, 0, Access::Write), kernel(0, 0, Access::Read), kernel(0, 0, Access::Write)};
  EXPECT_TRUE(check_buffer_safety(p).empty());
}

TEST(ScheduleChecker, OtherStreamNeedsAnEvent) {
  Program p = two_streams();
  p.ops = {kernel(0, 0, Access::Write), kernel(1, 0, Access::Read)};
  auto v = check_buffer_safety(p);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].kind, K::ReadAfterWrite);
  EXPECT_EQ(v[0].earlier, 0);
  EXPECT_EQ(v[0].later, 1);
  EXPECT_NE(v[0].message.find("\"buf\""), std::string::npos);

  p.ops = {kernel(0, 0, Access::Write), ev(OpKind::EventRecord, 0, 0), ev(OpKind::StreamWait, 1, 0),
           kernel(1, 0, Access::Read)};
  EXPECT_TRUE(check_buffer_safety(p).empty());
}

TEST(ScheduleChecker, WaitSeesOnlyTheRecordIssuedBeforeIt) {
  Program p = two_streams();
  // The wait is issued before the record that follows the write: it orders nothing.
  p.ops = {ev(OpKind::EventRecord, 0, 0), ev(OpKind::StreamWait, 1, 0), kernel(0, 0, Access::Write),
           ev(OpKind::EventRecord, 0, 0), kernel(1, 0, Access::Read)};
  auto v = check_buffer_safety(p);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].kind, K::ReadAfterWrite);
  // Waiting on an event never recorded is a no-op.
  p.ops = {kernel(0, 0, Access::Write), ev(OpKind::StreamWait, 1, 1), kernel(1, 0, Access::Read)};
  EXPECT_EQ(check_buffer_safety(p).size(), 1u);
}

TEST(ScheduleChecker, WriteAfterReadNeedsTheReaderFinished) {
  Program p = two_streams();
  p.ops = {kernel(1, 0, Access::Read), kernel(0, 0, Access::Write)};
  auto v = check_buffer_safety(p);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].kind, K::WriteAfterRead);
  // Host syncs order it: stream sync, event sync, device sync.
  for (const Op& s : {sync(OpKind::StreamSync, 1), sync(OpKind::DeviceSync)}) {
    p.ops = {kernel(1, 0, Access::Read), s, kernel(0, 0, Access::Write)};
    EXPECT_TRUE(check_buffer_safety(p).empty()) << op_kind_name(s.kind);
  }
  p.ops = {kernel(1, 0, Access::Read), ev(OpKind::EventRecord, 1, 0), ev(OpKind::EventSync, 0, 0),
           kernel(0, 0, Access::Write)};
  EXPECT_TRUE(check_buffer_safety(p).empty());
  // Syncing the wrong stream does not.
  p.ops = {kernel(1, 0, Access::Read), sync(OpKind::StreamSync, 0), kernel(0, 0, Access::Write)};
  EXPECT_EQ(check_buffer_safety(p).size(), 1u);
}

TEST(ScheduleChecker, PageableDeviceToHostCopyBlocksTheHost) {
  Program p = two_streams();
  Op copy;
  copy.kind = OpKind::Copy;
  copy.stream = 0;
  copy.copy = CopyKind::DtoH;
  copy.host_memory = MemoryKind::Pageable;
  copy.buffer = 0;
  copy.access = Access::Read;
  p.ops = {copy, kernel(1, 0, Access::Write)};
  EXPECT_TRUE(check_buffer_safety(p).empty());
  p.ops[0].host_memory = MemoryKind::Pinned;  // async: returns before the copy is done
  EXPECT_EQ(check_buffer_safety(p).size(), 1u);
}

TEST(ScheduleChecker, LegacyDefaultStreamSyncsWithBlockingStreams) {
  // The trap from docs/sources.md#cuda-streams: a side stream created without cudaStreamNonBlocking is ordered
  // against the legacy default stream (safe here, but no overlap).
  Program p = two_streams(/*second_non_blocking=*/false);
  p.ops = {kernel(1, 0, Access::Read), kernel(0, 0, Access::Write)};
  EXPECT_TRUE(check_buffer_safety(p).empty());
  p.ops = {kernel(0, 0, Access::Write), kernel(1, 0, Access::Read)};
  EXPECT_TRUE(check_buffer_safety(p).empty());
  p = two_streams(/*second_non_blocking=*/true);
  p.ops = {kernel(1, 0, Access::Read), kernel(0, 0, Access::Write)};
  EXPECT_EQ(check_buffer_safety(p).size(), 1u);
}

TEST(ScheduleChecker, OrderingIsTransitive) {
  // copy reads; main waits for it via event A; a third stream waits for main via event B
  // and writes: safe, through two hops.
  Program p;
  p.streams = {{"main", false}, {"copy", true}, {"third", true}};
  p.num_events = 2;
  p.num_buffers = 1;
  p.ops = {kernel(1, 0, Access::Read),    ev(OpKind::EventRecord, 1, 0), ev(OpKind::StreamWait, 0, 0),
           ev(OpKind::EventRecord, 0, 1), ev(OpKind::StreamWait, 2, 1),  kernel(2, 0, Access::Write)};
  EXPECT_TRUE(check_buffer_safety(p).empty());
  p.ops.erase(p.ops.begin() + 2);  // main no longer waits for the copy
  EXPECT_EQ(check_buffer_safety(p).size(), 1u);
}

TEST(ScheduleChecker, MoreBuffersAndAllocatorHandBack) {
  Program p = two_streams();
  p.num_buffers = 2;
  Op copy;
  copy.kind = OpKind::Copy;
  copy.stream = 1;
  copy.copy = CopyKind::HtoD;
  copy.host_memory = MemoryKind::Pinned;
  copy.buffer = 1;  // reads the host slot
  copy.access = Access::Read;
  copy.more_buffers = {{0, Access::Write}};
  Op release;
  release.kind = OpKind::HostWork;
  release.stream = 1;
  release.buffer = 1;
  release.access = Access::Write;
  // The hand-back of buffer 1 is queued on the copy stream after the copy: ordered.
  p.ops = {copy, release, kernel(0, 0, Access::Read)};
  auto v = check_buffer_safety(p);
  ASSERT_EQ(v.size(), 1u);  // but main reads buffer 0 without waiting for the copy
  EXPECT_EQ(v[0].buffer, 0);
  EXPECT_EQ(v[0].kind, K::ReadAfterWrite);
  release.stream = 0;  // handed to main's allocator without an event: a hazard on buffer 1
  p.ops = {copy, release};
  v = check_buffer_safety(p);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].buffer, 1);
  EXPECT_EQ(v[0].kind, K::WriteAfterRead);
}

TEST(ScheduleChecker, RejectsMalformedPrograms) {
  Program p = two_streams();
  p.ops = {kernel(5, 0, Access::Read)};
  EXPECT_THROW(check_buffer_safety(p), Error);
  p.ops = {ev(OpKind::EventRecord, 0, 9)};
  EXPECT_THROW(check_buffer_safety(p), Error);
  p.ops = {kernel(0, 3, Access::Read)};
  EXPECT_THROW(check_buffer_safety(p), Error);
  Op pop;
  pop.kind = OpKind::RangePop;
  p.ops = {pop};
  EXPECT_THROW(check_buffer_safety(p), Error);
  Program empty;
  empty.streams.clear();
  EXPECT_THROW(check_buffer_safety(empty), Error);
}

}  // namespace
}  // namespace syncscope::program
