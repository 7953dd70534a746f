// Session (cupti_session.cpp) on a fake CUPTI (fake_cupti.hpp): which kinds and callback ids
// it asks for, how it hands out buffers when none can be allocated, what it counts as lost,
// where the GPU's name comes from, and that close() holds no lock across CUPTI's flush.
// Buffers are filled with synthetic records, which the real cuptiActivityGetNextRecord
// iterates without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <future>
#include <thread>

#include "activity_decoder.hpp"
#include "cupti_session.hpp"
#include "fake_cupti.hpp"

namespace syncscope::cupti_detail {
namespace {

using test::FakeCupti;
using test::RecordWriter;
using test::zeroed_record;
using namespace std::chrono_literals;

KernelRecord kernel_on(std::int32_t device, std::uint32_t corr, std::uint64_t start, std::uint64_t end) {
  auto k = zeroed_record<KernelRecord>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  k.name = "k";
  k.deviceId = static_cast<std::uint32_t>(device);
  k.contextId = 1;
  k.streamId = 7;
  k.correlationId = corr;
  k.start = start;
  k.end = end;
  return k;
}

SessionConfig small_config() {
  SessionConfig c;
  c.pipeline.buffer_bytes = 64 * 1024;
  c.pipeline.cap_bytes = 1 << 20;
  return c;
}

// A configuration whose pool cannot allocate a single buffer (the request path's
// allocation failure, without exhausting memory): no reserve, an impossible buffer size.
SessionConfig unallocatable_config() {
  SessionConfig c;
  c.pipeline.buffer_bytes = std::size_t{1} << 62;
  c.pipeline.cap_bytes = std::size_t{1} << 62;
  c.pipeline.reserve_buffers = 0;
  return c;
}

TEST(CuptiSession, OneRefusedDriverCallbackIdLeavesTheOthersTraced) {
  FakeCupti fake;
  // The first id of the list is refused; the synchronizing ones come later in it.
  const auto& ids = traced_driver_cbids();
  ASSERT_GT(ids.size(), 10u);
  fake.refused_driver_cbids = {ids.front()};
  Session session(fake);
  ASSERT_TRUE(session.open(small_config()).ok());
  ASSERT_TRUE(session.enable().ok());
  std::set<CUpti_CallbackId> asked_on;
  for (const auto& [cbid, on] : fake.driver_calls)
    if (on) asked_on.insert(cbid);
  for (auto cbid : ids) EXPECT_TRUE(asked_on.count(cbid)) << "driver cbid " << cbid << " never enabled";
  EXPECT_TRUE(asked_on.count(CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize));
  EXPECT_TRUE(asked_on.count(CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize_v2));
  const auto warnings = session.warnings();
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("refused 1 of"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find(std::to_string(ids.front())), std::string::npos) << warnings[0];
  Trace t = session.close(nullptr);
  EXPECT_EQ(t.meta.extra.at("warning_0"), warnings[0]);
}

TEST(CuptiSession, DriverMemsetCallsAreTracedSoMemsetCorrelationsResolve) {
  const auto& ids = traced_driver_cbids();
  for (auto cbid : {CUPTI_DRIVER_TRACE_CBID_cuMemsetD8Async, CUPTI_DRIVER_TRACE_CBID_cuMemsetD32Async,
                    CUPTI_DRIVER_TRACE_CBID_cuMemsetD8Async_ptsz, CUPTI_DRIVER_TRACE_CBID_cuMemsetD32_v2,
                    CUPTI_DRIVER_TRACE_CBID_cuMemsetD2D8Async})
    EXPECT_NE(std::find(ids.begin(), ids.end(), cbid), ids.end()) << "memset driver cbid " << cbid << " untraced";
}

TEST(CuptiSession, Cupti13DeclinesARequestItCannotServeAndCountsIt) {
  FakeCupti fake;
  fake.api_version = 130001;
  fake.dropped_per_query = 0;
  Session session(fake);
  ASSERT_TRUE(session.open(unallocatable_config()).ok());
  std::size_t size = 1;
  std::uint8_t* b = fake.request(&size);
  EXPECT_EQ(b, nullptr) << "CUPTI >= 13 takes a null buffer and counts the records it drops";
  EXPECT_EQ(size, 0u);
  // CUPTI reports what it dropped meanwhile.
  fake.dropped_per_query = 5;
  Trace t = session.close(nullptr);
  EXPECT_EQ(t.meta.extra.at("buffer_requests_declined"), "1");
  EXPECT_GE(t.meta.dropped_records, 5u);
}

TEST(CuptiSession, OlderCuptiGetsTheEmergencyBufferOnceAtATimeAndItsRecordsAreCounted) {
  FakeCupti fake;
  fake.api_version = 18;  // a CUPTI before 12.9 crashes on a null buffer
  Session session(fake);
  ASSERT_TRUE(session.open(unallocatable_config()).ok());
  ASSERT_TRUE(session.enable().ok());
  std::size_t size1 = 0, size2 = 0;
  std::uint8_t* first = fake.request(&size1);
  ASSERT_NE(first, nullptr);
  ASSERT_GE(size1, 3 * sizeof(KernelRecord));
  // While CUPTI holds it, the emergency buffer is never handed out again.
  std::uint8_t* second = fake.request(&size2);
  EXPECT_EQ(second, nullptr);
  RecordWriter w(first, size1);
  for (std::uint32_t i = 0; i < 3; ++i) w.add(kernel_on(0, 10 + i, 100 + i, 200 + i));
  fake.complete(first, w.valid());
  // Back from CUPTI: free for the next request.
  std::size_t size3 = 0;
  std::uint8_t* third = fake.request(&size3);
  EXPECT_EQ(third, first);
  fake.complete(third, 0);
  Trace t = session.close(nullptr);
  EXPECT_TRUE(t.kernels.empty()) << "the emergency buffer is counted, never decoded";
  EXPECT_EQ(t.meta.extra.at("records_lost_in_emergency_buffer"), "3");
  EXPECT_EQ(t.meta.extra.at("buffer_requests_declined"), "1");
  EXPECT_EQ(t.meta.dropped_records, 3u);
}

TEST(CuptiSession, GpuNameFromTheDriverWhenNoDeviceRecordCame) {
  FakeCupti fake;
  DeviceProperties h200;
  h200.name = "NVIDIA H200";
  h200.compute_major = 9;
  h200.sm_count = 132;
  fake.devices[0] = h200;
  Session session(fake);
  ASSERT_TRUE(session.open(small_config()).ok());
  ASSERT_TRUE(session.enable().ok());
  std::size_t size = 0;
  std::uint8_t* b = fake.request(&size);
  ASSERT_NE(b, nullptr);
  RecordWriter w(b, size);
  w.add(kernel_on(0, 1, 100, 200));
  w.add(kernel_on(3, 2, 300, 400));  // a device the driver does not know
  fake.complete(b, w.valid());
  Trace t = session.close(nullptr);
  ASSERT_EQ(t.devices.size(), 1u);
  EXPECT_EQ(t.devices[0].id, 0);
  EXPECT_EQ(t.devices[0].name, "NVIDIA H200");
  EXPECT_EQ(t.devices[0].compute_major, 9);
  EXPECT_EQ(t.devices[0].sm_count, 132);
  EXPECT_EQ(t.meta.extra.at("device_names_from_driver"), "0");
  EXPECT_EQ(t.meta.extra.at("devices_without_name"), "3");
}

TEST(CuptiSession, DeviceRecordNamesAreKeptAndTheDriverNotAsked) {
  FakeCupti fake;
  DeviceProperties other;
  other.name = "not this one";
  fake.devices[0] = other;
  Session session(fake);
  ASSERT_TRUE(session.open(small_config()).ok());
  ASSERT_TRUE(session.enable().ok());
  std::size_t size = 0;
  std::uint8_t* b = fake.request(&size);
  ASSERT_NE(b, nullptr);
  RecordWriter w(b, size);
  auto d = zeroed_record<DeviceRecord>(CUPTI_ACTIVITY_KIND_DEVICE);
  d.id = 0;
  d.name = "NVIDIA H200";
  w.add(d);
  w.add(kernel_on(0, 1, 100, 200));
  fake.complete(b, w.valid());
  Trace t = session.close(nullptr);
  ASSERT_EQ(t.devices.size(), 1u);
  EXPECT_EQ(t.devices[0].name, "NVIDIA H200");
  EXPECT_EQ(fake.device_queries, 0);
  EXPECT_EQ(t.meta.extra.at("device_names_from"), "cupti_device_records");
}

TEST(CuptiSession, CloseHoldsNoLockAcrossTheFlush) {
  FakeCupti fake;
  Session session(fake);
  ASSERT_TRUE(session.open(small_config()).ok());
  ASSERT_TRUE(session.enable().ok());
  fake.hold_flushes();
  auto closing = std::async(std::launch::async, [&] { return session.close(nullptr); });
  ASSERT_TRUE(fake.wait_until_flush_entered(5s));
  // Meanwhile, application threads in CUPTI callbacks and CUPTI itself handing buffers
  // back: none of this may wait for the flush.
  auto meanwhile = std::async(std::launch::async, [&] {
    session.note_context(reinterpret_cast<CUcontext>(0x1234));
    (void)session.warnings();
    (void)session.enabled();
    std::size_t size = 0;
    std::uint8_t* b = fake.request(&size);
    RecordWriter w(b, size);
    w.add(kernel_on(0, 1, 100, 200));
    fake.complete(b, w.valid());
    return true;
  });
  const bool returned = meanwhile.wait_for(3s) == std::future_status::ready;
  fake.release_flushes();
  EXPECT_TRUE(returned) << "a callback-side call waited for the flush in close()";
  Trace t = closing.get();
  EXPECT_TRUE(meanwhile.get());
  EXPECT_EQ(t.kernels.size(), 1u) << "the buffer CUPTI completed during the flush is decoded";
  EXPECT_FALSE(session.is_open());
}

}  // namespace
}  // namespace syncscope::cupti_detail
