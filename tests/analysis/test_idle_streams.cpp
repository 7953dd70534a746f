// A stream's sync bubble only where the whole device was idle behind that sync
// (profiler/analysis/include/syncscope/analysis/idle.hpp, docs/analysis.md): on a hand-built trace
// with two streams, one sync, and one stream still busy while the other waits.
#include <gtest/gtest.h>

#include "idle_checks.hpp"
#include "syncscope/analysis/analysis.hpp"
#include "trace_builder.hpp"

namespace syncscope {
namespace {

using test::TraceBuilder;

using test::stream_idle;
using test::sum;

TEST(IdleStreams, AStreamsSyncBubbleIsOnlyWhereTheDeviceWasIdleBehindTheSync) {
  // Stream 7: kernel A [0,10) launched at 0, kernel C [50,60) launched at 32. Stream 8:
  // kernel B [5,20) launched at 1, kernel D [52,60) launched at 33. The host blocks in
  // cudaStreamSynchronize [3,30) inside aten::item [2,31) and launches C and D after it
  // returned at 30.
  // Device: busy [0,20) and [50,60); its gap [20,50) is ended by C (launched at 32, after the
  // return at 30): sync bubble 30, cause aten::item.
  // Stream 7's gap [10,50): stream 8 ran [10,20) (dependency wait 10: the device worked
  // elsewhere); the device was idle behind the sync [20,50): sync bubble 30. Counting the
  // whole gap as a sync bubble (40) would exceed the device's 30.
  // Stream 8's gap [20,52): sync bubble [20,50) = 30; C ran [50,52): dependency wait 2.
  TraceBuilder b;
  b.api("cudaLaunchKernel", 0, 1, 1);
  b.kernel(0, 7, 0, 10, 1);
  b.api("cudaLaunchKernel", 1, 2, 2);
  b.kernel(0, 8, 5, 20, 2);
  b.cpu_op("aten::item", 2, 31);
  b.api("cudaStreamSynchronize", 3, 30, 3);
  b.api("cudaLaunchKernel", 32, 33, 4);
  b.kernel(0, 7, 50, 60, 4);
  b.api("cudaLaunchKernel", 33, 34, 5);
  b.kernel(0, 8, 52, 60, 5);
  const auto r = analyze(b.done());
  ASSERT_EQ(r.idle_by_device.size(), 1u);
  const auto& dev = r.idle_by_device[0].idle;
  EXPECT_EQ(dev.window_ns, 60);
  EXPECT_EQ(dev.busy_ns, 30);
  EXPECT_EQ(dev.sync_bubble_ns, 30);
  EXPECT_EQ(dev.sync_bubble_by_cause.at("aten::item"), 30);

  const auto& s7 = stream_idle(r, 7).idle;
  EXPECT_EQ(s7.window_ns, 60);
  EXPECT_EQ(s7.busy_ns, 20);
  EXPECT_EQ(s7.sync_bubble_ns, 30);
  EXPECT_EQ(s7.dependency_wait_ns, 10);
  EXPECT_EQ(s7.host_wait_ns + s7.other_ns, 0);
  EXPECT_EQ(s7.sync_bubble_by_cause.at("aten::item"), 30);
  EXPECT_EQ(sum(s7), s7.window_ns);

  const auto& s8 = stream_idle(r, 8).idle;
  EXPECT_EQ(s8.window_ns, 55);
  EXPECT_EQ(s8.busy_ns, 23);
  EXPECT_EQ(s8.sync_bubble_ns, 30);
  EXPECT_EQ(s8.dependency_wait_ns, 2);
  EXPECT_EQ(s8.host_wait_ns + s8.other_ns, 0);
  EXPECT_EQ(sum(s8), s8.window_ns);

  for (const auto& s : r.idle_by_stream) EXPECT_LE(s.idle.sync_bubble_ns, dev.sync_bubble_ns) << s.stream;
}

TEST(IdleStreams, AStreamGapWhereTheDeviceWasIdleButNotBehindTheSyncKeepsTheDevicesClass) {
  // One stream: kernel A [0,10) launched at 0; the host syncs [2,12) and returns at 12; kernel
  // B launched at 1 (queued before the sync) runs [11,12) on stream 8; kernel C launched at
  // 20 runs [25,30) on stream 7.
  // Device: busy [0,10), [11,12), [25,30). Gap [10,11) ended by B (launched at 1, before the
  // return): not the sync's; B had been issued and nothing else ran: other 1. Gap [12,25)
  // ended by C (launched at 20 after the return at 12): sync bubble 13.
  // Stream 7's gap [10,25): the sync returned in it before C's launch, so it is split by the
  // device: [10,11) device idle, other (1); [11,12) stream 8 ran: dependency wait (1);
  // [12,25) the device's sync bubble (13).
  TraceBuilder b;
  b.api("cudaLaunchKernel", 0, 1, 1);
  b.kernel(0, 7, 0, 10, 1);
  b.api("cudaLaunchKernel", 1, 2, 2);
  b.kernel(0, 8, 11, 12, 2);
  b.api("cudaStreamSynchronize", 2, 12, 3);
  b.api("cudaLaunchKernel", 20, 21, 4);
  b.kernel(0, 7, 25, 30, 4);
  const auto r = analyze(b.done());
  const auto& dev = r.idle_by_device.at(0).idle;
  EXPECT_EQ(dev.sync_bubble_ns, 13);
  EXPECT_EQ(dev.other_ns, 1);
  const auto& s7 = stream_idle(r, 7).idle;
  EXPECT_EQ(s7.sync_bubble_ns, 13);
  EXPECT_EQ(s7.dependency_wait_ns, 1);
  EXPECT_EQ(s7.other_ns, 1);
  EXPECT_EQ(s7.host_wait_ns, 0);
  EXPECT_EQ(sum(s7), s7.window_ns);
}

}  // namespace
}  // namespace syncscope
